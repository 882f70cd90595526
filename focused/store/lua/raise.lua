-- Give queued URLs new scores (RedisFrontier.raise_to, rescore). ARGV[2]: how, 'raise' (only
-- up: the distiller's re-boost, counted as 'reboosted') or 'set' (up or down: a refitted
-- topic's new estimates, counted as 'rescored'); ARGV[3] on: (origin, member, packed order)
-- triples. Members no longer queued (popped meanwhile) are left out. Returns how many moved.
local frontier, vanished = open_frontier(KEYS, ARGV)
if not frontier then return vanished end
local only_up = ARGV[2] == 'raise'
local touched, moved = {}, 0
for i = 3, #ARGV, 3 do
  local origin, member, packed = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local queue, changed = host_queue_key(frontier, origin)
  if only_up then
    changed = redis.call('ZADD', queue, 'XX', 'LT', 'CH', packed, member)
  else
    changed = redis.call('ZADD', queue, 'XX', 'CH', packed, member)
  end
  if changed > 0 then
    moved = moved + changed
    touched[origin] = true
  end
end
local now = now_s()
for origin in pairs(touched) do schedule(frontier, origin, now) end
if moved > 0 then
  redis.call('HINCRBY', frontier.key.stats, only_up and 'reboosted' or 'rescored', moved)
end
return moved
