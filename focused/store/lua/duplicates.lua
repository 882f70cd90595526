-- The first part of a cluster's duplicates checks, on the shard of their text checksums
-- (RedisFrontier.complete_many). KEYS: the shard's checksums. ARGV: triples of text checksum,
-- URL fingerprint, 'read' to only read (a revisit's) or '' to record: the pages in the order
-- they are acknowledged. Returns each one's text_state.
local out = {}
for i = 1, #ARGV, 3 do
  out[#out + 1] = text_state(KEYS[1], ARGV[i], ARGV[i + 1], ARGV[i + 2] == 'read')
end
return out
