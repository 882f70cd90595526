-- ARGV: shard, conc, delay, then (origin, member, packed) triples: the distiller's re-boost
local touched = {}
local raised = 0
for i = 4, #ARGV, 3 do
  local n = redis.call('ZADD', qkey(ARGV[i]), 'XX', 'LT', 'CH', ARGV[i + 2], ARGV[i + 1])
  if n > 0 then
    raised = raised + n
    touched[ARGV[i]] = true
  end
end
local now = now_s()
for o in pairs(touched) do schedule(o, now) end
if raised > 0 then redis.call('HINCRBY', k(STATS), 'reboosted', raised) end
return raised
