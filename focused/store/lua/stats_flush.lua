-- KEYS[1]: the crawl's ``scrapy`` hash. ARGV: counts of set, inc and max entries, then
-- (name, value) pairs: sets, increments, maxima, and minima to the end.
local h = KEYS[1]
local n_set, n_inc, n_max = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local i = 4
for _ = 1, n_set do
  redis.call('HSET', h, ARGV[i], ARGV[i + 1])
  i = i + 2
end
for _ = 1, n_inc do
  redis.pcall('HINCRBYFLOAT', h, ARGV[i], ARGV[i + 1])  -- a non-number there stays as it is
  i = i + 2
end
local last = i + 2 * n_max
while i < #ARGV do
  local old = tonumber(redis.call('HGET', h, ARGV[i]))
  local new = tonumber(ARGV[i + 1])
  if old == nil or (i < last and new > old) or (i >= last and new < old) then
    redis.call('HSET', h, ARGV[i], ARGV[i + 1])
  end
  i = i + 2
end
