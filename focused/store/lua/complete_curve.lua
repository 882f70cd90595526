-- The harvest curve: per CURVE_BUCKET classified pages, their sum of R and relevant pages;
-- and the crawl's classified and relevant pages and sum of R.
if page then
  classified = classified + 1
  local bucket = math.floor((classified - 1) / CURVE_BUCKET)
  if relevant then
    add(counts, k(STATS), 'relevant', 1)
    add(counts, k(CURVE), 'relevant:' .. bucket, 1)
  end
  add(floats, k(STATS), 'relevance_sum', tonumber(relevance))
  add(floats, k(CURVE), 'relevance:' .. bucket, tonumber(relevance))
end
