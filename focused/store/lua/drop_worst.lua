-- ARGV: shard, conc, delay, max_queued. A host with queued URLs is in 'ready', 'wait' or
-- 'held', or has all its slots leased (then it is in 'leases'), so those list every such host at a
-- cost bounded by the queue, not by the hosts ever crawled. A heap of hosts by their worst
-- queued URL then yields the worst URLs overall one by one, each host's from its tail: the
-- work is one read per host and per URL dropped, never a sort of the whole queue.
local excess = tonumber(redis.call('HGET', k(STATS), 'queued') or '0') - tonumber(ARGV[4])
if excess <= 0 then return 0 end
-- A max-heap of hosts in three arrays (score, origin, URLs cut so far): no table per step.
local hs, ho, hc, listed = {}, {}, {}, {}
local function worse(i, j) return hs[i] > hs[j] or (hs[i] == hs[j] and ho[i] < ho[j]) end
local function swap(i, j)
  hs[i], hs[j] = hs[j], hs[i]
  ho[i], ho[j] = ho[j], ho[i]
  hc[i], hc[j] = hc[j], hc[i]
end
local function sift_up(i)
  while i > 1 and worse(i, math.floor(i / 2)) do
    swap(i, math.floor(i / 2))
    i = math.floor(i / 2)
  end
end
local function sift_down(i)
  while true do
    local top, l, r = i, 2 * i, 2 * i + 1
    if l <= #hs and worse(l, top) then top = l end
    if r <= #hs and worse(r, top) then top = r end
    if top == i then return end
    swap(i, top)
    i = top
  end
end
-- Put host o in the heap by its (cut + 1)-th worst queued URL, if it has one.
local function offer(o, cut)
  local tail = redis.call('ZRANGE', qkey(o), -cut - 1, -cut - 1, 'WITHSCORES')
  if #tail > 0 then
    local n = #hs + 1
    hs[n], ho[n], hc[n] = tonumber(tail[2]), o, cut
    sift_up(n)
  end
end
local function list(o)
  if not listed[o] then
    listed[o] = true
    offer(o, 0)
  end
end
for _, o in ipairs(redis.call('ZRANGE', k(READY), 0, -1)) do list(o) end
for _, o in ipairs(redis.call('ZRANGE', k(WAIT), 0, -1)) do list(o) end
for _, o in ipairs(redis.call('ZRANGE', k(HELD), 0, -1)) do list(o) end
for _, lm in ipairs(redis.call('ZRANGE', k(LEASES), 0, -1)) do
  local o = split_lease(lm)
  if o then list(o) end
end
local cuts, dropped = {}, 0
while dropped < excess and #hs > 0 do
  local o, cut, last = ho[1], hc[1] + 1, #hs
  swap(1, last)
  hs[last], ho[last], hc[last] = nil, nil, nil
  sift_down(1)
  dropped = dropped + 1
  cuts[o] = cut
  offer(o, cut)
end
local now = now_s()
for o, cut in pairs(cuts) do
  redis.call('ZREMRANGEBYRANK', qkey(o), -cut, -1)
  schedule(o, now)
end
if dropped > 0 then
  redis.call('HINCRBY', k(STATS), 'queued', -dropped)
  redis.call('HINCRBY', k(STATS), 'dropped/buffer', dropped)
end
return dropped
