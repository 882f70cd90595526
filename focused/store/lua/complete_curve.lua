-- The harvest curve: per CURVE_BUCKET classified pages, their sum of R and relevant pages;
-- and the crawl's classified and relevant pages and sum of R.
if page then
  local n = redis.call('HINCRBY', k(STATS), 'classified', 1)
  local bucket = math.floor((n - 1) / CURVE_BUCKET)
  if relevant then
    redis.call('HINCRBY', k(STATS), 'relevant', 1)
    redis.call('HINCRBY', k(CURVE), 'relevant:' .. bucket, 1)
  end
  redis.call('HINCRBYFLOAT', k(STATS), 'relevance_sum', relevance)
  redis.call('HINCRBYFLOAT', k(CURVE), 'relevance:' .. bucket, relevance)
end
