-- The frontier's helpers (focused.store.frontier), prepended to each of its scripts: functions
-- only, each given what it needs. A script opens with
--
--   local frontier, vanished = open_frontier(KEYS, ARGV)
--   if not frontier then return vanished end
--
-- and reads its own arguments from ARGV[2] on. Every script runs on one shard
-- (focused.store.shards). KEYS[1] is the shard's key prefix and KEYS[2] on are those of the
-- shard's frontier keys the script's code names, in GIVEN_KEYS order (script_keys in
-- focused.store.frontier.core): frontier.key.ready is the shard's 'ready'. The keys of a host,
-- a domain, a seen bucket or a record bucket are made here from the prefix: they share its
-- hash tag, so they are in the shard's cluster slot.
-- ARGV[1] is the frontier's settings for the call (JSON, focused.store.frontier.core):
-- shard (its index), shards (their number, 1 on one server), epoch (the crawl's epoch the
-- caller knows, '-' for none: not a crawl process), concurrency and delay (per host), budgets
-- (focused.store.frontier.base.Budgets, by name, 0 for none), dead_prior (live_share; 0: off),
-- dead_hold and dead_after (over_budget; 0: off).

-- A host's hash (host_key), its fields one letter each: one hash per host ever queued.
local HOST_FIELD = {
  leased = 'i',   -- URLs leased now
  due = 'n',      -- unix time it may be hit again
  fetched = 'c',  -- URLs fetched
  domain = 'd',   -- its registered domain, if a budget needs it
  started = 's',  -- popped before
  held = 'b',     -- why it is held (the budget it is over), while it is
  suffix = 'u',   -- the private suffix of the Public Suffix List it is under, if any
  lineage = 'f',  -- the lineage it was first seen in, spread by a farm-like page (push_packed)
  dead = 'x',     -- of its fetches, those dead (404, 410, no DNS): its expected cost
}
-- A registered domain's hash (domain_key): URLs fetched from its hosts, its hosts popped from.
local DOMAIN_FIELD = {fetched = 'p', hosts = 'h'}
-- A private suffix's hash (suffix_key): the hosts under it popped from; a lineage's
-- (lineage_key), likewise.
local SUFFIX_FIELD = {hosts = 'h'}
-- A page spreads (push_packed) when it links to no page of its own host and at least this
-- share of the hosts it links to are new: what a link farm's pages do, each a host one page
-- deep that makes up more.
local SPREAD_SHARE = 0.5

-- The frontier of this call (module head), or nil and an error reply when the crawl's keys
-- vanished (a Redis restarted empty, FLUSHALL, a failover to an empty replica, ``focused
-- reset``): the crawl has no epoch, or a new one, so the call changes nothing and fails, and
-- the process stops instead of crawling a frontier that is no longer its crawl's.
local function open_frontier(keys, argv)
  local frontier = cjson.decode(argv[1])
  frontier.prefix = keys[1]
  frontier.key = {}
  for i, name in ipairs(GIVEN_KEYS) do frontier.key[name] = keys[i + 1] end
  if frontier.epoch ~= '-' and redis.call('GET', frontier.key.epoch) ~= frontier.epoch then
    return nil, redis.error_reply('VANISHED the crawl epoch ' .. frontier.epoch .. ' is gone')
  end
  local budgets = frontier.budgets
  -- Whether a budget can hold a host (host_queued caps queues, it holds no host).
  frontier.holds_hosts = budgets.host_pages + budgets.host_share + budgets.domain_pages
    + budgets.domain_share + budgets.domain_hosts + budgets.suffix_hosts
    + budgets.farm_hosts + frontier.dead_hold > 0
  return frontier
end

