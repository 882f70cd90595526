-- KEYS[1]: a lock (focused.store.lock.fenced); KEYS[2..]: the key of each write in turn.
-- ARGV[1]: the holder's token; then for each write: its command, how many arguments follow
-- its key, and those arguments. Writes only if that holder still holds the lock; returns the
-- last write's reply, or nil (and writes nothing) if the holder lost the lock.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return false end
local at, reply = 2, nil
for k = 2, #KEYS do
  local count = tonumber(ARGV[at + 1])
  reply = redis.call(ARGV[at], KEYS[k], unpack(ARGV, at + 2, at + 1 + count))
  at = at + 2 + count
end
return reply
