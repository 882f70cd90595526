-- ARGV: shard, conc, delay, then (origin, member, packed) triples: known pages to fetch again
local touched = {}
local queued = 0
for i = 4, #ARGV, 3 do
  if redis.call('ZADD', qkey(ARGV[i]), 'NX', ARGV[i + 2], ARGV[i + 1]) == 1 then
    queued = queued + 1
    touched[ARGV[i]] = true
  end
end
local now = now_s()
for o in pairs(touched) do schedule(o, now) end
if queued > 0 then
  redis.call('HINCRBY', k(STATS), 'queued', queued)
  redis.call('HINCRBY', k(STATS), 'revisits', queued)
end
return queued