local function host_queue_key(frontier, origin) return frontier.prefix .. HOST_QUEUE .. origin end
local function host_key(frontier, origin) return frontier.prefix .. HOST .. origin end
local function domain_key(frontier, domain) return frontier.prefix .. DOMAIN .. domain end
local function suffix_key(frontier, suffix) return frontier.prefix .. PRIVATE_SUFFIX .. suffix end
local function lineage_key(frontier, lineage) return frontier.prefix .. LINEAGE .. lineage end
-- The lineage a host's budget counts it in (note_hosts), from its lineage field: none for a
-- lineage's first hosts.
local function counted_lineage(lineage)
  if lineage and string.sub(lineage, 1, 1) ~= '+' then return lineage end
  return nil
end
local function owned_key(frontier, owner) return frontier.prefix .. OWNED .. owner end
-- The url: or graph: bucket (name) of fetch order, a page of this shard.
local function record_key(frontier, name, order)
  return frontier.prefix .. name .. math.floor(order / frontier.shards / URL_BUCKET)
end

local function now_s()
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
local function as_integer(x) return string.format('%.0f', x) end
local function as_seconds(x) return string.format('%.6f', x) end

-- The score bucket of a packed order, 0 to SCORE_BUCKETS - 1: how many buckets' highest
-- levels (BUCKET_TOP_LEVELS, descending) its level is at or below
-- (focused.store.frontier.records.score_bucket). Most queued URLs are in the first buckets.
local function score_bucket(packed)
  local level = math.floor((packed % TRY_UNIT) / SCORE_UNIT)
  local bucket = 0
  while bucket < SCORE_BUCKETS - 1 and level <= BUCKET_TOP_LEVELS[bucket + 1] do
    bucket = bucket + 1
  end
  return bucket
end

-- The fetch order of the page a queued member was found on ('0' for none, or for a member
-- that does not parse: no stored record can make a script fail).
local function parent_of(member) return string.match(member, '^%S+ (%d+) ') or '0' end
-- The origin, packed order, owner and member of a lease, or nil for one that does not parse.
local function split_lease(lease) return string.match(lease, '^(%S+) (%S+) (%S+) (.*)$') end

-- A host may not be hit again before the delay from now: after a fetch starts (a pop) and
-- after it ends (an ack), so the delay holds however long fetches take. held_until: the time
-- it may be hit again, from its due time already read (a later one, set by back_off, is
-- kept); hold: the same, reading and writing the host's hash.
local function held_until(frontier, due, now)
  if frontier.delay > 0 and now + frontier.delay > due then return now + frontier.delay end
  return due
end
local function hold(frontier, origin, now)
  local was = tonumber(redis.call('HGET', host_key(frontier, origin), HOST_FIELD.due) or '0')
  local due = held_until(frontier, was, now)
  if due ~= was then
    redis.call('HSET', host_key(frontier, origin), HOST_FIELD.due, as_seconds(due))
  end
  return due
end

-- The share of a host's fetches expected live (not a 404, a 410 or a failed lookup): its own
-- fetches and dead ones, smoothed towards the crawl's live share by frontier.dead_prior fetches
-- (read once a call, from the crawl's stats; 1 while no fetch was dead: a web without dead
-- links is crawled as it would be without them).
local function live_share(frontier, fetched, dead)
  if not frontier.live then
    local counts = redis.call('HMGET', frontier.key.stats, 'fetched', 'failed', 'dead')
    local all = tonumber(counts[1] or '0') + tonumber(counts[2] or '0')
    frontier.live = (all - tonumber(counts[3] or '0') + 1) / (all + 1)
  end
  local k = frontier.dead_prior
  return (fetched - dead + k * frontier.live) / (fetched + k)
end

