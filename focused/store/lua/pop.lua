-- Lease the best URLs whose hosts may be hit now (RedisFrontier.pop_ready). ARGV[2]: how many
-- at most, ARGV[3]: the lease's seconds, ARGV[4]: max_tries, ARGV[5]: the owner ('-' for
-- none). Returns the URLs queued, the leases, the seconds until a waiting host or a lease
-- deadline is due ('' for none), then per URL leased its lease and its parent's url: record
-- ('' for none, or a parent of another shard: the caller reads it).
local frontier, vanished = open_frontier(KEYS, ARGV)
if not frontier then return vanished end
local wanted, lease_s = tonumber(ARGV[2]), tonumber(ARGV[3])
local max_tries, owner = tonumber(ARGV[4]), ARGV[5]
local key, stats = frontier.key, frontier.key.stats
local now = now_s()

-- Leases of gone processes, and leases run out, go back to their queues.
local touched = {}
reap(frontier, max_tries, touched, now)
for _, lease in ipairs(redis.call('ZRANGEBYSCORE', key.leases, '-inf', as_seconds(now),
                                  'LIMIT', 0, 200)) do
  unlease(frontier, lease, 1, max_tries, touched, now)
  redis.call('HINCRBY', stats, 'lease_expired', 1)
end
for origin in pairs(touched) do schedule(frontier, origin, now) end

-- Hosts whose delay is over: a host in 'wait' has a free slot (it had one when it went there,
-- and only a pop, from 'ready', takes one), so it goes straight to 'ready'.
local due = redis.call('ZRANGEBYSCORE', key.wait, '-inf', as_seconds(now), 'LIMIT', 0, 1000)
if #due > 0 then
  redis.call('ZREM', key.wait, unpack(due))
  for _, origin in ipairs(due) do place(frontier, origin, now, 0) end
end

-- Budgets: a host popped from 'ready' that is over one goes to 'held' (scored as in 'ready')
-- instead, marked with why. Held hosts are served, best first, only when no host that is not
-- held has URLs queued (only_held_queued); the best held host is looked at again each pop,
-- and goes back to 'ready' once under its budgets (the crawl has grown).
local total = tonumber(redis.call('HGET', stats, 'fetched') or '0') * frontier.shards
local function why_held(origin)
  local host = redis.call('HMGET', host_key(frontier, origin), HOST_FIELD.fetched,
                          HOST_FIELD.domain, HOST_FIELD.started, HOST_FIELD.suffix,
                          HOST_FIELD.lineage, HOST_FIELD.dead)
  return over_budget(frontier, tonumber(host[1] or '0'), host[2], host[3], total, host[4],
                     counted_lineage(host[5]), host[6])
end
if frontier.holds_hosts then
  local first = redis.call('ZRANGE', key.held, 0, 0)[1]
  if first and not why_held(first) then
    redis.call('HDEL', host_key(frontier, first), HOST_FIELD.held)
    schedule(frontier, first, now)
  end
end
-- Whether held hosts may be served, 'ready' being empty: some are held, and only held hosts
-- have URLs queued (every host waiting out its delay is held, and so is every host with URLs
-- leased and more queued). It reads 'wait' and 'leases' 100 at a time and stops at the first
-- host not held: its work is bounded by the held hosts waiting and the leases.
local function all_of(set, each)
  local from = 0
  while true do
    local part = redis.call('ZRANGE', set, from, from + 99)
    for _, member in ipairs(part) do
      if not each(member) then return false end
    end
    if #part < 100 then return true end
    from = from + 100
  end
end
local function only_held_queued()
  if redis.call('ZCARD', key.held) == 0 then return false end
  local looked = {}
  return all_of(key.wait, function(origin)
      return redis.call('HGET', host_key(frontier, origin), HOST_FIELD.held)
    end)
    and all_of(key.leases, function(lease)
      local origin = split_lease(lease)
      if not origin or looked[origin] then return true end
      looked[origin] = true
      return redis.call('HGET', host_key(frontier, origin), HOST_FIELD.held)
        or redis.call('ZCARD', host_queue_key(frontier, origin)) == 0
    end)
end

