-- R of the last RECENT_LEN classified pages (up to 100 more: trimmed every 100), newest first.
if page and redis.call('LPUSH', k(RECENT), relevance) > RECENT_LEN + 100 then
  redis.call('LTRIM', k(RECENT), 0, RECENT_LEN - 1)
end
