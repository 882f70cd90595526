-- ARGV: shard, conc, delay, origin, seconds: the host asked to be left alone (Retry-After)
local o, now = ARGV[4], now_s()
local nxt = now + tonumber(ARGV[5])
if nxt > tonumber(redis.call('HGET', hkey(o), 'n') or '0') then
  redis.call('HSET', hkey(o), 'n', secs(nxt))
end
redis.call('HINCRBY', k(STATS), 'backed_off', 1)
schedule(o, now)
return 1
