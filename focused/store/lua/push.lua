-- Queue links (RedisFrontier.push_many, and the links of pages acknowledged on other shards).
-- ARGV[2] on: pairs of parent (its fetch order, 0 for none) and its links (push_packed).
-- Returns the number of new URLs.
local frontier, vanished = open_frontier(KEYS, ARGV)
if not frontier then return vanished end
local pushes = new_pushes()
for i = 2, #ARGV, 2 do push_packed(frontier, pushes, ARGV[i + 1], ARGV[i]) end
place_heads(frontier, pushes, {}, now_s())
return pushes.new
