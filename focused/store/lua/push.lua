-- ARGV: shard, conc, delay, then pairs of parent (fetch order, 0 for none) and its packed
-- links (push_packed). Returns the number of new URLs.
local best, head, new = {}, {}, 0
for i = 4, #ARGV, 2 do new = new + push_packed(ARGV[i + 1], ARGV[i], best, head) end
place_heads(best, head, {}, now_s(), new)
return new
