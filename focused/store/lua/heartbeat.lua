-- KEYS: procs, proc:<id>. ARGV: the records' key prefix (``proc:``), id, expiry (ms), then
-- the record's (field, value) pairs. Stamps the beat (and the start, once) with Redis's clock
-- and forgets the ids of processes whose records expired.
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local stamp = string.format('%.3f', now)
redis.call('HSET', KEYS[2], 'beat', stamp, unpack(ARGV, 4))
redis.call('HSETNX', KEYS[2], 'started', stamp)
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('ZADD', KEYS[1], stamp, ARGV[2])
-- ids not heard from in a minute whose records expired
local quiet = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - 60, 'LIMIT', 0, 100)
for _, id in ipairs(quiet) do
  if redis.call('EXISTS', ARGV[1] .. id) == 0 then
    redis.call('ZREM', KEYS[1], id)
  end
end
