-- KEYS[1]: the crawl's key prefix (every key touched is under it).
-- ARGV: agent, then pairs (weight index, change). Adds one process's changes to a live agent's
-- weights; a dead agent's are dropped.
local p, agent = KEYS[1], ARGV[1]
if redis.call('HEXISTS', p .. AGENT_ENERGY, agent) == 0 then return 0 end
local key = p .. AGENT_WEIGHTS .. agent
local w = cjson.decode(redis.call('GET', key))
for i = 2, #ARGV, 2 do
  local j = tonumber(ARGV[i]) + 1
  w[j] = w[j] + tonumber(ARGV[i + 1])
end
redis.call('SET', key, cjson.encode(w))
return 1
