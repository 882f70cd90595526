-- Seed 004's hub scores, of the pages that have one.
if page and hub ~= '' then append(zsets, k(HUB_SCORES), hub, order) end
