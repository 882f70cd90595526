-- KEYS[1]: the crawl's key prefix (every key touched is under it).
-- ARGV: bucket, field, reward, cost, reproduce, max agents, initial energy, pick.
-- Credits a fetched page to the agent that queued it (or a live one picked by `pick`), marks
-- its record fetched, moves the agent's energy, splits or kills it. Returns agent, its record's
-- features, event (born, died, reseeded or ""), child, owner of the page's out-links, adopted
-- (1/0), the agent's energy and the live agents.
local p = KEYS[1]
local energy = p .. AGENT_ENERGY
local by = p .. QUEUED_BY .. ARGV[1]
local record = redis.call('HGET', by, ARGV[2])
redis.call('HSET', by, ARGV[2], '-')
local pick = tonumber(ARGV[8])
local function any_agent()
  local ids = redis.call('HKEYS', energy)
  if #ids == 0 then return '' end
  table.sort(ids, function(a, b) return tonumber(a) < tonumber(b) end)
  return ids[pick % #ids + 1]
end
local agent, features, adopted = '', '', 0
if record and record ~= '-' then
  local space = string.find(record, ' ', 1, true)
  agent, features = string.sub(record, 1, space - 1), string.sub(record, space + 1)
end
if agent == '' or redis.call('HEXISTS', energy, agent) == 0 then
  agent, features, adopted = any_agent(), '', 1
  if agent == '' then return {'', '', '', '', '', 0, '0', 0} end
end
local reward, cost = tonumber(ARGV[3]), tonumber(ARGV[4])
local reproduce, most, initial = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local e = tonumber(redis.call('HINCRBYFLOAT', energy, agent, reward - cost))
local alive = redis.call('HLEN', energy)
local event, child, owner = '', '', agent
if e <= 0 then
  if alive > 1 then
    redis.call('HDEL', energy, agent)
    redis.call('DEL', p .. AGENT_WEIGHTS .. agent)
    redis.call('HINCRBY', p .. AGENT_EVENTS, 'deaths', 1)
    alive, event, owner = alive - 1, 'died', any_agent()
  else
    e, event = initial, 'reseeded'
    redis.call('HSET', energy, agent, e)
    redis.call('HINCRBY', p .. AGENT_EVENTS, 'reseeds', 1)
  end
elseif e > reproduce then
  if alive < most then
    child = tostring(redis.call('INCR', p .. AGENT_IDS))
    e = e / 2
    redis.call('HSET', energy, agent, e, child, e)
    redis.call('SET', p .. AGENT_WEIGHTS .. child, redis.call('GET', p .. AGENT_WEIGHTS .. agent))
    redis.call('HINCRBY', p .. AGENT_EVENTS, 'births', 1)
    alive, event = alive + 1, 'born'
  else
    e = reproduce
    redis.call('HSET', energy, agent, e)
  end
end
return {agent, features, event, child, owner, adopted, tostring(e), alive}
