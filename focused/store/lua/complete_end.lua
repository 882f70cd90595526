  -- The end of a page's acknowledgement (after complete.lua and the features' fragments): the
  -- tries histogram and the page's links to hosts of this shard (none of a duplicate's).
  local pushes = ok and why == ''
  if ok then add(counts, k(TRIES), math.floor(tonumber(s) / TRY_UNIT), 1) end
  if pushes then
    new = push_packed(ARGV[a + 9], order, best, head)
    new_total = new_total + new
  end
  pushed[#pushed + 1] = pushes and order or 0
  out[#out + 1] = order
  out[#out + 1] = new
  out[#out + 1] = why
end
-- What the batch adds up to.
-- The hosts: their slots free again, their fetched pages counted, their delay from now on
-- (a later time set by back_off is kept; as hold() does, in one read and one write), and
-- their places.
for o, host in pairs(hosts) do
  local state = redis.call('HMGET', hkey(o), 'i', 'n', 'c', 'd')
  local inflight = tonumber(state[1] or '0') - host.acks
  local nxt = tonumber(state[2] or '0')
  local crawled = tonumber(state[3] or '0') + host.fetched
  if crawled == host.fetched then add(counts, k(STATS), 'hosts', 1) end
  if state[4] then add(counts, dkey(state[4]), 'p', host.fetched) end
  if host.acks > 0 then nxt = held_until(nxt, now) end
  redis.call('HSET', hkey(o), 'i', inflight, 'n', secs(nxt), 'c', crawled)
  if not host.late and inflight + host.acks >= CONC then
    place(o, now, nxt)  -- the host was full: in neither 'ready' nor 'wait'
  else
    schedule(o, now, inflight, nxt)
  end
end
add(counts, k(STATS), 'fetched', fetched - fetched_before)
add(counts, k(STATS), 'classified', classified - classified_before)
for key, leases in pairs(owned) do redis.call('SREM', key, unpack(leases)) end
for key, fields in pairs(hashes) do redis.call('HSET', key, unpack(fields)) end
for key, entries in pairs(zsets) do redis.call('ZADD', key, unpack(entries)) end
if #recent > 0 and redis.call('LPUSH', k(RECENT), unpack(recent)) > RECENT_LEN + 100 then
  redis.call('LTRIM', k(RECENT), 0, RECENT_LEN - 1)
end
for key, fields in pairs(counts) do
  for field, by in pairs(fields) do
    if by ~= 0 then redis.call('HINCRBY', key, field, by) end
  end
end
for key, fields in pairs(floats) do
  for field, by in pairs(fields) do
    redis.call('HINCRBYFLOAT', key, field, string.format('%.17g', by))
  end
end
-- The outbox: the links to other shards' hosts, under the first fetch order that has some,
-- with the order each page's links go out with; and the entries delivered since the last call.
if ARGV[5] ~= '' then
  for _, order in ipairs(pushed) do
    if order > 0 then
      redis.call('HSET', k(OUTBOX), order,
                 owner .. ' ' .. secs(now) .. ' ' .. table.concat(pushed, ',') .. ' ' .. ARGV[5])
      break
    end
  end
end
local done = {}
for order in string.gmatch(ARGV[6], '%d+') do done[#done + 1] = order end
if #done > 0 then redis.call('HDEL', k(OUTBOX), unpack(done)) end
place_heads(best, head, hosts, now, new_total + riders)
out[#out + 1] = riders
for _, why in ipairs(verdicts) do out[#out + 1] = why end
return out
