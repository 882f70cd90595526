-- Drop the worst queued URLs beyond a maximum, for good (RedisFrontier.drop_worst). ARGV[2]:
-- the maximum (this shard's share). A host with queued URLs is in 'ready', 'wait' or 'held',
-- or has all its slots leased (then it is in 'leases'), so those list every such host at a
-- cost bounded by the queue, not by the hosts ever crawled. A heap of hosts by their worst
-- queued URL then yields the worst URLs overall one by one, each host's from its tail: the
-- work is one read per host and per URL dropped, never a sort of the whole queue. Returns
-- how many were dropped.
local frontier, vanished = open_frontier(KEYS, ARGV)
if not frontier then return vanished end
local stats = frontier.key.stats
local excess = tonumber(redis.call('HGET', stats, 'queued') or '0') - tonumber(ARGV[2])
if excess <= 0 then return 0 end
-- A max-heap of hosts in three arrays (no table per step): per node the packed order of the
-- host's next URL to drop, the host, and how many of its URLs were taken before that one.
local scores, origins, taken = {}, {}, {}
local function worse(i, j)
  return scores[i] > scores[j] or (scores[i] == scores[j] and origins[i] < origins[j])
end
local function swap(i, j)
  scores[i], scores[j] = scores[j], scores[i]
  origins[i], origins[j] = origins[j], origins[i]
  taken[i], taken[j] = taken[j], taken[i]
end
local function sift_up(i)
  while i > 1 and worse(i, math.floor(i / 2)) do
    swap(i, math.floor(i / 2))
    i = math.floor(i / 2)
  end
end
local function sift_down(i)
  while true do
    local top, left, right = i, 2 * i, 2 * i + 1
    if left <= #scores and worse(left, top) then top = left end
    if right <= #scores and worse(right, top) then top = right end
    if top == i then return end
    swap(i, top)
    i = top
  end
end
-- Put a host in the heap by its (cut + 1)-th worst queued URL, if it has one.
local function offer(origin, cut)
  local tail = redis.call('ZRANGE', host_queue_key(frontier, origin), -cut - 1, -cut - 1,
                          'WITHSCORES')
  if #tail > 0 then
    local n = #scores + 1
    scores[n], origins[n], taken[n] = tonumber(tail[2]), origin, cut
    sift_up(n)
  end
end
local listed = {}
local function list(origin)
  if not listed[origin] then
    listed[origin] = true
    offer(origin, 0)
  end
end
for _, origin in ipairs(redis.call('ZRANGE', frontier.key.ready, 0, -1)) do list(origin) end
for _, origin in ipairs(redis.call('ZRANGE', frontier.key.wait, 0, -1)) do list(origin) end
for _, origin in ipairs(redis.call('ZRANGE', frontier.key.held, 0, -1)) do list(origin) end
for _, lease in ipairs(redis.call('ZRANGE', frontier.key.leases, 0, -1)) do
  local origin = split_lease(lease)
  if origin then list(origin) end
end
local cuts, dropped = {}, 0  -- host -> how many of its worst URLs go
while dropped < excess and #scores > 0 do
  local origin, cut, last = origins[1], taken[1] + 1, #scores
  swap(1, last)
  scores[last], origins[last], taken[last] = nil, nil, nil
  sift_down(1)
  dropped = dropped + 1
  cuts[origin] = cut
  offer(origin, cut)
end
local now = now_s()
for origin, cut in pairs(cuts) do
  redis.call('ZREMRANGEBYRANK', host_queue_key(frontier, origin), -cut, -1)
  schedule(frontier, origin, now)
end
if dropped > 0 then
  redis.call('HINCRBY', stats, 'queued', -dropped)
  redis.call('HINCRBY', stats, 'dropped/buffer', dropped)
end
return dropped