-- Put a host in 'ready', scored by its best URL's packed order (head) plus its fetched count
-- (the seed-000 server priority, capped). With frontier.dead_prior, the head's score is first
-- multiplied by the host's expected live share (live_share): a host whose links are mostly
-- dead costs its 404s, and its URLs wait behind those of as good a score elsewhere.
local function make_ready(frontier, origin, head, fetched, dead)
  fetched = tonumber(fetched or '0')
  if frontier.dead_prior > 0 then
    local level = math.floor((head % TRY_UNIT) / SCORE_UNIT)
    local score = (1 - level / SCORE_LEVELS) * live_share(frontier, fetched, tonumber(dead or '0'))
    head = head + (math.floor((1 - score) * SCORE_LEVELS + 0.5) - level) * SCORE_UNIT
  end
  redis.call('ZADD', frontier.key.ready, as_integer(head + math.min(fetched, HOST_CAP) * HOST_UNIT),
             origin)
end

-- Put a host known to be in neither 'ready' nor 'wait' in one of them if it has a queued URL:
-- 'wait' until due, else 'ready'.
local function place(frontier, origin, now, due)
  local head = redis.call('ZRANGE', host_queue_key(frontier, origin), 0, 0, 'WITHSCORES')
  if #head == 0 then return end
  if due > now then
    redis.call('ZADD', frontier.key.wait, as_seconds(due), origin)
  else
    local counts = redis.call('HMGET', host_key(frontier, origin), HOST_FIELD.fetched,
                              HOST_FIELD.dead)
    make_ready(frontier, origin, tonumber(head[2]), counts[1], counts[2])
  end
end

-- Put a host in 'ready' or 'wait' (or neither) from its queue, slots and delay, wherever it
-- was; leased and due are given when the caller has just read or written them.
local function schedule(frontier, origin, now, leased, due)
  redis.call('ZREM', frontier.key.ready, origin)
  redis.call('ZREM', frontier.key.wait, origin)
  redis.call('ZREM', frontier.key.held, origin)  -- a held host is held again by the next pop
  if not leased then
    local state = redis.call('HMGET', host_key(frontier, origin), HOST_FIELD.leased, HOST_FIELD.due)
    leased, due = tonumber(state[1] or '0'), tonumber(state[2] or '0')
  end
  if leased >= frontier.concurrency then return end
  place(frontier, origin, now, due)
end

-- A host's best queued URL is now a new one, packed: it moves up in 'ready', or goes into
-- 'ready' or 'wait' if it was in neither (its queue was empty). A host in 'wait' stays there
-- (its score is its due time), and one whose slots are all taken stays out of both.
local function head_changed(frontier, origin, now, packed)
  local state = redis.call('HMGET', host_key(frontier, origin), HOST_FIELD.leased,
                           HOST_FIELD.due, HOST_FIELD.fetched, HOST_FIELD.dead)
  if tonumber(state[1] or '0') >= frontier.concurrency then return end
  local due = tonumber(state[2] or '0')
  if due > now then
    redis.call('ZADD', frontier.key.wait, as_seconds(due), origin)
  else
    redis.call('ZREM', frontier.key.wait, origin)  -- due, and not moved to 'ready' by a pop yet
    make_ready(frontier, origin, packed, state[3], state[4])
  end
end

-- What a call's pushes add up to, for place_heads: per host its best new URL (best: packed
-- order, head: member), its registered domain and private suffix; with the farm budget, the
-- pages that may spread and the hosts linked from pages that do not (kept), for lineages();
-- and the new URLs.
local function new_pushes()
  return {best = {}, head = {}, domain = {}, suffix = {}, pages = {}, kept = {}, new = 0}
end

