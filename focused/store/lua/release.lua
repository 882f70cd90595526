-- Give leases back (RedisFrontier.release). ARGV[2]: bump ('1': one more try, a failed
-- attempt; '0': untouched), ARGV[3]: max_tries, ARGV[4] on: the leases. Returns how many URLs
-- were queued again.
local frontier, vanished = open_frontier(KEYS, ARGV)
if not frontier then return vanished end
local bump, max_tries = tonumber(ARGV[2]), tonumber(ARGV[3])
local now = now_s()
local touched, back = {}, 0
for i = 4, #ARGV do back = back + unlease(frontier, ARGV[i], bump, max_tries, touched, now) end
for origin in pairs(touched) do schedule(frontier, origin, now) end
return back
