-- The near-copies index (focused.store.nearcopies): check one page against it and add it, in
-- one step for every process of the crawl. KEYS: near:pages (page id -> packed signature then
-- URL), then the bucket hash of each of the page's bands (near:b:<n>: band key -> page id).
-- ARGV: the page's URL, its packed signature, how many of its values must agree with a
-- candidate's, the cap on indexed pages (0: none), then its band keys in their buckets.
-- Returns {URL of the page it copies or '', what became of it, pages indexed}: 'copy' (not
-- added), 'known' (its URL is indexed already: a page fetched again is not a copy of itself),
-- 'added', or 'full' (the index holds the cap: checked, not added).
local pages = KEYS[1]
local url, signature = ARGV[1], ARGV[2]
local needed, cap = tonumber(ARGV[3]), tonumber(ARGV[4])
local FIRST_BAND = 5
local width = #signature
local mine = {string.byte(signature, 1, width)}

-- How many of two packed signatures' 2-byte values agree.
local function agreeing(other)
  local theirs = {string.byte(other, 1, width)}
  local agree = 0
  for i = 1, width, 2 do
    if mine[i] == theirs[i] and mine[i + 1] == theirs[i + 1] then agree = agree + 1 end
  end
  return agree
end

-- Each band's bucket is claimed for the page as it is looked up (HSETNX: one call where a
-- lookup and an insert would take two, and most bands of most pages are new); a band already
-- held is read. A page that turns out known or a copy gives back what it claimed.
local size = redis.call('HLEN', pages)
local full = cap > 0 and size >= cap
local id = tostring(size + 1)
local seen, claimed, copy_of, known = {}, {}, nil, false
for i = FIRST_BAND, #ARGV do
  local bucket = KEYS[i - FIRST_BAND + 2]
  local held = nil
  if not full and redis.call('HSETNX', bucket, ARGV[i], id) == 1 then
    claimed[#claimed + 1] = i
  else
    held = redis.call('HGET', bucket, ARGV[i])
  end
  if held and not seen[held] then
    seen[held] = true
    local page = redis.call('HGET', pages, held)
    if page then
      local other = string.sub(page, width + 1)
      if other == url then
        known = true
      elseif not copy_of and agreeing(page) >= needed then
        copy_of = other
      end
    end
  end
end
if known or copy_of then
  for _, i in ipairs(claimed) do redis.call('HDEL', KEYS[i - FIRST_BAND + 2], ARGV[i]) end
  if known then return {'', 'known', size} end
  return {copy_of, 'copy', size}
end
if full then return {'', 'full', size} end
redis.call('HSET', pages, id, signature .. url)
return {'', 'added', size + 1}
