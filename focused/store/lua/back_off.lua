-- Leave a host alone (RedisFrontier.back_off: a server's Retry-After). ARGV[2]: its origin,
-- ARGV[3]: for how many seconds from now; a later time already set is kept.
local frontier, vanished = open_frontier(KEYS, ARGV)
if not frontier then return vanished end
local origin, now = ARGV[2], now_s()
local due = now + tonumber(ARGV[3])
local host = host_key(frontier, origin)
if due > tonumber(redis.call('HGET', host, HOST_FIELD.due) or '0') then
  redis.call('HSET', host, HOST_FIELD.due, as_seconds(due))
end
redis.call('HINCRBY', frontier.key.stats, 'backed_off', 1)
schedule(frontier, origin, now)
return 1
