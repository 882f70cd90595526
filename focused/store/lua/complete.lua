-- Acknowledge a batch of leases (RedisFrontier.complete_many), one round trip for the lot: per
-- page its lease, its duplicates check, its host, its fetch order, its url: record, what a
-- classified page adds to the crawl's records (record_features) and its links; then what the
-- pages add up to, written once a batch: a counter moves once a batch, not once a page.
-- Follows frontier.lua and duplicate_check.lua (focused.store.scripts).
--
-- ARGV[2]: '1' to keep relevant pages for revisits; ARGV[3]: the batch's links to hosts of
-- other shards ('' for none: JSON, kept in 'outbox' until they are pushed there); ARGV[4]: the
-- fetch orders whose outbox entries are delivered; ARGV[5]: the duplicates checks of this
-- call's pages, in the batch's order ('' for none: JSON, [checksum, fingerprint,
-- Last-Modified, '1' for a revisit, the page's place among this call's pages, its text_state
-- and what 'known' holds of it ('' for nothing)] each; a text_state of '' for one checked
-- here: on one server, where 'checksums' and 'known' are this shard's); ARGV[6]: links of
-- pages acknowledged on other shards for this one's hosts ('' for none: JSON, parent and
-- links in turn); then the pages, from ARGV[7] on, each its values in PAGE_FIELDS order
-- (focused.store.frontier.ack; read_page).
-- Returns per page its fetch order, its new URLs and why it is a duplicate (''), then the new
-- URLs of the other shards' links.
local frontier, vanished = open_frontier(KEYS, ARGV)
if not frontier then return vanished end
local FIRST_PAGE = 7
local key, stats = frontier.key, frontier.key.stats
local now = now_s()

-- A page's values by name (PAGE_FIELDS): lease, url, kind (page|bad|redirect|failed),
-- relevance (R), relevant ('1' or '0'), dead ('1' for a 404, a 410 or a failed lookup: its
-- host's expected cost, live_share), found (what the page counts for among the relevant pages
-- found, 0 to 1: the estimate of what is left to find), category, graph (its crawl-graph
-- record, '' for none), hub_score ('' for none), duplicate (why it is one if another shard checked it, or
-- 'near' for a near-copy the check here finds no exact duplicate; '' for not), links
-- (push_packed).
local function read_page(at)
  local page = {}
  for i, name in ipairs(PAGE_FIELDS) do page[name] = ARGV[at + i - 1] end
  page.relevant = page.relevant == '1'
  page.dead = page.dead == '1'
  page.found = tonumber(page.found) or 0
  return page
end

-- What the pages add up to, written at the end: counters (key -> field -> by; HINCRBY and
-- HINCRBYFLOAT), hash fields (key -> {field, value, ...}), sorted-set entries (key -> {score,
-- member, ...}), the R of the classified pages for the 'recent' list; per host its
-- acknowledgements, whether one came late, and its fetches; per owner its leases; the links
-- pushed, and per page the fetch order its links went out with (0: none); the crawl's fetched
-- and classified pages.
local batch = {
  counts = {}, floats = {}, hashes = {}, zsets = {}, recent = {},
  hosts = {}, owned = {}, pushes = new_pushes(), pushed = {}, owner = '-',
  fetched = tonumber(redis.call('HGET', stats, 'fetched') or '0'),
  classified = tonumber(redis.call('HGET', stats, 'classified') or '0'),
  keep_revisits = ARGV[2] == '1',
}
local fetched_before, classified_before = batch.fetched, batch.classified
local function add(into, name, field, by)
  local fields = into[name]
  if not fields then fields = {}; into[name] = fields end
  fields[field] = (fields[field] or 0) + by
