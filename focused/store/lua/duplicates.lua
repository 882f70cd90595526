-- The first part of a cluster's duplicates checks, on one shard (RedisFrontier.complete_many):
-- the texts whose checksums fall to it, and what earlier runs knew of the URLs whose
-- fingerprints do. KEYS: the shard's checksums, known. ARGV[1]: how many texts; then a triple
-- per text (text checksum, URL fingerprint, 'read' to only read (a revisit's) or '' to
-- record), the pages in the order they are acknowledged; then URL fingerprints. Returns each
-- text's text_state, then what 'known' holds of each fingerprint ('' for nothing).
local out = {}
local texts = tonumber(ARGV[1])
for i = 2, 1 + 3 * texts, 3 do
  out[#out + 1] = text_state(KEYS[1], ARGV[i], ARGV[i + 1], ARGV[i + 2] == 'read')
end
local has_known = #ARGV > 1 + 3 * texts and redis.call('EXISTS', KEYS[2]) == 1
for i = 2 + 3 * texts, #ARGV do
  out[#out + 1] = has_known and redis.call('HGET', KEYS[2], ARGV[i]) or ''
end
return out
