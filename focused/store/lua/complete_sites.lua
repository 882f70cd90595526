-- Seed 004's good sites: relevant pages per site.
if page and relevant then add(counts, k(SITES), o, 1) end
