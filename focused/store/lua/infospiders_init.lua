-- KEYS[1]: the crawl's key prefix (every key touched is under it).
-- ARGV: initial energy, then each agent's weights (JSON). Creates the population only if no
-- agent lives, so processes starting at once create it once.
local p = KEYS[1]
if redis.call('HLEN', p .. AGENT_ENERGY) > 0 then return 0 end
for i = 2, #ARGV do
  local id = redis.call('INCR', p .. AGENT_IDS)
  redis.call('HSET', p .. AGENT_ENERGY, id, ARGV[1])
  redis.call('SET', p .. AGENT_WEIGHTS .. id, ARGV[i])
end
return #ARGV - 1