end
local function append(into, name, ...)
  local list = into[name]
  if not list then list = {}; into[name] = list end
  for _, value in ipairs({...}) do list[#list + 1] = value end
end

-- What a classified page adds to the crawl's records, one block per feature (what the monitor,
-- the distiller and Badia et al. 2006's lists read): a new feature is a new block.
local function record_features(page, order, origin, member)
  local relevance = tonumber(page.relevance)
  -- The harvest curve: per CURVE_BUCKET classified pages, their sum of R and relevant pages;
  -- and the crawl's classified and relevant pages and sum of R.
  batch.classified = batch.classified + 1
  local bucket = math.floor((batch.classified - 1) / CURVE_BUCKET)
  if page.relevant then
    add(batch.counts, stats, 'relevant', 1)
    add(batch.counts, key.curve, 'relevant:' .. bucket, 1)
  end
  add(batch.floats, stats, 'relevance_sum', relevance)
  add(batch.floats, key.curve, 'relevance:' .. bucket, relevance)
  -- R of the last RECENT_LEN classified pages (trimmed at the end), newest first.
  batch.recent[#batch.recent + 1] = page.relevance
  -- The census: classified pages per category.
  add(batch.counts, key.census, page.category, 1)
  -- The crawl graph: the page's links to other servers, for the distiller.
  if page.graph ~= '' then
    append(batch.hashes, record_key(frontier, GRAPH, order), order, page.graph)
  end
  -- Badia et al. 2006's hub scores, of the pages that have one.
  if page.hub_score ~= '' then append(batch.zsets, key.hub_scores, page.hub_score, order) end
  if not page.relevant then return end
  -- Badia et al. 2006's good sites: relevant pages per site.
  add(batch.counts, key.sites, origin, 1)
  -- Badia et al. 2006's hubs: relevant pages found through each parent page.
  local parent = parent_of(member)
  if parent ~= '0' then add(batch.counts, key.found, parent, 1) end
  -- Maintenance mode: relevant pages to revisit, by R (a revisit itself is not kept again).
  if batch.keep_revisits and string.sub(member, 1, 1) ~= 'r' then
    append(batch.zsets, key.revisit, page.relevance, page.url)
  end
end

-- Acknowledge one page, why a duplicate ('' for none): its lease off 'leases' (or, run out
-- first, its URL out of its queue again), its host's tally, its fetch order and url: record,
-- its features and its links (none of a duplicate's but a near-copy's: its links may differ
-- from those of the page it copies, and the seen URLs among them are not queued again).
-- Returns its fetch order (0: failed, or a lease that does not parse) and its new URLs.
local function acknowledge(page, why)
  local kind = page.kind
  if kind == 'page' and why ~= '' then
    kind = why == 'unchanged' and 'unchanged' or 'duplicate'
  end
  local origin, packed, owner, member = split_lease(page.lease)
  if not origin or not tonumber(packed) then
    redis.call('ZREM', key.leases, page.lease)
    add(batch.counts, stats, 'corrupt', 1)
    return 0, 0
  end
  batch.owner = owner
  if owner ~= '-' then append(batch.owned, owned_key(frontier, owner), page.lease) end
  local host = batch.hosts[origin]
  if not host then
    host = {acks = 0, late = false, fetched = 0, dead = 0}
    batch.hosts[origin] = host
  end
  host.fetched = host.fetched + 1
  if page.dead then
    host.dead = host.dead + 1
    add(batch.counts, stats, 'dead', 1)
  end
  if redis.call('ZREM', key.leases, page.lease) == 1 then
    host.acks = host.acks + 1
  else
    -- The lease ran out first: the URL went back to its queue (take it out again) or was
    -- already counted as failed.
    if redis.call('ZREM', host_queue_key(frontier, origin), member) == 1 then
      add(batch.counts, stats, 'queued', -1)
    end
    add(batch.counts, stats, 'lease_late', 1)
    host.late = true
  end
  add(batch.counts, key.tries, math.floor(tonumber(packed) / TRY_UNIT), 1)
  -- The link scores' calibration: per score bucket of the leases, the URLs acknowledged and
  -- how many of them became new relevant pages, a sum of the pages' found shares; and those
  -- found crawl-wide (the estimate of what is left to find). A revisit finds nothing new.
  if string.sub(member, 1, 1) ~= 'r' then
    local bucket = score_bucket(tonumber(packed))
    add(batch.counts, key.calibration, 'n' .. bucket, 1)
    if kind == 'page' and page.found > 0 then
      add(batch.floats, key.calibration, 'r' .. bucket, page.found)
      add(batch.floats, stats, 'found', page.found)
    end
  end
  local order = 0
  if kind == 'failed' then
    add(batch.counts, stats, 'failed', 1)
  else
    batch.fetched = batch.fetched + 1
    order = batch.fetched * frontier.shards + frontier.shard
    local record = page.url
    if kind == 'page' then
      record = page.url .. '\t' .. page.relevance .. '\t' .. page.category .. '\t'
        .. (page.relevant and '1' or '0')
      record_features(page, order, origin, member)
    else
      add(batch.counts, stats, kind, 1)
    end
    append(batch.hashes, record_key(frontier, URLS, order), order, record)
  end
  if why ~= '' and why ~= NEAR_COPY then return order, 0 end
  return order, push_packed(frontier, batch.pushes, page.links, order)
end

-- The duplicates checks, in the batch's order: of two pages with one text, the first is the
-- original. checked: why each of this call's pages is a duplicate, by place.
local checked = {}
if ARGV[5] ~= '' then
  local has_known = nil
  for _, check in ipairs(cjson.decode(ARGV[5])) do
    local sum, fp, text, known = check[1], check[2], check[6], check[7]
    if text == '' then  -- checked here, whole
      text = text_state(key.checksums, sum, fp, false)
      if has_known == nil then has_known = redis.call('EXISTS', key.known) == 1 end
      known = has_known and redis.call('HGET', key.known, fp)
    end
    checked[check[5]] = duplicate_of(key.modified, fp, check[3], check[4] == '1', text,
                                     known ~= '' and known, sum) or ''
  end
end
-- The links of pages acknowledged on other shards, to this shard's hosts.
local riders = 0
if ARGV[6] ~= '' then
  local given = cjson.decode(ARGV[6])
  for i = 1, #given, 2 do
    riders = riders + push_packed(frontier, batch.pushes, given[i + 1], given[i])
  end
end
local out = {}
local place_of_page = 0
for at = FIRST_PAGE, #ARGV, #PAGE_FIELDS do
  place_of_page = place_of_page + 1
  local page = read_page(at)
  local why = checked[place_of_page]
  if not why or why == '' then why = page.duplicate end  -- a near-copy's, if not an exact one
  local order, new = acknowledge(page, why)
  batch.pushed[#batch.pushed + 1] = (why == '' or why == NEAR_COPY) and order or 0
  out[#out + 1] = order
  out[#out + 1] = new
  out[#out + 1] = why
end

-- What the batch adds up to.
-- The hosts: their slots free again, their fetched and dead pages counted, their delay from
-- now on (a later time set by back_off is kept; as hold() does, in one read and one write),
-- and their places.
for origin, host in pairs(batch.hosts) do
  local state = redis.call('HMGET', host_key(frontier, origin), HOST_FIELD.leased,
                           HOST_FIELD.due, HOST_FIELD.fetched, HOST_FIELD.domain,
                           HOST_FIELD.dead)
  local leased = tonumber(state[1] or '0') - host.acks
  local due = tonumber(state[2] or '0')
  local fetched = tonumber(state[3] or '0') + host.fetched
  if fetched == host.fetched then add(batch.counts, stats, 'hosts', 1) end
  if state[4] then
    add(batch.counts, domain_key(frontier, state[4]), DOMAIN_FIELD.fetched, host.fetched)
  end
  if host.acks > 0 then due = held_until(frontier, due, now) end
  redis.call('HSET', host_key(frontier, origin), HOST_FIELD.leased, leased,
             HOST_FIELD.due, as_seconds(due), HOST_FIELD.fetched, fetched,
             HOST_FIELD.dead, tonumber(state[5] or '0') + host.dead)
  if not host.late and leased + host.acks >= frontier.concurrency then
    place(frontier, origin, now, due)  -- the host was full: in neither 'ready' nor 'wait'
  else
    schedule(frontier, origin, now, leased, due)
  end
end
add(batch.counts, stats, 'fetched', batch.fetched - fetched_before)
add(batch.counts, stats, 'classified', batch.classified - classified_before)
for owned, leases in pairs(batch.owned) do redis.call('SREM', owned, unpack(leases)) end
for name, fields in pairs(batch.hashes) do redis.call('HSET', name, unpack(fields)) end
for name, entries in pairs(batch.zsets) do redis.call('ZADD', name, unpack(entries)) end
if #batch.recent > 0
    and redis.call('LPUSH', key.recent, unpack(batch.recent)) > RECENT_LEN + 100 then
  redis.call('LTRIM', key.recent, 0, RECENT_LEN - 1)
end
for name, fields in pairs(batch.counts) do
  for field, by in pairs(fields) do
    if by ~= 0 then redis.call('HINCRBY', name, field, by) end
  end
end
for name, fields in pairs(batch.floats) do
  for field, by in pairs(fields) do
    redis.call('HINCRBYFLOAT', name, field, string.format('%.17g', by))
  end
end
-- The outbox: the links to other shards' hosts, under the first fetch order that has some,
-- with the order each page's links go out with; and the entries delivered since the last call.
if ARGV[3] ~= '' then
  for _, order in ipairs(batch.pushed) do
    if order > 0 then
      redis.call('HSET', key.outbox, order, batch.owner .. ' ' .. as_seconds(now) .. ' '
                 .. table.concat(batch.pushed, ',') .. ' ' .. ARGV[3])
      break
    end
  end
end
local delivered = {}
for order in string.gmatch(ARGV[4], '%d+') do delivered[#delivered + 1] = order end
if #delivered > 0 then redis.call('HDEL', key.outbox, unpack(delivered)) end
place_heads(frontier, batch.pushes, batch.hosts, now)
out[#out + 1] = riders
return out
