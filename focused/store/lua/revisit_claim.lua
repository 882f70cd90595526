-- KEYS: maintain. ARGV: pages fetched (crawl-wide), pages per round. Claims a round when that
-- many pages were fetched since the last one (of any process): returns 1, else 0.
local fetched = tonumber(ARGV[1])
local last = tonumber(redis.call('HGET', KEYS[1], 'fetched') or '0')
if fetched - last < tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'fetched', fetched)
redis.call('HINCRBY', KEYS[1], 'rounds', 1)
return 1
