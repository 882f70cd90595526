-- A page's acknowledgement (RedisFrontier.complete): the lease, the host, the fetch order and
-- the url: record. The features' fragments (complete_*.lua) follow it, then complete_end.lua
-- (focused.store.scripts joins them), so a page costs one round trip.
-- ARGV: shard, conc, delay, lease, url, kind (page|bad|redirect|failed), relevance, relevant,
-- category, graph record ('' for none), hub score ('' for none), '1' to keep relevant pages for
-- revisits, links to hosts of other shards ('' for none: JSON, kept in 'outbox' until they are
-- pushed there), fetch orders whose outbox entries are delivered, links...
local lm, url, kind = ARGV[4], ARGV[5], ARGV[6]
-- What the fragments read besides: o, m and order below, and a classified page's (kind
-- 'page') R, whether it is relevant, its category, graph record and hub score, and whether
-- relevant pages are kept for revisits.
local page = kind == 'page'
local relevance, relevant, category = ARGV[7], ARGV[8] == '1', ARGV[9]
local graph, hub, revisits = ARGV[10], ARGV[11], ARGV[12] == '1'
local now = now_s()
local o, s, w, m = split_lease(lm)
if not o or not tonumber(s) then
  redis.call('ZREM', k(LEASES), lm)
  redis.call('HINCRBY', k(STATS), 'corrupt', 1)
  return {0, 0}
end
if w ~= '-' then redis.call('SREM', k(OWNED) .. w, lm) end
local inflight, nxt
if redis.call('ZREM', k(LEASES), lm) == 1 then
  inflight = redis.call('HINCRBY', hkey(o), 'i', -1)
  nxt = hold(o, now)
else
  -- The lease ran out first: the URL went back to its queue (take it out again) or was
  -- already counted as failed.
  if redis.call('ZREM', qkey(o), m) == 1 then
    redis.call('HINCRBY', k(STATS), 'queued', -1)
  end
  redis.call('HINCRBY', k(STATS), 'lease_late', 1)
end
if redis.call('HINCRBY', hkey(o), 'c', 1) == 1 then
  redis.call('HINCRBY', k(STATS), 'hosts', 1)
end
local order = 0
if kind == 'failed' then
  redis.call('HINCRBY', k(STATS), 'failed', 1)
else
  order = redis.call('HINCRBY', k(STATS), 'fetched', 1) * SHARD_COUNT + SHARD
  local record = url
  if page then record = url .. '\t' .. relevance .. '\t' .. category end
  redis.call('HSET', record_key(URLS, order), order, record)
  if not page then redis.call('HINCRBY', k(STATS), kind, 1) end
end
