-- KEYS[1]: a lock (focused.store.lock.held_lock); ARGV[1]: its holder's token. Deletes the
-- lock only if that holder still holds it.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
