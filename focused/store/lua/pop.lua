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
                          HOST_FIELD.domain, HOST_FIELD.started, HOST_FIELD.suffix)
  return over_budget(frontier, tonumber(host[1] or '0'), host[2], host[3], total, host[4])
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

-- The pop: hosts are taken from 'ready' a chunk at a time (one ZPOPMIN for as many as are
-- still wanted) and merged, best first, with the hosts this call popped from that may be hit
-- again now (a heap kept here and written back to 'ready' once); so the order is the one a
-- ZPOPMIN of 'ready' per URL gives, without a write and a read of 'ready' per URL. A host's
-- queue is read once a visit, its best URLs and the one after them (ZRANGE), and the URLs
-- taken cut off its head (ZREMRANGEBYRANK): several at once where its free slots, the delay
-- and the next host's score allow. The hosts' hashes, the leases, their owner's set and the
-- hosts' places are written once each at the end, the parents' records read a bucket at a
-- time.
local chunk, chunk_at, ready_dry = {}, 1, false
-- Heap of popped hosts due now with a free slot and URLs queued: scores and origins.
local heap_score, heap_origin = {}, {}
local function before(i, j)
  local a, b = heap_score[i], heap_score[j]
  return a < b or (a == b and heap_origin[i] < heap_origin[j])
end
local function swap(i, j)
  heap_score[i], heap_score[j] = heap_score[j], heap_score[i]
  heap_origin[i], heap_origin[j] = heap_origin[j], heap_origin[i]
end
local function heap_push(score, origin)
  local i = #heap_score + 1
  heap_score[i], heap_origin[i] = score, origin
  while i > 1 and before(i, math.floor(i / 2)) do
    swap(i, math.floor(i / 2))
    i = math.floor(i / 2)
  end
end
local function heap_pop()
  local score, origin, last = heap_score[1], heap_origin[1], #heap_score
  swap(1, last)
  heap_score[last], heap_origin[last] = nil, nil
  local i = 1
  while true do
    local best, left, right = i, 2 * i, 2 * i + 1
    if left < last and before(left, best) then best = left end
    if right < last and before(right, best) then best = right end
    if best == i then return score, origin end
    swap(i, best)
    i = best
  end
end
-- The next host of 'ready' (score, origin) without taking it, reading the next chunk of
-- 'ready' when this one is used up; nil when 'ready' is empty.
local function peek_ready(want)
  if chunk_at > #chunk then
    if ready_dry then return nil end
    chunk = redis.call('ZPOPMIN', key.ready, want)
    chunk_at = 1
    if #chunk < 2 * want then ready_dry = true end
    if #chunk == 0 then return nil end
  end
  return tonumber(chunk[chunk_at + 1]), chunk[chunk_at]
end
-- Whether the heap's best host comes before the chunk's next (score, origin).
local function heap_first(score, origin)
  local top = heap_score[1]
  return top and (not score or top < score or (top == score and heap_origin[1] < origin))
end
-- The best host not yet taken (score, origin), from the chunk or the heap; nil for none.
local function next_ready(want)
  local score, origin = peek_ready(want)
  if heap_first(score, origin) then return heap_pop() end
  if score then chunk_at = chunk_at + 2 end
  return score, origin
end
-- The best host after the one being served (score, origin; nil for none), that bounds how
-- many URLs the host gives this visit.
local function runner_up(want)
  local score, origin = peek_ready(want)
  if heap_first(score, origin) then return heap_score[1], heap_origin[1] end
  return score, origin
end

local hosts = {}  -- origin -> its hash's fields, read once a call, and whether they changed
local function host_state(origin)
  local host = hosts[origin]
  if host then return host end
  local state = redis.call('HMGET', host_key(frontier, origin), HOST_FIELD.leased,
                           HOST_FIELD.due, HOST_FIELD.fetched, HOST_FIELD.domain,
                           HOST_FIELD.started, HOST_FIELD.held, HOST_FIELD.suffix)
  host = {leased = tonumber(state[1] or '0'), due = tonumber(state[2] or '0'),
          fetched = math.min(tonumber(state[3] or '0'), HOST_CAP),
          fetched_all = tonumber(state[3] or '0'), domain = state[4], started = state[5],
          held = state[6], suffix = state[7], changed = false}
  hosts[origin] = host
  return host
