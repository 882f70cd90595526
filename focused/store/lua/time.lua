-- Redis's clock, read in a script on a key so that a cluster asks that key's master.
return redis.call('TIME')
