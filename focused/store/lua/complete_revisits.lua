-- Maintenance mode: relevant pages to revisit, by R (a revisit itself is not kept again).
if page and relevant and revisits and string.sub(m, 1, 1) ~= 'r' then
  append(zsets, k(REVISIT), relevance, url)
end
