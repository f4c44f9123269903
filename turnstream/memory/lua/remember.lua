-- Upsert memories of one owner and, optionally, compare-and-set the owner's profile; all or nothing.
-- Then hold the owner to `cap` memories and keep every memory key of the owner on one expiry.
-- KEYS[1] memories hash (id -> JSON), KEYS[2] created_at hash, KEYS[3] profile hash {text, version},
-- KEYS[4] access-count hash, KEYS[5..] the keyword sets the caller expects the call to touch: those of
-- the memories it writes, old keywords and new (a Redis Cluster requires every key declared)
-- ARGV[1] keyword-set key prefix, ARGV[2] expected profile version ('' leaves the profile alone),
-- ARGV[3] new profile text, ARGV[4] ttl seconds, ARGV[5] cap,
-- ARGV[6..] per memory: id, JSON, created_at, keywords joined by '\n'
-- Returns {1, the ids of the memories it evicted...} when applied, 0 when the profile moved past the
-- expected version, else the names of the keyword sets the call would touch that KEYS does not: those of
-- the memories it evicts, of every memory on an expiry restart, or changed by another writer; the caller
-- adds them and calls again. Nothing is written unless the reply starts with 1.
local prefix, ttl, cap = ARGV[1], tonumber(ARGV[4]), tonumber(ARGV[5])

local declared = {}
for k = 5, #KEYS do
  declared[KEYS[k]] = true
end
local left = redis.call('TTL', KEYS[1])
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
for i = 6, #ARGV, 4 do
  local id = ARGV[i]
  if not written[id] then
    written[id] = ARGV[i + 2]  -- its created_at, kept if it has one already
    ids[#ids + 1] = id
    adding = adding + 1 - redis.call('HEXISTS', KEYS[1], id)
  end
  for keyword in string.gmatch(ARGV[i + 3], '[^\n]+') do
    need(prefix .. keyword)
  end
end

-- Eviction order, chosen before anything is written: memories written by this call last, then the
-- fewest accesses, the oldest created_at, the smallest id; a memory leaves with its keyword sets.
local over, victims = redis.call('HLEN', KEYS[1]) + adding - cap, {}
if over > 0 then
  local accesses, candidates = {}, {}
  local flat = redis.call('HGETALL', KEYS[4])
  for j = 1, #flat, 2 do
    accesses[flat[j]] = tonumber(flat[j + 1])
  end
  local created = {}
  flat = redis.call('HGETALL', KEYS[2])
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
  for n = 1, math.min(over, #candidates) do
    victims[n] = candidates[n][1]
  end
end

-- what the call reads keyword sets from: the old versions of what it writes, what it evicts, and
-- on a restart every memory
local stored = {}
if restart then
  stored = redis.call('HVALS', KEYS[1])
else
  for _, id in ipairs(ids) do
    stored[#stored + 1] = redis.call('HGET', KEYS[1], id)
  end
  for _, id in ipairs(victims) do
    stored[#stored + 1] = redis.call('HGET', KEYS[1], id)
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

if ARGV[2] ~= '' then
  local version = tonumber(redis.call('HGET', KEYS[3], 'version')) or 0
  if version ~= tonumber(ARGV[2]) then
    return 0
  end
  redis.call('HSET', KEYS[3], 'text', ARGV[3], 'version', version + 1)
end

local function unindex(id)
  local old = redis.call('HGET', KEYS[1], id)
  if old then
    for _, keyword in ipairs(cjson.decode(old).keywords) do
      redis.call('SREM', prefix .. keyword, id)  -- the last member out deletes the set
    end
  end
end

local touched = {}
for i = 6, #ARGV, 4 do
  local id = ARGV[i]
  -- re-index: the corrected text may have lost keywords ("2000") the old one had
  unindex(id)
  redis.call('HSET', KEYS[1], id, ARGV[i + 1])
  redis.call('HSETNX', KEYS[2], id, ARGV[i + 2])
  for keyword in string.gmatch(ARGV[i + 3], '[^\n]+') do
    redis.call('SADD', prefix .. keyword, id)
    touched[#touched + 1] = prefix .. keyword
  end
end

for _, id in ipairs(victims) do
  unindex(id)
  redis.call('HDEL', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  redis.call('HDEL', KEYS[4], id)
end

-- One expiry for all the owner's memory keys, so none outlives the others: restarted in full (see
-- `restart`), else the sets this call touched join the current one.
if restart then
  for k = 1, 4 do
    redis.call('EXPIRE', KEYS[k], ttl)
  end
  for _, raw in ipairs(redis.call('HVALS', KEYS[1])) do
    for _, keyword in ipairs(cjson.decode(raw).keywords) do
      redis.call('EXPIRE', prefix .. keyword, ttl)
    end
  end
else
  for k = 2, 4 do
    if redis.call('TTL', KEYS[k]) == -1 then  -- created since the last restart
      redis.call('EXPIRE', KEYS[k], left)
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
