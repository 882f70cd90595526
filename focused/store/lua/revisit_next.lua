-- KEYS: revisit, revisit:next. ARGV: count. Pops the best pages not revisited in this cycle
-- (a new cycle when none is left) and keeps them for the next; returns URLs.
if redis.call('EXISTS', KEYS[1]) == 0 then
  if redis.call('EXISTS', KEYS[2]) == 0 then return {} end
  redis.call('RENAME', KEYS[2], KEYS[1])
end
local popped = redis.call('ZPOPMAX', KEYS[1], ARGV[1])
local urls = {}
for i = 1, #popped, 2 do
  redis.call('ZADD', KEYS[2], popped[i + 1], popped[i])
  urls[#urls + 1] = popped[i]
end
return urls