local out = {}
local popped = 0
local serve_held  -- decided once, when 'ready' runs dry
while popped < wanted do
  local top = redis.call('ZPOPMIN', key.ready)
  local from_held = false
  if #top == 0 and frontier.holds_hosts then
    if serve_held == nil then serve_held = only_held_queued() end
    if serve_held then
      top = redis.call('ZPOPMIN', key.held)
      from_held = true
    end
  end
  if #top == 0 then break end
  local origin = top[1]
  local host = host_key(frontier, origin)
  local state = redis.call('HMGET', host, HOST_FIELD.leased, HOST_FIELD.due,
                           HOST_FIELD.fetched, HOST_FIELD.domain, HOST_FIELD.started,
                           HOST_FIELD.held, HOST_FIELD.suffix, HOST_FIELD.lineage,
                           HOST_FIELD.dead)
  local leased, host_due, fetched = tonumber(state[1] or '0'), state[2], state[3]
  local domain, started, held, suffix = state[4], state[5], state[6], state[7]
  local lineage = counted_lineage(state[8])
  local why = frontier.holds_hosts
    and over_budget(frontier, tonumber(fetched or '0'), domain, started, total, suffix, lineage,
                    state[9])
  local item = {}
  if why and not from_held then
    redis.call('ZADD', key.held, top[2], origin)
    if not held then
      redis.call('HSET', host, HOST_FIELD.held, why)
      redis.call('HINCRBY', stats, 'held/' .. why, 1)
    end
  elseif from_held and leased >= frontier.concurrency then
    -- Its slots are all taken: its acknowledgement places it again.
  elseif from_held and tonumber(host_due or '0') > now then
    redis.call('ZADD', key.wait, host_due, origin)
  else
    if held and not why then
      redis.call('HDEL', host, HOST_FIELD.held)
      redis.call('ZREM', key.held, origin)
    end
    item = redis.call('ZPOPMIN', host_queue_key(frontier, origin))
  end
  if #item > 0 and not string.match(item[1], '^r?%d+%+?%d* %d+ ') then
    redis.call('HINCRBY', stats, 'corrupt', 1)
    redis.call('HINCRBY', stats, 'queued', -1)
    schedule(frontier, origin, now)
  elseif #item > 0 then
    local member, packed = item[1], item[2]
    local lease = origin .. ' ' .. packed .. ' ' .. owner .. ' ' .. member
    redis.call('ZADD', key.leases, as_seconds(now + lease_s), lease)
    if owner ~= '-' then redis.call('SADD', owned_key(frontier, owner), lease) end
    -- A slot taken and the host held (hold(), in one read and one write); a host popped for
    -- the first time counts for its domain's hosts, and its private suffix's and lineage's.
    leased = leased + 1
    local next_due = held_until(frontier, tonumber(host_due or '0'), now)
    redis.call('HSET', host, HOST_FIELD.leased, leased, HOST_FIELD.due, as_seconds(next_due),
               HOST_FIELD.started, 1)
    if not started and domain then
      redis.call('HINCRBY', domain_key(frontier, domain), DOMAIN_FIELD.hosts, 1)
    end
    if not started and suffix then
      redis.call('HINCRBY', suffix_key(frontier, suffix), SUFFIX_FIELD.hosts, 1)
    end
    if not started and lineage then
      redis.call('HINCRBY', lineage_key(frontier, lineage), SUFFIX_FIELD.hosts, 1)
    end
    local parent = parent_of(member)
    local parent_record = ''
    if parent ~= '0' and tonumber(parent) % frontier.shards == frontier.shard then
      parent_record = redis.call('HGET', record_key(frontier, URLS, tonumber(parent)), parent) or ''
    end
    out[#out + 1] = lease
    out[#out + 1] = parent_record
    popped = popped + 1
    -- The host left 'ready' with the pop: back in a set unless its slots are all taken.
    if leased < frontier.concurrency then place(frontier, origin, now, next_due) end
  end
end
if popped > 0 then redis.call('HINCRBY', stats, 'queued', -popped) end

local wake = ''
local waiting = redis.call('ZRANGE', key.wait, 0, 0, 'WITHSCORES')
if #waiting > 0 then wake = tonumber(waiting[2]) - now end
local deadline = redis.call('ZRANGE', key.leases, 0, 0, 'WITHSCORES')
if #deadline > 0 and (wake == '' or tonumber(deadline[2]) - now < wake) then
  wake = tonumber(deadline[2]) - now
end
table.insert(out, 1, tostring(wake))
table.insert(out, 1, redis.call('ZCARD', key.leases))
table.insert(out, 1, tonumber(redis.call('HGET', stats, 'queued') or '0'))
return out