end

local leases, owned, parents = {}, {}, {}
local out = {}
local popped = 0
local lease_due = as_seconds(now + lease_s)
local waits = {}
-- Lease up to k of a host's best URLs (at least its first; the others while they beat the
-- runner-up), then put the host back where it belongs. Its queue is read a page at a time,
-- two URLs first (its best and the next, its new head), then twice as many each page.
local function serve(origin, host, k)
  local queue = host_queue_key(frontier, origin)
  local items, ended, page, removed = {}, false, 2, 0
  -- Whether the queue's i-th URL (from 1) is read, reading the next page if need be.
  local function has(i)
    while 2 * i > #items and not ended do
      local from = #items / 2 - removed
      local more = redis.call('ZRANGE', queue, from, from + page - 1, 'WITHSCORES')
      for j = 1, #more do items[#items + 1] = more[j] end
      if #more < 2 * page then ended = true end
      page = page * 2
    end
    return 2 * i <= #items
  end
  local base = host.fetched * HOST_UNIT
  local taken, leased_now = 0, 0
  local rival, rival_origin
  if k > 1 then rival, rival_origin = runner_up(wanted - popped) end
  while taken < k and has(taken + 1) do
    local member, packed = items[2 * taken + 1], items[2 * taken + 2]
    if taken > 0 and rival then
      local score = tonumber(packed) + base
      if score > rival or (score == rival and origin > rival_origin) then break end
    end
    taken = taken + 1
    if not string.match(member, '^r?%d+%+?%d* %d+ ') then
      redis.call('HINCRBY', stats, 'corrupt', 1)
      redis.call('HINCRBY', stats, 'queued', -1)
    else
      local lease = origin .. ' ' .. packed .. ' ' .. owner .. ' ' .. member
      leases[#leases + 1] = lease_due
      leases[#leases + 1] = lease
      if owner ~= '-' then owned[#owned + 1] = lease end
      local parent = parent_of(member)
      out[#out + 1] = lease
      out[#out + 1] = ''
      if parent ~= '0' and tonumber(parent) % frontier.shards == frontier.shard then
        parents[#parents + 1] = {#out, parent}
      end
      leased_now = leased_now + 1
    end
  end
  if taken == 0 then return end
  redis.call('ZREMRANGEBYRANK', queue, 0, taken - 1)
  removed = taken
  popped = popped + leased_now
  if leased_now > 0 then
    -- Slots taken and the host held; a host popped for the first time counts for its
    -- domain's hosts, and its private suffix's.
    host.leased = host.leased + leased_now
    host.due = held_until(frontier, host.due, now)
    host.changed = true
    if not host.started and host.domain then
      redis.call('HINCRBY', domain_key(frontier, host.domain), DOMAIN_FIELD.hosts, 1)
    end
    if not host.started and host.suffix then
      redis.call('HINCRBY', suffix_key(frontier, host.suffix), SUFFIX_FIELD.hosts, 1)
    end
    host.started = '1'
  end
  -- Back in a set unless its slots are all taken or its queue is empty: its next URL is the
  -- one read after those taken.
  if host.leased >= frontier.concurrency or not has(taken + 1) then return end
  if host.due > now then
    waits[#waits + 1] = as_seconds(host.due)
    waits[#waits + 1] = origin
  else
    heap_push(tonumber(items[2 * taken + 2]) + base, origin)
  end
end

-- The leases and waits noted so far, written (before the held hosts are looked at, which
-- reads them, and at the end).
local function flush()
  call_chunked('ZADD', key.leases, leases, 2)
  call_chunked('SADD', owned_key(frontier, owner), owned, 1)
  call_chunked('ZADD', key.wait, waits, 2)
  leases, owned, waits = {}, {}, {}
end

local serve_held  -- decided once, when 'ready' runs dry
while popped < wanted do
  local want = wanted - popped
  local score, origin = next_ready(want)
  local from_held = false
  if not score and frontier.holds_hosts then
    if serve_held == nil then
      flush()
      serve_held = only_held_queued()
    end
    if serve_held then
      local held_top = redis.call('ZPOPMIN', key.held)
      if #held_top > 0 then score, origin = tonumber(held_top[2]), held_top[1] end
      from_held = true
    end
  end
  if not score then break end
  local host = host_state(origin)
  local why = frontier.holds_hosts
    and over_budget(frontier, host.fetched_all, host.domain, host.started, total, host.suffix)
  if why and not from_held then
    redis.call('ZADD', key.held, as_integer(score), origin)
    if not host.held then
      redis.call('HSET', host_key(frontier, origin), HOST_FIELD.held, why)
      redis.call('HINCRBY', stats, 'held/' .. why, 1)
      host.held = why
    end
  elseif from_held and host.leased >= frontier.concurrency then
    -- Its slots are all taken: its acknowledgement places it again.
  elseif from_held and host.due > now then
    waits[#waits + 1] = as_seconds(host.due)
    waits[#waits + 1] = origin
  else
    if host.held and not why then
      redis.call('HDEL', host_key(frontier, origin), HOST_FIELD.held)
      redis.call('ZREM', key.held, origin)
      host.held = nil
    end
    -- With a delay, a host popped is not due again in this call: one URL a visit; so too a
    -- held host's, which the held hosts' order ('held') then places again.
    local k = (frontier.delay > 0 or from_held) and 1
      or math.min(frontier.concurrency - host.leased, want)
    serve(origin, host, math.max(k, 1))
  end
end

-- What the call changed, written once: the hosts' hashes, the leases, the hosts' places, the
-- parents' url: records read a bucket at a time.
for origin, host in pairs(hosts) do
  if host.changed then
    redis.call('HSET', host_key(frontier, origin), HOST_FIELD.leased, host.leased,
               HOST_FIELD.due, as_seconds(host.due), HOST_FIELD.started, 1)
  end
end
flush()
local back = {}
for i = chunk_at, #chunk, 2 do
  back[#back + 1] = chunk[i + 1]
  back[#back + 1] = chunk[i]
end
for i, score in ipairs(heap_score) do
  back[#back + 1] = as_integer(score)
  back[#back + 1] = heap_origin[i]
end
call_chunked('ZADD', key.ready, back, 2)
local by_bucket = {}
for _, wanted_record in ipairs(parents) do
  local bucket = record_key(frontier, URLS, tonumber(wanted_record[2]))
  local list = by_bucket[bucket]
  if not list then list = {}; by_bucket[bucket] = list end
  list[#list + 1] = wanted_record
end
for bucket, list in pairs(by_bucket) do
  local fields = {}
  for i, wanted_record in ipairs(list) do fields[i] = wanted_record[2] end
  local records = call_chunked('HMGET', bucket, fields, 1)
  for i, wanted_record in ipairs(list) do out[wanted_record[1]] = records[i] or '' end
end
local queued
if popped > 0 then
  queued = redis.call('HINCRBY', stats, 'queued', -popped)
else
  queued = tonumber(redis.call('HGET', stats, 'queued') or '0')
end

local wake = ''
local waiting = redis.call('ZRANGE', key.wait, 0, 0, 'WITHSCORES')
if #waiting > 0 then wake = tonumber(waiting[2]) - now end
local deadline = redis.call('ZRANGE', key.leases, 0, 0, 'WITHSCORES')
if #deadline > 0 and (wake == '' or tonumber(deadline[2]) - now < wake) then
  wake = tonumber(deadline[2]) - now
end
table.insert(out, 1, tostring(wake))
table.insert(out, 1, redis.call('ZCARD', key.leases))
table.insert(out, 1, queued)
return out
