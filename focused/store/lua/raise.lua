-- ARGV: shard, conc, delay, how, then (origin, member, packed) triples: queued URLs given new
-- scores. how = 'raise': only up (the distiller's re-boost), counted as 'reboosted'; 'set': up
-- or down (a refitted topic's new estimates), counted as 'rescored'. Members no longer queued
-- (popped meanwhile) are left out.
local up = ARGV[4] == 'raise'
local touched = {}
local moved = 0
for i = 5, #ARGV, 3 do
  local n
  if up then
    n = redis.call('ZADD', qkey(ARGV[i]), 'XX', 'LT', 'CH', ARGV[i + 2], ARGV[i + 1])
  else
    n = redis.call('ZADD', qkey(ARGV[i]), 'XX', 'CH', ARGV[i + 2], ARGV[i + 1])
  end
  if n > 0 then
    moved = moved + n
    touched[ARGV[i]] = true
  end
end
local now = now_s()
for o in pairs(touched) do schedule(o, now) end
if moved > 0 then redis.call('HINCRBY', k(STATS), up and 'reboosted' or 'rescored', moved) end
return moved
