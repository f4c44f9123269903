-- The read path in one call: a session's context, its owner's profile, and the top-k memories
-- matching the query keywords that this session was not given in its last `window` prompts.
-- KEYS[1] session context hash, KEYS[2] profile hash, KEYS[3] memories hash, KEYS[4] access-count hash,
-- KEYS[5] injected list of (owner, session): newest first, one comma-joined id list per prompt
-- ARGV[1] keyword-set key prefix, ARGV[2] k, ARGV[3] window, ARGV[4] ttl seconds, ARGV[5] now,
-- ARGV[6..] query keywords (none, or k = 0: no recall and nothing recorded)
-- Returns {doc, profile text, profile version, then per recalled memory: JSON, access_count, score}.
local out = {redis.call('HGET', KEYS[1], 'doc')}
local profile = redis.call('HMGET', KEYS[2], 'text', 'version')
out[2], out[3] = profile[1], profile[2]
local k, window, queried = tonumber(ARGV[2]), tonumber(ARGV[3]), #ARGV - 5
if k <= 0 or queried <= 0 then
  return out
end
local excluded = {}
for _, ids in ipairs(window > 0 and redis.call('LRANGE', KEYS[5], 0, window - 1) or {}) do
  for id in string.gmatch(ids, '[^,]+') do
    excluded[id] = true
  end
end
local hits = {}
for i = 6, #ARGV do
  for _, id in ipairs(redis.call('SMEMBERS', ARGV[1] .. ARGV[i])) do
    if not excluded[id] then
      hits[id] = (hits[id] or 0) + 1
    end
  end
end
local now, scored = tonumber(ARGV[5]), {}
for id, count in pairs(hits) do
  local raw = redis.call('HGET', KEYS[3], id)
  if raw then
    local memory = cjson.decode(raw)
    local access = tonumber(redis.call('HGET', KEYS[4], id)) or 0
    local age_days = math.max(now - memory.updated_at, 0) / 86400
    -- keyword overlap weighted by importance; recency and use only break near-ties
    local score = (count / queried) * (0.5 + memory.importance)
      + 0.1 / (1 + age_days / 30) + 0.05 * math.min(access, 20) / 20
    scored[#scored + 1] = {id, raw, score}
  end
end
table.sort(scored, function(a, b)
  if a[3] ~= b[3] then return a[3] > b[3] end
  return a[1] < b[1]
end)
local picked = {}
for i = 1, math.min(k, #scored) do
  local id = scored[i][1]
  picked[i] = id
  out[#out + 1] = scored[i][2]
  out[#out + 1] = tostring(redis.call('HINCRBY', KEYS[4], id, 1))
  out[#out + 1] = tostring(scored[i][3])
end
if window > 0 then
  -- a prompt that recalled nothing still counts towards the window
  redis.call('LPUSH', KEYS[5], table.concat(picked, ','))
  redis.call('LTRIM', KEYS[5], 0, window - 1)
  redis.call('EXPIRE', KEYS[5], ARGV[4])
end
return out