-- Note the hosts of a page's links, from the "origin domain [suffix]" lines of its packed
-- links. With the farm budget (budgets.farm_hosts), a page that links to no page of its own
-- host (its "* origin domain" line, before its hosts' lines) may spread: it is noted with its
-- host and domain, the hosts it links to and those of them no earlier page of the call linked
-- to (only they can be new to the crawl for this page), for lineages(); the hosts of any other
-- page are kept.
local function note_hosts(frontier, pushes, lines)
  local farm = frontier.budgets.farm_hosts > 0
  local page
  for line in string.gmatch(lines, '[^\n]+') do
    local origin, domain, suffix = string.match(line, '^(%S+) (%S+) ?(%S*)$')
    if origin == '*' then
      if farm then page = {origin = domain, domain = suffix, hosts = {}, first = {}} end
    elseif origin then
      if page then
        page.hosts[#page.hosts + 1] = origin
        if not pushes.domain[origin] then page.first[#page.first + 1] = origin end
      elseif farm then
        pushes.kept[origin] = true
      end
      pushes.domain[origin] = domain
      if suffix ~= '' then pushes.suffix[origin] = suffix end
    end
  end
  if page and #page.hosts > 0 then pushes.pages[#pushes.pages + 1] = page end
end

-- The farm budget's lineages, from the call's pages that may spread (note_hosts), once the
-- hosts new to the crawl (never queued before) are known: new, by host. Such a page spreads,
-- like a link farm's, when at least SPREAD_SHARE of the hosts it links to are new, and its new
-- hosts are in its host's lineage: each lineage may have budgets.farm_hosts hosts popped from
-- (counted_lineage). A page of a host in no lineage starts one, named by its host's domain,
-- whose first hosts are marked '+' and not counted: a page that links to new sites only (a
-- seed's) is not a farm, a chain of them is. The hosts a page that does not spread links to
-- are out of any lineage (kept): a site that other sites link to is not a farm's. On a cluster
-- a host of another shard than the page's starts a lineage of its own (the page's host's
-- lineage is on the page's shard). Returns the lineage of each new host of a page that
-- spreads, and the kept hosts.
local function lineages(frontier, pushes, new)
  local lineage, kept = {}, pushes.kept
  for _, page in ipairs(pushes.pages) do
    local born = {}
    for _, origin in ipairs(page.first) do
      if new[origin] then born[#born + 1] = origin end
    end
    if #born >= SPREAD_SHARE * #page.hosts then
      local of_page = redis.call('HGET', host_key(frontier, page.origin), HOST_FIELD.lineage)
      of_page = of_page and string.match(of_page, '^%+?(.*)$') or '+' .. page.domain
      for _, origin in ipairs(born) do lineage[origin] = of_page end
    else
      for _, origin in ipairs(page.hosts) do kept[origin] = true end
    end
  end
  return lineage, kept
end

-- Queue the links of one page found on page number parent (0 for none), noting them in
-- pushes; returns the number of new URLs. links is a packed string
-- (focused.store.frontier.push), one link a line: origin, packed order, seen bucket, seen
-- member, depth, then the path without its leading '/' and a TAB and the anchor, if any; then,
-- when there are budgets, after an empty line, "origin domain [suffix]" lines: the links'
-- hosts' registered domains and private suffixes (note_hosts).
local function push_packed(frontier, pushes, links, parent)
  local cut = string.find(links, '\n\n', 1, true)
  if cut then
    note_hosts(frontier, pushes, string.sub(links, cut + 2))
    links = string.sub(links, 1, cut - 1)
  end
  local best, head, new = pushes.best, pushes.head, 0
  for origin, packed, bucket, seen, depth, rest
      in string.gmatch(links, '(%S+) (%S+) (%S+) (%S+) (%S+) ([^\n]*)') do
    if redis.call('SADD', frontier.prefix .. SEEN .. bucket, seen) == 1 then
      local member = depth .. ' ' .. parent .. ' ' .. rest
      redis.call('ZADD', host_queue_key(frontier, origin), packed, member)
      packed = tonumber(packed)
      if not best[origin] or packed < best[origin] then
        best[origin], head[origin] = packed, member
      end
      new = new + 1
    end
  end
  pushes.new = pushes.new + new
  return new
end

-- After pushes, for each host that got new URLs: its domain and suffix noted (a host whose
-- domain this notes first is new to the crawl: every host queued while a budget needs domains
-- has its domain noted), its lineage (lineages(): set for a new host of a page that spreads;
-- taken out for a kept host, but for a new one, which has none), its worst URLs past
-- budgets.host_queued dropped for good (they stay seen; counted in dropped/host_queue), and,
-- if its best queued URL is now a new one, its place anew (head_changed), but for the hosts in
-- skip, which the caller schedules itself; one whose head did not change keeps its place.
-- Counts the new URLs (less those dropped) as queued, and as seen.
local function place_heads(frontier, pushes, skip, now)
  local stats, host_queued, dropped = frontier.key.stats, frontier.budgets.host_queued, 0
  local new = {}
  for origin in pairs(pushes.head) do
    local host, domain, suffix = host_key(frontier, origin), pushes.domain[origin],
                                 pushes.suffix[origin]
    if domain and redis.call('HSETNX', host, HOST_FIELD.domain, domain) == 1 then
      new[origin] = true
    end
    if suffix then redis.call('HSETNX', host, HOST_FIELD.suffix, suffix) end
  end
  local lineage, kept = lineages(frontier, pushes, new)
  for origin, member in pairs(pushes.head) do
    local queue = host_queue_key(frontier, origin)
    if kept[origin] then
      if not new[origin] then redis.call('HDEL', host_key(frontier, origin), HOST_FIELD.lineage) end
    elseif lineage[origin] then
      redis.call('HSET', host_key(frontier, origin), HOST_FIELD.lineage, lineage[origin])
    end
    if host_queued > 0 then
      local over = redis.call('ZCARD', queue) - host_queued
      if over > 0 then
        redis.call('ZREMRANGEBYRANK', queue, -over, -1)
        dropped = dropped + over
      end
    end
    if not skip[origin] and redis.call('ZRANGE', queue, 0, 0)[1] == member then
      head_changed(frontier, origin, now, pushes.best[origin])
    end
  end
  local new_urls = pushes.new
  if new_urls - dropped ~= 0 then redis.call('HINCRBY', stats, 'queued', new_urls - dropped) end
  if new_urls > 0 then redis.call('HINCRBY', stats, 'seen', new_urls) end
  if dropped > 0 then redis.call('HINCRBY', stats, 'dropped/host_queue', dropped) end
end

-- Why a host is over a budget ('host', 'domain', 'hosts' or 'dead', the stats'
-- held/<why>), or nil: fetched its fetches, domain its registered domain (nil: not known),
-- started whether it was popped before, total the crawl's fetches, suffix its private suffix
-- (nil: none), lineage its lineage (nil: none), dead its dead fetches; 'hosts' is its
-- domain's, its private suffix's or its lineage's host-count budget; 'dead' a host of at
-- least frontier.dead_after fetches whose expected live share (live_share) is under
-- frontier.dead_hold: its next fetches would most likely be 404s too. On a cluster each shard counts the
-- fetches and hosts of the domain's hosts it holds: total is this shard's fetches times the
-- shards (hosts spread evenly by hash), and the host-count budget is split evenly between
-- the shards.
local function over_budget(frontier, fetched, domain, started, total, suffix, lineage, dead)
  local budgets = frontier.budgets
  if frontier.dead_hold > 0 and fetched >= frontier.dead_after
      and live_share(frontier, fetched, tonumber(dead or '0')) < frontier.dead_hold then
    return 'dead'
  end
  if (budgets.host_pages > 0 or budgets.host_share > 0)
      and fetched > math.max(budgets.host_pages, budgets.host_share * total) then
    return 'host'
  end
  if not domain then return nil end
  local counts = redis.call('HMGET', domain_key(frontier, domain),
                            DOMAIN_FIELD.fetched, DOMAIN_FIELD.hosts)
  if (budgets.domain_pages > 0 or budgets.domain_share > 0)
      and tonumber(counts[1] or '0')
        > math.max(budgets.domain_pages, budgets.domain_share * total) then
    return 'domain'
  end
  if budgets.domain_hosts > 0 and not started
      and tonumber(counts[2] or '0') >= math.ceil(budgets.domain_hosts / frontier.shards) then
    return 'hosts'
  end
  if budgets.suffix_hosts > 0 and suffix and not started
      and tonumber(redis.call('HGET', suffix_key(frontier, suffix), SUFFIX_FIELD.hosts) or '0')
        >= math.ceil(budgets.suffix_hosts / frontier.shards) then
    return 'hosts'
  end
  if budgets.farm_hosts > 0 and lineage and not started
      and tonumber(redis.call('HGET', lineage_key(frontier, lineage), SUFFIX_FIELD.hosts) or '0')
        >= math.ceil(budgets.farm_hosts / frontier.shards) then
    return 'hosts'
  end
  return nil
end

-- Take a lease off 'leases' and put its URL back in its host queue, one try later when bump
-- is 1 (a failed attempt); a URL that has had max_tries tries is counted as failed instead.
-- With hung (a lease taken back from a hung process: the page may be what hangs a process),
-- the try is charged and the URL counted in HUNG_RECLAIMS; at its second such reclaim it is
-- counted as failed (failed/hung) and not fetched again. The lease's host goes in touched.
-- Returns 1 if the URL was queued again.
local function unlease(frontier, lease, bump, max_tries, touched, now, hung)
  local stats = frontier.key.stats
  if redis.call('ZREM', frontier.key.leases, lease) == 0 then return 0 end
  local origin, packed, owner, member = split_lease(lease)
  if not origin or not tonumber(packed) then
    redis.call('HINCRBY', stats, 'corrupt', 1)
    return 0
  end
  if owner ~= '-' then redis.call('SREM', owned_key(frontier, owner), lease) end
  redis.call('HINCRBY', host_key(frontier, origin), HOST_FIELD.leased, -1)
  if bump == 1 then hold(frontier, origin, now) end
  touched[origin] = true
  if hung then
    local url = origin .. ' ' .. member
    if redis.call('HINCRBY', frontier.key.hung_reclaims, url, 1) >= 2 then
      redis.call('HDEL', frontier.key.hung_reclaims, url)
      redis.call('HINCRBY', stats, 'failed', 1)
      redis.call('HINCRBY', stats, 'failed/hung', 1)
      return 0
    end
  end
  local score = tonumber(packed) + bump * TRY_UNIT
  if math.floor(score / TRY_UNIT) >= max_tries then
    redis.call('HINCRBY', stats, 'failed', 1)
    redis.call('HINCRBY', stats, 'failed/tries', 1)
    return 0
  end
  redis.call('ZADD', host_queue_key(frontier, origin), as_integer(score), member)
  redis.call('HINCRBY', stats, 'queued', 1)
  return 1
end

-- Leases of processes that are gone (their heartbeat record ``proc:<id>`` expired, or says
-- they finished) go back to their queues untouched: a fetch that never finished costs no try.
-- Those of a process whose record says it is hung (its reactor silent for HUNG_BEATS beats)
-- go back one try later, and a URL taken back from hung processes twice fails (unlease).
-- At most once a second.
local function reap(frontier, max_tries, touched, now)
  if now - tonumber(redis.call('GET', frontier.key.reaped) or '0') < 1 then return end
  redis.call('SET', frontier.key.reaped, as_seconds(now))
  for _, id in ipairs(redis.call('ZRANGE', frontier.key.procs, 0, -1)) do
    local owned = owned_key(frontier, id)
    local state = redis.call('HGET', frontier.prefix .. PROC .. id, 'state')
    if state ~= 'running' and redis.call('EXISTS', owned) == 1 then
      local hung = state == 'hung'
      local back = 0
      for _, lease in ipairs(redis.call('SMEMBERS', owned)) do
        back = back + unlease(frontier, lease, hung and 1 or 0, max_tries, touched, now, hung)
      end
      redis.call('DEL', owned)
      redis.call('HINCRBY', frontier.key.stats, hung and 'lease_hung' or 'lease_reclaimed', back)
    end
  end
end
