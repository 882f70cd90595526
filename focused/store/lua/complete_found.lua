-- Seed 004's hubs: relevant pages found through each parent page.
if page and relevant then
  local parent = parent_of(m)
  if parent ~= '0' then add(counts, k(FOUND), parent, 1) end
end
