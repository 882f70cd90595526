-- ARGV: shard, conc, delay, n, lease_s, max_tries, owner ('-' for none)
local n, lease_s, max_tries, w = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
local now = now_s()
local touched = {}
reap(max_tries, touched, now)
for _, lm in ipairs(redis.call('ZRANGEBYSCORE', k(LEASES), '-inf', secs(now),
                                'LIMIT', 0, 200)) do
  unlease(lm, 1, max_tries, touched, now)
  redis.call('HINCRBY', k(STATS), 'lease_expired', 1)
end
for o in pairs(touched) do schedule(o, now) end
-- Hosts whose delay is over: a host in 'wait' has a free slot (it had one when it went there,
-- and only a pop, from 'ready', takes one), so it goes straight to 'ready'.
local due = redis.call('ZRANGEBYSCORE', k(WAIT), '-inf', secs(now), 'LIMIT', 0, 1000)
if #due > 0 then
  redis.call('ZREM', k(WAIT), unpack(due))
  for _, o in ipairs(due) do place(o, now, 0) end
end
local out = {}
local popped = 0
while popped < n do
  local top = redis.call('ZPOPMIN', k(READY))
  if #top == 0 then break end
  local o = top[1]
  local item = redis.call('ZPOPMIN', qkey(o))
  if #item > 0 and not string.match(item[1], '^r?%d+%+?%d* %d+ ') then
    redis.call('HINCRBY', k(STATS), 'corrupt', 1)
    redis.call('HINCRBY', k(STATS), 'queued', -1)
    schedule(o, now)
  elseif #item > 0 then
    local m, s = item[1], item[2]
    local lm = o .. ' ' .. s .. ' ' .. w .. ' ' .. m
    redis.call('ZADD', k(LEASES), secs(now + lease_s), lm)
    if w ~= '-' then redis.call('SADD', k(OWNED) .. w, lm) end
    -- A slot taken and the host held (hold(), in one read and one write).
    local state = redis.call('HMGET', hkey(o), 'i', 'n')
    local inflight = tonumber(state[1] or '0') + 1
    local nxt = held_until(tonumber(state[2] or '0'), now)
    redis.call('HSET', hkey(o), 'i', inflight, 'n', secs(nxt))
    local parent = parent_of(m)
    local purl = ''
    if parent ~= '0' and tonumber(parent) % SHARD_COUNT == SHARD then  -- else the client reads it
      purl = redis.call('HGET', record_key(URLS, tonumber(parent)), parent) or ''
    end
    out[#out + 1] = lm
    out[#out + 1] = purl
    popped = popped + 1
    -- The host left 'ready' with the pop: back in a set unless its slots are all taken.
    if inflight < CONC then place(o, now, nxt) end
  end
end
if popped > 0 then redis.call('HINCRBY', k(STATS), 'queued', -popped) end
local wake = ''
local w = redis.call('ZRANGE', k(WAIT), 0, 0, 'WITHSCORES')
if #w > 0 then wake = tonumber(w[2]) - now end
local l = redis.call('ZRANGE', k(LEASES), 0, 0, 'WITHSCORES')
if #l > 0 and (wake == '' or tonumber(l[2]) - now < wake) then wake = tonumber(l[2]) - now end
table.insert(out, 1, tostring(wake))
table.insert(out, 1, redis.call('ZCARD', k(LEASES)))
table.insert(out, 1, tonumber(redis.call('HGET', k(STATS), 'queued') or '0'))
return out
