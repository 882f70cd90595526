-- The census: classified pages per category.
if page then add(counts, k(CENSUS), category, 1) end
