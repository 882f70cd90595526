-- The queued URLs of some hosts counted by score bucket (RedisFrontier.queued_by_score), for
-- the estimate of what is left to find; reads only. ARGV[2]: the lowest score level of each
-- bucket, best bucket first, and SCORE_LEVELS + 1 last (records.bucket_levels), space-separated;
-- ARGV[3] on: the hosts. Returns SCORE_BUCKETS counts per host, worst bucket first.
-- A short queue is read whole (one call); a long one is counted per bucket (ZCOUNT, its URLs
-- of a first try) and its retried URLs, read up to SAMPLED of them, stand for all of them.
local frontier, vanished = open_frontier(KEYS, ARGV)
if not frontier then return vanished end
local SHORT, SAMPLED = 64, 128
local lows = {}
for level in string.gmatch(ARGV[2], '%d+') do lows[#lows + 1] = tonumber(level) end

local function tally(counts, entries, weight)
  for i = 2, #entries, 2 do
    local b = score_bucket(tonumber(entries[i])) + 1
    counts[b] = counts[b] + weight
  end
end

local out = {}
for i = 3, #ARGV do
  local queue = host_queue_key(frontier, ARGV[i])
  local counts = {}
  for b = 1, SCORE_BUCKETS do counts[b] = 0 end
  local size = redis.call('ZCARD', queue)
  if size <= SHORT then
    tally(counts, redis.call('ZRANGE', queue, 0, -1, 'WITHSCORES'), 1)
  else
    for n = 1, SCORE_BUCKETS do  -- lows[n] opens bucket SCORE_BUCKETS - n
      local from = as_integer(lows[n] * SCORE_UNIT)
      local to = '(' .. as_integer(lows[n + 1] * SCORE_UNIT)
      counts[SCORE_BUCKETS - n + 1] = redis.call('ZCOUNT', queue, from, to)
    end
    local retried = redis.call('ZCOUNT', queue, as_integer(TRY_UNIT), '+inf')
    if retried > 0 then
      local some = redis.call('ZRANGE', queue, as_integer(TRY_UNIT), '+inf', 'BYSCORE',
                              'LIMIT', 0, SAMPLED, 'WITHSCORES')
      tally(counts, some, retried / (#some / 2))
    end
  end
  for b = 1, SCORE_BUCKETS do out[#out + 1] = math.floor(counts[b] + 0.5) end
end
return out
