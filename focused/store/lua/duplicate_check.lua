-- Badia et al. 2006's duplicates (focused.pipelines.frontier): record a fetched page in hashes ck
-- (text checksum -> first URL fingerprint), mk (URL fingerprint -> Last-Modified) and kk (the
-- pages of earlier runs: fingerprint -> checksum TAB Last-Modified; read only when has_known,
-- as the caller finds it once for a batch). sum: its text checksum, fp: its URL fingerprint,
-- modified: its Last-Modified ('' for none), revisit: true for a revisit. Returns why it is a
-- duplicate ('unchanged' (a revisit), 'known', 'last_modified' or 'text'), or false. A new
-- text without a Last-Modified costs one command.
local function duplicate_of(ck, mk, kk, has_known, sum, fp, modified, revisit)
  local why = false
  if revisit then
    if redis.call('HGET', ck, sum) == fp
       or (modified ~= '' and redis.call('HGET', mk, fp) == modified) then
      why = 'unchanged'
    end
  end
  local known = has_known and redis.call('HGET', kk, fp)
  if known then
    local ksum, kmodified = string.match(known, '^([^\t]*)\t(.*)$')
    if not why and (ksum == sum or (modified ~= '' and kmodified == modified)) then
      why = 'known'
    end
  end
  if modified ~= '' then
    if not why and redis.call('HGET', mk, fp) == modified then why = 'last_modified' end
    redis.call('HSET', mk, fp, modified)
  end
  if redis.call('HSETNX', ck, sum, fp) == 0 and not why
     and redis.call('HGET', ck, sum) ~= fp then
    why = 'text'
  end
  return why
end
