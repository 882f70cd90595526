-- The frontier's helpers (focused.store.frontier.queue), the head of each of its scripts.
-- Every script runs on one shard (focused.store.shards): KEYS[1] is its key prefix, ARGV[1]
-- its index, the number of shards ("0 1" on one server) and the crawl's epoch, then the
-- budgets, if any, ARGV[2] and ARGV[3] the host concurrency and delay.
local P = KEYS[1]
-- This shard's index and the crawl's number of shards (1 on one server; ``focused.store.shards``),
-- the crawl's epoch the caller knows ('-' for none: not a crawl process).
local SHARD, SHARD_COUNT, CRAWL_EPOCH, LIMITS = string.match(ARGV[1], '^(%d+) (%d+) (%S+) ?(.*)$')
SHARD, SHARD_COUNT = tonumber(SHARD), tonumber(SHARD_COUNT)
-- A crawl whose keys vanished (a Redis restarted empty, FLUSHALL, a failover to an empty
-- replica, ``focused reset``) has no epoch, or a new one: the call changes nothing and fails,
-- and the process stops instead of crawling a frontier that is no longer its crawl's.
if CRAWL_EPOCH ~= '-' and redis.call('GET', P .. EPOCH) ~= CRAWL_EPOCH then
  return redis.error_reply('VANISHED the crawl epoch ' .. CRAWL_EPOCH .. ' is gone')
