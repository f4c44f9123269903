-- Compare-and-set one session's context document on its version, atomically.
-- KEYS[1] context hash, KEYS[2] applied-turns zset (same hash tag, so same slot)
-- ARGV[1] version, ARGV[2] doc JSON, ARGV[3] last_turn_id, ARGV[4] ttl seconds,
-- ARGV[5] dedup window, ARGV[6] updates channel, ARGV[7..] turn ids applied by this version
-- Returns 1 when written, 0 when the stored version is as new or newer (a replay: no-op).
local version = tonumber(ARGV[1])
local stored = tonumber(redis.call('HGET', KEYS[1], 'version'))
if stored and version <= stored then
  return 0
end
redis.call('HSET', KEYS[1], 'doc', ARGV[2], 'version', ARGV[1], 'last_turn_id', ARGV[3])
for i = 7, #ARGV do
  redis.call('ZADD', KEYS[2], version, ARGV[i])
end
-- keep the newest `window` turn ids (highest versions)
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -tonumber(ARGV[5]) - 1)
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('EXPIRE', KEYS[2], ARGV[4])
redis.call('PUBLISH', ARGV[6], ARGV[1])
return 1
