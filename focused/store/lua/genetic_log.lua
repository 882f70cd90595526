-- Log one page and tell whether a generation is due: (pages logged, pages at the last one).
-- KEYS: genetic hash, edge-log prefix; ARGV: pages per bucket, record.
local n = redis.call('HINCRBY', KEYS[1], 'pages', 1)
redis.call('APPEND', KEYS[2] .. math.floor((n - 1) / tonumber(ARGV[1])), ARGV[2])
return {n, tonumber(redis.call('HGET', KEYS[1], 'last') or '0')}
