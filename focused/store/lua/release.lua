-- ARGV: shard, conc, delay, bump (1: one more try), max_tries, leases...
local bump, max_tries = tonumber(ARGV[4]), tonumber(ARGV[5])
local now = now_s()
local touched = {}
local back = 0
for i = 6, #ARGV do back = back + unlease(ARGV[i], bump, max_tries, touched, now) end
for o in pairs(touched) do schedule(o, now) end
return back
