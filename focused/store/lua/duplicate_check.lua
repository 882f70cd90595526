-- Badia et al. 2006's duplicates (focused.pipelines.frontier), in two parts that may run on two
-- shards of a cluster: a page's text is looked up in hash ck (text checksum -> first URL
-- fingerprint) of its checksum's shard (text_state), its URL in mk (URL fingerprint ->
-- Last-Modified) of its host's shard with the acknowledgement (duplicate_of).

-- The state of text checksum sum fetched at URL fingerprint fp: 'same' (first fetched at fp),
-- 'other' (first fetched at another URL) or 'new' (not fetched before: recorded now as fp's);
-- read_only: not recorded, 'none' for a text not fetched before. A new text costs one command.
local function text_state(ck, sum, fp, read_only)
  if read_only then
    local first = redis.call('HGET', ck, sum)
    if not first then return 'none' end
    return first == fp and 'same' or 'other'
  end
  if redis.call('HSETNX', ck, sum, fp) == 1 then return 'new' end
  return redis.call('HGET', ck, sum) == fp and 'same' or 'other'
end

-- Why a page is a duplicate ('unchanged' (a revisit), 'known', 'last_modified' or 'text'), or
-- false, recording its Last-Modified in mk. fp: its URL fingerprint, modified: its
-- Last-Modified ('' for none), revisit: true for a revisit, text: its text_state, known: what
-- earlier runs knew of fp ("<checksum> TAB <Last-Modified>", kept in 'known'; false for
-- nothing), sum: its text checksum.
local function duplicate_of(mk, fp, modified, revisit, text, known, sum)
  local why = false
  if revisit then
    if text == 'same' or (modified ~= '' and redis.call('HGET', mk, fp) == modified) then
      why = 'unchanged'
    end
  end
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
  if not why and text == 'other' then why = 'text' end
  return why
end
