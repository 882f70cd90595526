-- Queue known pages again (RedisFrontier.requeue, maintenance mode). ARGV[2] on: (origin,
-- member, packed order) triples; a URL already queued is left as it is. Returns how many were
-- queued, also counted as 'revisits'.
local frontier, vanished = open_frontier(KEYS, ARGV)
if not frontier then return vanished end
local touched, queued = {}, 0
for i = 2, #ARGV, 3 do
  local origin, member, packed = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  if redis.call('ZADD', host_queue_key(frontier, origin), 'NX', packed, member) == 1 then
    queued = queued + 1
    touched[origin] = true
  end
end
local now = now_s()
for origin in pairs(touched) do schedule(frontier, origin, now) end
if queued > 0 then
  redis.call('HINCRBY', frontier.key.stats, 'queued', queued)
  redis.call('HINCRBY', frontier.key.stats, 'revisits', queued)
end
return queued
