-- ARGV: shard, conc, delay, parent (fetch order, 0 for none), links
return push_links(5, ARGV[4], now_s(), nil)
