"""Where a crawl's state lives: the Redis client and its retries, the embedded server, the
cluster, the key layout and the shards. Only this package talks to Redis directly."""
