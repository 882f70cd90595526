-- R of the last RECENT_LEN classified pages (trimmed at the end), newest first.
if page then recent[#recent + 1] = relevance end
