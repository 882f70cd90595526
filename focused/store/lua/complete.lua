-- A batch of acknowledgements (RedisFrontier.complete_many), one round trip for the lot: per
-- page the lease, the duplicates check, the host, the fetch order and the url: record. The
-- features' fragments (complete_*.lua) follow it inside the loop over pages, then
-- complete_end.lua (focused.store.scripts joins them), which ends the loop and writes what
-- the pages add up to: a counter moves once a batch, not once a page.
-- ARGV: shard, conc, delay, '1' to keep relevant pages for revisits, links to hosts of other
-- shards ('' for none: JSON, kept in 'outbox' until they are pushed there), fetch orders whose
-- outbox entries are delivered, the duplicates checks to make, in the batch's order ('' for
-- none: JSON, [checksum, fingerprint, Last-Modified, '1' for a revisit, the page's place
-- among this call's pages or 0 for a page of another shard] each; on a cluster only the first
-- shard, which holds the crawl-wide keys, checks), links of pages acknowledged on other
-- shards for this one's hosts ('' for none: JSON, parent and packed links in turn); then
-- PAGE_ARGS values a page: lease, url, kind (page|bad|redirect|failed), relevance, relevant,
-- category, graph record ('' for none), hub score ('' for none), why it is a duplicate if
-- another shard checked it ('' for not), its links (push_packed).
-- Returns per page its fetch order, new URLs and why it is a duplicate (''), then the new URLs
-- of the other shards' links, then the verdicts of the other shards' pages.
local PAGE_ARGS = 10
local revisits = ARGV[4] == '1'
local now = now_s()
-- What the pages add up to, written at the end: counters (key -> field -> by; HINCRBY and
-- HINCRBYFLOAT), hash fields (key -> {field, value, ...}), sorted-set entries, and the R of
-- the classified pages for the 'recent' list.
local counts, floats, hashes, zsets, recent = {}, {}, {}, {}, {}
local function add(into, key, field, by)
  local fields = into[key]
  if not fields then fields = {}; into[key] = fields end
  fields[field] = (fields[field] or 0) + by
end
local function append(into, key, ...)
  local list = into[key]
  if not list then list = {}; into[key] = list end
  for _, v in ipairs({...}) do list[#list + 1] = v end
end
local has_known = redis.call('EXISTS', k(KNOWN)) == 1
local fetched = tonumber(redis.call('HGET', k(STATS), 'fetched') or '0')
local classified = tonumber(redis.call('HGET', k(STATS), 'classified') or '0')
local fetched_before, classified_before = fetched, classified
local hosts, owned = {}, {}  -- origin -> {acks, late, fetched}; owner -> its leases
local best, head, new_total = {}, {}, 0
local pushed, owner = {}, '-'  -- per page the order its links went out with (0: none)
local out = {}
-- The checks, in the batch's order: of two pages with one text, the first is the original.
local verdicts, checked = {}, {}  -- other shards' pages' verdicts; this call's, by place
if ARGV[7] ~= '' then
  for _, c in ipairs(cjson.decode(ARGV[7])) do
    local why = duplicate_of(k(CHECKSUMS), k(MODIFIED), k(KNOWN), has_known, c[1], c[2], c[3],
                             c[4] == '1') or ''
    if c[5] == 0 then verdicts[#verdicts + 1] = why else checked[c[5]] = why end
  end
end
local riders = 0
if ARGV[8] ~= '' then
  local given = cjson.decode(ARGV[8])
  for i = 1, #given, 2 do riders = riders + push_packed(given[i + 1], given[i], best, head) end
end
for a = 9, #ARGV, PAGE_ARGS do
  local lm, url, kind = ARGV[a], ARGV[a + 1], ARGV[a + 2]
  local relevance, relevant, category = ARGV[a + 3], ARGV[a + 4] == '1', ARGV[a + 5]
  local graph, hub = ARGV[a + 6], ARGV[a + 7]
  local why = checked[(a - 9) / PAGE_ARGS + 1] or ARGV[a + 8]
  if kind == 'page' and why ~= '' then kind = why == 'unchanged' and 'unchanged' or 'duplicate' end
  local page = kind == 'page'
  local o, s, w, m = split_lease(lm)
  local ok = o and tonumber(s)
  local order, new = 0, 0
  if not ok then
    redis.call('ZREM', k(LEASES), lm)
    add(counts, k(STATS), 'corrupt', 1)
    page = false
  else
    owner = w
    if w ~= '-' then append(owned, k(OWNED) .. w, lm) end
    local host = hosts[o]
    if not host then host = {acks = 0, late = false, fetched = 0}; hosts[o] = host end
    host.fetched = host.fetched + 1
    if redis.call('ZREM', k(LEASES), lm) == 1 then
      host.acks = host.acks + 1
    else
      -- The lease ran out first: the URL went back to its queue (take it out again) or was
      -- already counted as failed.
      if redis.call('ZREM', qkey(o), m) == 1 then add(counts, k(STATS), 'queued', -1) end
      add(counts, k(STATS), 'lease_late', 1)
      host.late = true
    end
    if kind == 'failed' then
      add(counts, k(STATS), 'failed', 1)
    else
      fetched = fetched + 1
      order = fetched * SHARD_COUNT + SHARD
      local record = url
      if page then record = url .. '\t' .. relevance .. '\t' .. category end
      append(hashes, record_key(URLS, order), order, record)
      if not page then add(counts, k(STATS), kind, 1) end
    end
  end
