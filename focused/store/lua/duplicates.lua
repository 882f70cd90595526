-- KEYS: checksums, modified, known. ARGV: quadruples of text checksum, URL fingerprint,
-- Last-Modified ('': none), '1' for a revisit: pages in the order they are acknowledged.
-- Returns why each is a duplicate (duplicate_of), '' for none.
local out = {}
local has_known = redis.call('EXISTS', KEYS[3]) == 1
for i = 1, #ARGV, 4 do
  local why = duplicate_of(KEYS[1], KEYS[2], KEYS[3], has_known, ARGV[i], ARGV[i + 1], ARGV[i + 2],
                           ARGV[i + 3] == '1')
  out[#out + 1] = why or ''
end
return out
