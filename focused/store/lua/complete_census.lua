-- The census: classified pages per category.
if page then redis.call('HINCRBY', k(CENSUS), category, 1) end
