-- The end of a page's acknowledgement (after complete.lua and the features' fragments): the
-- tries histogram, the outbox, the page's links, the host's place; returns {order, new URLs}.
redis.call('HINCRBY', k(TRIES), math.floor(tonumber(s) / TRY_UNIT), 1)
if ARGV[13] ~= '' and order > 0 then
  redis.call('HSET', k(OUTBOX), order, w .. ' ' .. secs(now) .. ' ' .. ARGV[13])
end
for done in string.gmatch(ARGV[14], '%d+') do redis.call('HDEL', k(OUTBOX), done) end
local new = push_links(15, order, now, o)
if inflight and inflight + 1 >= CONC then
  place(o, now, nxt)  -- the host was full: in neither 'ready' nor 'wait'
else
  schedule(o, now, inflight, nxt)
end
return {order, new}