end
-- The budgets (focused.store.frontier.base.Budgets, in its field order), 0 for none.
local LIMIT = {}
for x in string.gmatch(LIMITS, '%S+') do LIMIT[#LIMIT + 1] = tonumber(x) end
local HOST_PAGES, HOST_SHARE = LIMIT[1] or 0, LIMIT[2] or 0
local DOMAIN_PAGES, DOMAIN_SHARE, DOMAIN_HOSTS = LIMIT[3] or 0, LIMIT[4] or 0, LIMIT[5] or 0
local HOST_QUEUED, SUFFIX_HOSTS = LIMIT[6] or 0, LIMIT[7] or 0
local BUDGETS = HOST_PAGES + HOST_SHARE + DOMAIN_PAGES + DOMAIN_SHARE + DOMAIN_HOSTS + SUFFIX_HOSTS > 0
local CONC = tonumber(ARGV[2])
local DELAY = tonumber(ARGV[3])
local function k(name) return P .. name end
local function qkey(o) return P .. HOST_QUEUE .. o end
-- A host's own hash: i (URLs leased), n (unix time it may be hit again), c (URLs fetched),
-- d (its registered domain), s (popped before), b (why it is held, while it is), u (the
-- private suffix of the Public Suffix List it is under, if any).
local function hkey(o) return P .. HOST .. o end
-- A registered domain's hash: p (URLs fetched from its hosts), h (its hosts popped from).
local function dkey(d) return P .. DOMAIN .. d end
-- A private suffix's hash: h (the hosts under it popped from).
local function ukey(u) return P .. PRIVATE_SUFFIX .. u end
local function now_s()
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
local function int(x) return string.format('%.0f', x) end
-- The fetch order of the page a queued member was found on ('0' for none, or for a member
-- that does not parse: no stored record can make a script fail).
local function parent_of(m) return string.match(m, '^%S+ (%d+) ') or '0' end
-- (origin, packed score, owner, member) of a lease, or nil for a record that does not parse.
local function split_lease(lm) return string.match(lm, '^(%S+) (%S+) (%S+) (.*)$') end
local function secs(x) return string.format('%.6f', x) end
-- The url: or graph: bucket of fetch order n, a page of this shard (n % SHARD_COUNT == SHARD).
local function record_key(name, n) return P .. name .. math.floor(n / SHARD_COUNT / URL_BUCKET) end

-- Host o may not be hit again before DELAY seconds from now: after a fetch starts (a pop)
-- and after it ends (an ack), so the delay holds however long fetches take. Returns the time
-- the host may be hit again (a later one set by back_off is kept): held_until from the time
-- already read, hold reading and writing it.
local function held_until(nxt, now)
  if DELAY > 0 and now + DELAY > nxt then return now + DELAY end
  return nxt
end
local function hold(o, now)
  local was = tonumber(redis.call('HGET', hkey(o), 'n') or '0')
  local nxt = held_until(was, now)
  if nxt ~= was then redis.call('HSET', hkey(o), 'n', secs(nxt)) end
  return nxt
end

-- Put host o in 'ready', scored by its best URL's packed order head plus its crawled count
-- (the seed-000 server priority, capped).
local function make_ready(o, head, crawled)
  crawled = math.min(tonumber(crawled or '0'), HOST_CAP)
  redis.call('ZADD', k(READY), int(head + crawled * HOST_UNIT), o)
end

-- Put host o, known to be in neither 'ready' nor 'wait', in one of them if it has a queued
-- URL: 'wait' until nxt, else 'ready'.
local function place(o, now, nxt)
  local head = redis.call('ZRANGE', qkey(o), 0, 0, 'WITHSCORES')
  if #head == 0 then return end
  if nxt > now then
    redis.call('ZADD', k(WAIT), secs(nxt), o)
  else
    make_ready(o, tonumber(head[2]), redis.call('HGET', hkey(o), 'c'))
  end
end

-- Put host o in 'ready' or 'wait' (or neither) from its queue, slots and delay, wherever it
-- was; inflight and nxt are given when the caller has just read or written them.
local function schedule(o, now, inflight, nxt)
  redis.call('ZREM', k(READY), o)
  redis.call('ZREM', k(WAIT), o)
  redis.call('ZREM', k(HELD), o)  -- back in 'ready', a held host is held again by the next pop
  if not inflight then
    local state = redis.call('HMGET', hkey(o), 'i', 'n')
    inflight, nxt = tonumber(state[1] or '0'), tonumber(state[2] or '0')
  end
  if inflight >= CONC then return end
  place(o, now, nxt)
end

-- Host o's best queued URL is now a new one, packed s: it moves up in 'ready', or goes into
-- 'ready' or 'wait' if it was in neither (its queue was empty). A host in 'wait' stays there
-- (its score is its time n), and one whose slots are all taken stays out of both.
local function head_changed(o, now, s)
  local state = redis.call('HMGET', hkey(o), 'i', 'n', 'c')
  if tonumber(state[1] or '0') >= CONC then return end
  local nxt = tonumber(state[2] or '0')
  if nxt > now then
    redis.call('ZADD', k(WAIT), secs(nxt), o)
  else
    redis.call('ZREM', k(WAIT), o)  -- due, and not moved to 'ready' by a pop yet
    make_ready(o, s, state[3])
  end
end

-- Origin -> registered domain, and private suffix, of the hosts of the links pushed
-- (push_packed), for place_heads.
local DOMAINS, SUFFIXES = {}, {}

-- Queue the links of one page (a packed string, one link a line: origin, packed score, seen
-- bucket, seen member, depth, then the path without its leading '/' and a TAB and the anchor,
-- if any; then, after an empty line, "origin domain [suffix]" lines: the links' hosts'
-- registered domains and private suffixes, when there are budgets), found on page number
-- parent; returns the number of new
-- URLs. The best new member of each host goes into best and head (host -> packed score,
-- member), for place_heads.
local function push_packed(links, parent, best, head)
  local cut = string.find(links, '\n\n', 1, true)
  if cut then
    for line in string.gmatch(string.sub(links, cut + 2), '[^\n]+') do
      local o, d, u = string.match(line, '^(%S+) (%S+) ?(%S*)$')
      if o then
        DOMAINS[o] = d
        if u ~= '' then SUFFIXES[o] = u end
      end
    end
    links = string.sub(links, 1, cut - 1)
  end
  local new = 0
  for o, s, b, f, d, r in string.gmatch(links, '(%S+) (%S+) (%S+) (%S+) (%S+) ([^\n]*)') do
    if redis.call('SADD', k(SEEN) .. b, f) == 1 then
      local m = d .. ' ' .. parent .. ' ' .. r
      redis.call('ZADD', qkey(o), s, m)
      s = tonumber(s)
      if not best[o] or s < best[o] then best[o], head[o] = s, m end
      new = new + 1
    end
  end
  return new
end

-- After pushes, for each host that got new URLs: its domain noted, its worst URLs past
-- HOST_QUEUED dropped for good (they stay seen; counted in dropped/host_queue), and, if its
-- best queued URL is now a new one, its place anew (head_changed), but for the hosts in skip,
-- which the caller schedules itself; one whose head did not change keeps its place. Counts the
-- new URLs (less those dropped) as queued, and as seen.
local function place_heads(best, head, skip, now, new)
  local dropped = 0
  for o, m in pairs(head) do
    if DOMAINS[o] then redis.call('HSETNX', hkey(o), 'd', DOMAINS[o]) end
    if SUFFIXES[o] then redis.call('HSETNX', hkey(o), 'u', SUFFIXES[o]) end
    if HOST_QUEUED > 0 then
      local over = redis.call('ZCARD', qkey(o)) - HOST_QUEUED
      if over > 0 then
        redis.call('ZREMRANGEBYRANK', qkey(o), -over, -1)
        dropped = dropped + over
      end
    end
    if not skip[o] and redis.call('ZRANGE', qkey(o), 0, 0)[1] == m then
      head_changed(o, now, best[o])
    end
  end
  if new - dropped ~= 0 then redis.call('HINCRBY', k(STATS), 'queued', new - dropped) end
  if new > 0 then redis.call('HINCRBY', k(STATS), 'seen', new) end
  if dropped > 0 then redis.call('HINCRBY', k(STATS), 'dropped/host_queue', dropped) end
end

-- Why a host is over a budget ('host', 'domain' or 'hosts', the stats' held/<why>), or nil:
-- c its fetches, d its registered domain (nil: not known), started whether it was popped
-- before, total the crawl's fetches, u its private suffix (nil: none); 'hosts' is its
-- domain's or its private suffix's host-count budget. On a cluster each shard counts the fetches and hosts of
-- the domain's hosts it holds: total is this shard's fetches times the shards (hosts spread
-- evenly by hash), and the host-count budget is split evenly between the shards.
local function over_budget(c, d, started, total, u)
  if (HOST_PAGES > 0 or HOST_SHARE > 0) and c > math.max(HOST_PAGES, HOST_SHARE * total) then
    return 'host'
  end
  if not d then return nil end
  local dom = redis.call('HMGET', dkey(d), 'p', 'h')
  if (DOMAIN_PAGES > 0 or DOMAIN_SHARE > 0)
      and tonumber(dom[1] or '0') > math.max(DOMAIN_PAGES, DOMAIN_SHARE * total) then
    return 'domain'
  end
  if DOMAIN_HOSTS > 0 and not started
      and tonumber(dom[2] or '0') >= math.ceil(DOMAIN_HOSTS / SHARD_COUNT) then
    return 'hosts'
  end
  if SUFFIX_HOSTS > 0 and u and not started
      and tonumber(redis.call('HGET', ukey(u), 'h') or '0')
        >= math.ceil(SUFFIX_HOSTS / SHARD_COUNT) then
    return 'hosts'
  end
  return nil
end

-- Take lease lm off 'leases' and put its URL back in its host queue, one try later when bump
-- is 1 (a failed attempt); a URL that has had max_tries tries is counted as failed instead.
-- With hung (a lease taken back from a hung process: the page may be what hangs a process),
-- the try is charged and the URL counted in HUNG_RECLAIMS; at its second such reclaim it is
-- counted as failed (failed/hung) and not fetched again. Returns 1 if the URL was queued again.
local function unlease(lm, bump, max_tries, touched, now, hung)
  if redis.call('ZREM', k(LEASES), lm) == 0 then return 0 end
  local o, s, w, m = split_lease(lm)
  if not o or not tonumber(s) then
    redis.call('HINCRBY', k(STATS), 'corrupt', 1)
    return 0
  end
  if w ~= '-' then redis.call('SREM', k(OWNED) .. w, lm) end
  redis.call('HINCRBY', hkey(o), 'i', -1)
  if bump == 1 then hold(o, now) end
  touched[o] = true
  if hung then
    local url = o .. ' ' .. m
    if redis.call('HINCRBY', k(HUNG_RECLAIMS), url, 1) >= 2 then
      redis.call('HDEL', k(HUNG_RECLAIMS), url)
      redis.call('HINCRBY', k(STATS), 'failed', 1)
      redis.call('HINCRBY', k(STATS), 'failed/hung', 1)
      return 0
    end
  end
  local score = tonumber(s) + bump * TRY_UNIT
  if math.floor(score / TRY_UNIT) >= max_tries then
    redis.call('HINCRBY', k(STATS), 'failed', 1)
    redis.call('HINCRBY', k(STATS), 'failed/tries', 1)
    return 0
  end
  redis.call('ZADD', qkey(o), int(score), m)
  redis.call('HINCRBY', k(STATS), 'queued', 1)
  return 1
end

-- Leases of processes that are gone (their heartbeat record ``proc:<id>`` expired, or says
-- they finished) go back to their queues untouched: a fetch that never finished costs no try.
-- Those of a process whose record says it is hung (its reactor silent for HUNG_BEATS beats)
-- go back one try later, and a URL taken back from hung processes twice fails (unlease).
-- At most once a second.
local function reap(max_tries, touched, now)
  if now - tonumber(redis.call('GET', k(REAPED)) or '0') < 1 then return end
  redis.call('SET', k(REAPED), secs(now))
  for _, id in ipairs(redis.call('ZRANGE', k(PROCS), 0, -1)) do
    local owned = k(OWNED) .. id
    local state = redis.call('HGET', k(PROC) .. id, 'state')
    if state ~= 'running' and redis.call('EXISTS', owned) == 1 then
      local hung = state == 'hung'
      local back = 0
      for _, lm in ipairs(redis.call('SMEMBERS', owned)) do
        back = back + unlease(lm, hung and 1 or 0, max_tries, touched, now, hung)
      end
      redis.call('DEL', owned)
      redis.call('HINCRBY', k(STATS), hung and 'lease_hung' or 'lease_reclaimed', back)
    end
  end
end
