-- KEYS[1]: a lock (focused.store.lock.held_lock); ARGV[1]: its holder's token; ARGV[2]: its
-- lease in milliseconds. Extends the lock's lease only if that holder still holds it.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
