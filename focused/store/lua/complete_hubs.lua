-- Seed 004's hub scores, of the pages that have one.
if page and hub ~= '' then redis.call('ZADD', k(HUB_SCORES), hub, order) end
