-- GENERATED HEADER, from this script's spec in turnstream/redis/scripts.py: edit the spec, then run
-- `python -m turnstream.redis.render`. The body reads KEYS and ARGV by the names below only.
-- Compare-and-set an owner's profile text on its version.
-- KEYS[1] profile: P:profile:{O}, the owner's profile hash {text, version}
-- KEYS[2] memories: P:mem:{O}, the owner's memories, whose expiry the profile shares
-- ARGV[1] expected_version: the version the text replaces (0 when none yet)
-- ARGV[2] text: the new profile text
-- Returns 1 when written (version + 1), 0 when the stored version differs.
local KEY = {profile = 1, memories = 2}
local ARG = {expected_version = 1, text = 2}
-- (end of the generated header)
local stored = tonumber(redis.call('HGET', KEYS[KEY.profile], 'version')) or 0
if stored ~= tonumber(ARGV[ARG.expected_version]) then
  return 0
end
redis.call('HSET', KEYS[KEY.profile], 'text', ARGV[ARG.text], 'version', stored + 1)
local left = redis.call('TTL', KEYS[KEY.memories])
-- a profile created here expires with the memories
if left > 0 and redis.call('TTL', KEYS[KEY.profile]) == -1 then
  redis.call('EXPIRE', KEYS[KEY.profile], left)
end
return 1
