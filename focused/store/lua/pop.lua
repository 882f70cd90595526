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
-- Budgets: a host popped from 'ready' that is over one goes to 'held' (scored as in 'ready')
-- instead, marked with why (b). Held hosts are served, best first, only when no host that is
-- not held has URLs queued (only_held_queued); the best held host is looked at again each pop,
-- and goes back to 'ready' once under its budgets (the crawl has grown).
local total = tonumber(redis.call('HGET', k(STATS), 'fetched') or '0') * SHARD_COUNT
local function why_held(o)
  local state = redis.call('HMGET', hkey(o), 'c', 'd', 's', 'u')
  return over_budget(tonumber(state[1] or '0'), state[2], state[3], total, state[4])
end
if BUDGETS then
  local first = redis.call('ZRANGE', k(HELD), 0, 0)[1]
  if first and not why_held(first) then
    redis.call('HDEL', hkey(first), 'b')
    schedule(first, now)
  end
end
-- Whether held hosts may be served, 'ready' being empty: some are held, and only held hosts
-- have URLs queued (every host waiting out its delay is held, and so is every host with URLs
-- leased and more queued). It reads 'wait' and 'leases' 100 at a time and stops at the first
-- host not held: its work is bounded by the held hosts waiting and the leases.
local function chunks(key, each)
  local from = 0
  while true do
    local part = redis.call('ZRANGE', k(key), from, from + 99)
    for _, member in ipairs(part) do
      if not each(member) then return false end
    end
    if #part < 100 then return true end
    from = from + 100
  end
end
local function only_held_queued()
  if redis.call('ZCARD', k(HELD)) == 0 then return false end
  local looked = {}
  return chunks(WAIT, function(o) return redis.call('HGET', hkey(o), 'b') end)
    and chunks(LEASES, function(lm)
      local o = split_lease(lm)
      if not o or looked[o] then return true end
      looked[o] = true
      return redis.call('HGET', hkey(o), 'b') or redis.call('ZCARD', qkey(o)) == 0
    end)
end
local out = {}
local popped = 0
local serve_held  -- decided once, when 'ready' runs dry
while popped < n do
  local top = redis.call('ZPOPMIN', k(READY))
  local from_held = false
  if #top == 0 and BUDGETS then
    if serve_held == nil then serve_held = only_held_queued() end
    if serve_held then
      top = redis.call('ZPOPMIN', k(HELD))
      from_held = true
    end
  end
  if #top == 0 then break end
  local o = top[1]
  local state = redis.call('HMGET', hkey(o), 'i', 'n', 'c', 'd', 's', 'b', 'u')
  local why = BUDGETS
    and over_budget(tonumber(state[3] or '0'), state[4], state[5], total, state[7])
  local item = {}
  if why and not from_held then
    redis.call('ZADD', k(HELD), top[2], o)
    if not state[6] then
      redis.call('HSET', hkey(o), 'b', why)
      redis.call('HINCRBY', k(STATS), 'held/' .. why, 1)
    end
  elseif from_held and tonumber(state[1] or '0') >= CONC then
    -- Its slots are all taken: its acknowledgement places it again.
  elseif from_held and tonumber(state[2] or '0') > now then
    redis.call('ZADD', k(WAIT), state[2], o)
  else
    if state[6] and not why then
      redis.call('HDEL', hkey(o), 'b')
      redis.call('ZREM', k(HELD), o)
    end
    item = redis.call('ZPOPMIN', qkey(o))
  end
  if #item > 0 and not string.match(item[1], '^r?%d+%+?%d* %d+ ') then
    redis.call('HINCRBY', k(STATS), 'corrupt', 1)
    redis.call('HINCRBY', k(STATS), 'queued', -1)
    schedule(o, now)
  elseif #item > 0 then
    local m, s = item[1], item[2]
    local lm = o .. ' ' .. s .. ' ' .. w .. ' ' .. m
    redis.call('ZADD', k(LEASES), secs(now + lease_s), lm)
    if w ~= '-' then redis.call('SADD', k(OWNED) .. w, lm) end
    -- A slot taken and the host held (hold(), in one read and one write); a host popped for
    -- the first time counts for its domain's hosts, and its private suffix's.
    local inflight = tonumber(state[1] or '0') + 1
    local nxt = held_until(tonumber(state[2] or '0'), now)
    redis.call('HSET', hkey(o), 'i', inflight, 'n', secs(nxt), 's', 1)
    if not state[5] and state[4] then redis.call('HINCRBY', dkey(state[4]), 'h', 1) end
    if not state[5] and state[7] then redis.call('HINCRBY', ukey(state[7]), 'h', 1) end
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
