-- Compare-and-set an owner's profile text on its version.
-- KEYS[1] profile hash {text, version}, KEYS[2] the owner's memories hash (whose expiry the profile shares)
-- ARGV[1] expected version (0 when none yet), ARGV[2] new text
-- Returns 1 when written (version + 1), 0 when the stored version differs.
local stored = tonumber(redis.call('HGET', KEYS[1], 'version')) or 0
if stored ~= tonumber(ARGV[1]) then
  return 0
end
redis.call('HSET', KEYS[1], 'text', ARGV[2], 'version', stored + 1)
local left = redis.call('TTL', KEYS[2])
if left > 0 and redis.call('TTL', KEYS[1]) == -1 then  -- a profile created here expires with the memories
  redis.call('EXPIRE', KEYS[1], left)
end
return 1
