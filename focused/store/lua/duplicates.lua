-- KEYS: checksums, modified, known. ARGV: text checksum, URL fingerprint, Last-Modified ('':
-- none), '1' for a revisit. Returns why the page is a duplicate ('unchanged' (a revisit),
-- 'known', 'last_modified' or 'text'), or nil.
local why = false
if ARGV[4] == '1' then
  if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2]
     or (ARGV[3] ~= '' and redis.call('HGET', KEYS[2], ARGV[2]) == ARGV[3]) then
    why = 'unchanged'
  end
end
local known = redis.call('HGET', KEYS[3], ARGV[2])
if known then
  local sum, modified = string.match(known, '^([^\t]*)\t(.*)$')
  if not why and (sum == ARGV[1] or (ARGV[3] ~= '' and modified == ARGV[3])) then
    why = 'known'
  end
end
if ARGV[3] ~= '' then
  if not why and redis.call('HGET', KEYS[2], ARGV[2]) == ARGV[3] then why = 'last_modified' end
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
end
local first = redis.call('HGET', KEYS[1], ARGV[1])
if not first then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
elseif first ~= ARGV[2] and not why then
  why = 'text'
end
return why
