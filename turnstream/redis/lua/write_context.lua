-- GENERATED HEADER, from this script's spec in turnstream/redis/scripts.py: edit the spec, then run
-- `python -m turnstream.redis.render`. The body reads KEYS and ARGV by the names below only.
-- Compare-and-set one session's context document on its version, atomically.
-- KEYS[1] context: P:ctx:{O}:S, the session's context hash
-- KEYS[2] applied: P:applied:{O}:S, turn id -> the version that applied it (same hash tag, so same slot)
-- ARGV[1] version: the document's version
-- ARGV[2] doc: the document JSON
-- ARGV[3] last_turn_id: the newest turn it applies
-- ARGV[4] ttl: seconds both keys live after this write
-- ARGV[5] dedup_window: turn ids kept, the newest
-- ARGV[6] updates: the channel the version is published on, `P:updates:S`
-- ARGV[7 …] turn_ids: turn ids applied by this version
-- Returns 1 when written, 0 when the stored version is as new or newer (a replay: no-op).
local KEY = {context = 1, applied = 2}
local ARG = {version = 1, doc = 2, last_turn_id = 3, ttl = 4, dedup_window = 5, updates = 6}
local FIXED_ARGV = 6
-- (end of the generated header)
local version = tonumber(ARGV[ARG.version])
local stored = tonumber(redis.call('HGET', KEYS[KEY.context], 'version'))
if stored and version <= stored then
  return 0
end
redis.call('HSET', KEYS[KEY.context], 'doc', ARGV[ARG.doc], 'version', ARGV[ARG.version],
  'last_turn_id', ARGV[ARG.last_turn_id])
-- one ZADD for all the version's turn ids (a batch applies several a session)
local applied = {}
for i = FIXED_ARGV + 1, #ARGV do
  applied[#applied + 1] = version
  applied[#applied + 1] = ARGV[i]
end
for start = 1, #applied, 1000 do  -- arguments a call, well inside Lua's stack
  redis.call('ZADD', KEYS[KEY.applied], unpack(applied, start, math.min(start + 999, #applied)))
end
-- keep the newest `window` turn ids (highest versions)
redis.call('ZREMRANGEBYRANK', KEYS[KEY.applied], 0, -tonumber(ARGV[ARG.dedup_window]) - 1)
redis.call('EXPIRE', KEYS[KEY.context], ARGV[ARG.ttl])
redis.call('EXPIRE', KEYS[KEY.applied], ARGV[ARG.ttl])
redis.call('PUBLISH', ARGV[ARG.updates], ARGV[ARG.version])
return 1
