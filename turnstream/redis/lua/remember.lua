-- GENERATED HEADER, from this script's spec in turnstream/redis/scripts.py: edit the spec, then run
-- `python -m turnstream.redis.render`. The body reads KEYS and ARGV by the names below only.
-- Upsert memories of one owner and, optionally, compare-and-set the owner's profile; all or nothing. Then hold
--   the owner to `cap` memories and keep every memory key of the owner on one expiry.
-- KEYS[1] memories: P:mem:{O}, memory id -> memory JSON
-- KEYS[2] created: P:memcreated:{O}, memory id -> created_at
-- KEYS[3] profile: P:profile:{O}, the owner's profile hash {text, version}
-- KEYS[4] access: P:memaccess:{O}, memory id -> access count
-- KEYS[5 …] keyword_sets: P:memkw:{O}:<keyword>, the keyword sets the caller expects the call to touch: those
--   of the memories it writes, old keywords and new (a Redis Cluster requires every key declared)
-- ARGV[1] keyword_prefix: the keyword sets' prefix, `P:memkw:{O}:`
-- ARGV[2] expected_version: the profile version the new text was computed from; '' leaves the profile alone
-- ARGV[3] profile_text: the new profile text
-- ARGV[4] ttl: seconds every memory key of the owner lives after this write
-- ARGV[5] cap: memories kept at most
-- ARGV[6] evict_chunk: memories evicted beyond the excess once the cap is passed, so the next writes need no
--   eviction (an eviction reads every memory's access count and age)
-- ARGV[7 …] memories_written: per memory written, 4 arguments each; j counts them from 0
-- ARGV[7 + 4j] memories_written[j].id: memory id
-- ARGV[8 + 4j] memories_written[j].json: memory JSON
-- ARGV[9 + 4j] memories_written[j].created_at: created_at, kept if the memory has one already
-- ARGV[10 + 4j] memories_written[j].keywords: its keywords joined by '\n'
-- Returns {1, the ids of the memories it evicted...} when applied, 0 when the profile moved past the expected
--   version, else the names of the keyword sets the call would touch that KEYS does not: those of the memories
--   it evicts, of every memory on an expiry restart, or changed by another writer; the caller adds them and
--   calls again. Nothing is written unless the reply starts with 1.
local KEY = {memories = 1, created = 2, profile = 3, access = 4}
local FIXED_KEYS = 4
local ARG = {keyword_prefix = 1, expected_version = 2, profile_text = 3, ttl = 4, cap = 5, evict_chunk = 6}
local FIXED_ARGV = 6
local MEMORY = {id = 0, json = 1, created_at = 2, keywords = 3}
local MEMORY_SIZE = 4
-- (end of the generated header)
local prefix, ttl, cap = ARGV[ARG.keyword_prefix], tonumber(ARGV[ARG.ttl]), tonumber(ARGV[ARG.cap])
local chunk = tonumber(ARGV[ARG.evict_chunk])

local declared = {}
for k = FIXED_KEYS + 1, #KEYS do
  declared[KEYS[k]] = true
end
local left = redis.call('TTL', KEYS[KEY.memories])
-- the expiry is restarted in full when more than 1% of the ttl has passed since the last restart
-- (at most ~100 full passes per ttl)
local restart = left < 0 or ttl - left > math.max(ttl / 100, 1)
local missing = {}
local function need(key)
  if not declared[key] then
    declared[key] = true  -- named once
    missing[#missing + 1] = key
  end
end

local ids, adding, written = {}, 0, {}
for i = FIXED_ARGV + 1, #ARGV, MEMORY_SIZE do
  local id = ARGV[i + MEMORY.id]
  if not written[id] then
    written[id] = ARGV[i + MEMORY.created_at]  -- its created_at, kept if it has one already
    ids[#ids + 1] = id
    adding = adding + 1 - redis.call('HEXISTS', KEYS[KEY.memories], id)
  end
  for keyword in string.gmatch(ARGV[i + MEMORY.keywords], '[^\n]+') do
    need(prefix .. keyword)
  end
end

-- Eviction order, chosen before anything is written: memories written by this call last, then the
-- fewest accesses, the oldest created_at, the smallest id; a memory leaves with its keyword sets.
local over, victims = redis.call('HLEN', KEYS[KEY.memories]) + adding - cap, {}
if over > 0 then
  local accesses, candidates = {}, {}
  local flat = redis.call('HGETALL', KEYS[KEY.access])
  for j = 1, #flat, 2 do
    accesses[flat[j]] = tonumber(flat[j + 1])
  end
  local created = {}
  flat = redis.call('HGETALL', KEYS[KEY.created])
  for j = 1, #flat, 2 do
    created[flat[j]] = tonumber(flat[j + 1])
  end
  for _, id in ipairs(ids) do
    created[id] = created[id] or tonumber(written[id])
  end
  for id, at in pairs(created) do
    candidates[#candidates + 1] = {id, written[id] and 1 or 0, accesses[id] or 0, at}
  end
  table.sort(candidates, function(a, b)
    if a[2] ~= b[2] then return a[2] < b[2] end
    if a[3] ~= b[3] then return a[3] < b[3] end
    if a[4] ~= b[4] then return a[4] < b[4] end
    return a[1] < b[1]
  end)
  for n = 1, math.min(over + chunk, #candidates) do  -- a few more than the excess: the next writes scan nothing
    victims[n] = candidates[n][1]
  end
end

-- what the call reads keyword sets from: the old versions of what it writes, what it evicts, and
-- on a restart every memory
local stored = {}
if restart then
  stored = redis.call('HVALS', KEYS[KEY.memories])
else
  for _, id in ipairs(ids) do
    stored[#stored + 1] = redis.call('HGET', KEYS[KEY.memories], id)
  end
  for _, id in ipairs(victims) do
    stored[#stored + 1] = redis.call('HGET', KEYS[KEY.memories], id)
  end
end
for n = 1, #stored do
  if stored[n] then
    for _, keyword in ipairs(cjson.decode(stored[n]).keywords) do
      need(prefix .. keyword)
    end
  end
end
if #missing > 0 then
  return missing
end

if ARGV[ARG.expected_version] ~= '' then
  local version = tonumber(redis.call('HGET', KEYS[KEY.profile], 'version')) or 0
  if version ~= tonumber(ARGV[ARG.expected_version]) then
    return 0
  end
  redis.call('HSET', KEYS[KEY.profile], 'text', ARGV[ARG.profile_text], 'version', version + 1)
end

local function unindex(id)
  local old = redis.call('HGET', KEYS[KEY.memories], id)
  if old then
    for _, keyword in ipairs(cjson.decode(old).keywords) do
      redis.call('SREM', prefix .. keyword, id)  -- the last member out deletes the set
    end
  end
end

local touched = {}
for i = FIXED_ARGV + 1, #ARGV, MEMORY_SIZE do
  local id = ARGV[i + MEMORY.id]
  local keywords = {}
  for keyword in string.gmatch(ARGV[i + MEMORY.keywords], '[^\n]+') do
    keywords[keyword] = true
  end
  -- re-index: the corrected text may have lost keywords ("2000") the old one had; the keywords it keeps
  -- stay as they are (a rewritten summary memory keeps most of its thirty)
  local old = redis.call('HGET', KEYS[KEY.memories], id)
  for _, keyword in ipairs(old and cjson.decode(old).keywords or {}) do
    if not keywords[keyword] then
      redis.call('SREM', prefix .. keyword, id)  -- the last member out deletes the set
    end
  end
  redis.call('HSET', KEYS[KEY.memories], id, ARGV[i + MEMORY.json])
  redis.call('HSETNX', KEYS[KEY.created], id, ARGV[i + MEMORY.created_at])
  for keyword in pairs(keywords) do
    -- added again even when the old text had it: a set lost on its own comes back with the next write
    if redis.call('SADD', prefix .. keyword, id) == 1 then
      touched[#touched + 1] = prefix .. keyword  -- a set this made, or one that lacked the id, gets the TTL
    end
  end
end

for _, id in ipairs(victims) do
  unindex(id)
  redis.call('HDEL', KEYS[KEY.memories], id)
  redis.call('HDEL', KEYS[KEY.created], id)
  redis.call('HDEL', KEYS[KEY.access], id)
end

-- One expiry for all the owner's memory keys, so none outlives the others: restarted in full (see
-- `restart`), else the sets this call touched join the current one.
if restart then
  for _, key in ipairs({KEYS[KEY.memories], KEYS[KEY.created], KEYS[KEY.profile], KEYS[KEY.access]}) do
    redis.call('EXPIRE', key, ttl)
  end
  for _, raw in ipairs(redis.call('HVALS', KEYS[KEY.memories])) do
    for _, keyword in ipairs(cjson.decode(raw).keywords) do
      redis.call('EXPIRE', prefix .. keyword, ttl)
    end
  end
else
  for _, key in ipairs({KEYS[KEY.created], KEYS[KEY.profile], KEYS[KEY.access]}) do
    if redis.call('TTL', key) == -1 then  -- created since the last restart
      redis.call('EXPIRE', key, left)
    end
  end
  for _, key in ipairs(touched) do
    redis.call('EXPIRE', key, left)
  end
end
local applied = {1}
for _, id in ipairs(victims) do
  applied[#applied + 1] = id
end
return applied
