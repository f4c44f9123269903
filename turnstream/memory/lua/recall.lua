-- The read path in one call, every key declared and under the owner's hash tag: a session's context,
-- its owner's profile, the top-k typed memories for the query keywords that this session was not
-- given in its last `window` prompts, and the archived turns that best match the query (BM25) with
-- the turns around them.
-- KEYS[1] context hash, KEYS[2] profile hash, KEYS[3] memories hash, KEYS[4] access-count hash,
-- KEYS[5] injected list (newest first, one comma-joined id list per prompt), KEYS[6] archive entries,
-- KEYS[7] archive positions, KEYS[8] archive ages, then ARGV[6] memory keyword sets, then the
-- archive postings of the query terms
-- ARGV[1] k, ARGV[2] window, ARGV[3] ttl seconds, ARGV[4] now, ARGV[5] record (1: count the memories
-- as injected and raise their access counts; 0: only look), ARGV[6] keyword sets, ARGV[7] archive
-- hits, ARGV[8] postings read per term, ARGV[9] terms scored, ARGV[10] neighbours on each side
-- Returns {doc, profile text, profile version, {memory JSON, access_count, score, ...}, archive JSON}:
-- the archive part is one JSON array of [score, entry] pairs, hits best first, each followed by its
-- neighbours (score 0), so the client parses one string instead of a hundred replies.
local out = {redis.call('HGET', KEYS[1], 'doc')}
local profile = redis.call('HMGET', KEYS[2], 'text', 'version')
out[2], out[3] = profile[1], profile[2]
local k, window, record = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[5] == '1'
local keyword_count = tonumber(ARGV[6])
local first_posting = 9 + keyword_count

local function memories()
  local found = {}
  if k <= 0 or keyword_count <= 0 then
    return found
  end
  local excluded = {}
  for _, ids in ipairs(window > 0 and redis.call('LRANGE', KEYS[5], 0, window - 1) or {}) do
    for id in string.gmatch(ids, '[^,]+') do
      excluded[id] = true
    end
  end
  local hits = {}
  for i = 9, first_posting - 1 do
    for _, id in ipairs(redis.call('SMEMBERS', KEYS[i])) do
      if not excluded[id] then
        hits[id] = (hits[id] or 0) + 1
      end
    end
  end
  local now, scored = tonumber(ARGV[4]), {}
  for id, count in pairs(hits) do
    local raw = redis.call('HGET', KEYS[3], id)
    if raw then
      local memory = cjson.decode(raw)
      local access = tonumber(redis.call('HGET', KEYS[4], id)) or 0
      local age_days = math.max(now - memory.updated_at, 0) / 86400
      -- keyword overlap weighted by importance; recency and use only break near-ties
      local score = (count / keyword_count) * (0.5 + memory.importance)
        + 0.1 / (1 + age_days / 30) + 0.05 * math.min(access, 20) / 20
      scored[#scored + 1] = {id, raw, score, access}
    end
  end
  table.sort(scored, function(a, b)
    if a[3] ~= b[3] then return a[3] > b[3] end
    return a[1] < b[1]
  end)
  local picked = {}
  for i = 1, math.min(k, #scored) do
    local id, access = scored[i][1], scored[i][4]
    picked[i] = id
    if record then
      access = redis.call('HINCRBY', KEYS[4], id, 1)
    end
    found[#found + 1] = scored[i][2]
    found[#found + 1] = tostring(access)
    found[#found + 1] = tostring(scored[i][3])
  end
  if record and #picked > 0 and redis.call('TTL', KEYS[4]) == -1 then
    -- the first access creates the hash: it expires with the memories it counts
    local left = redis.call('TTL', KEYS[3])
    if left > 0 then
      redis.call('EXPIRE', KEYS[4], left)
    end
  end
  if record and window > 0 then
    -- a prompt that recalled nothing still counts towards the window
    redis.call('LPUSH', KEYS[5], table.concat(picked, ','))
    redis.call('LTRIM', KEYS[5], 0, window - 1)
    redis.call('EXPIRE', KEYS[5], ARGV[3])
  end
  return found
end

local function archive()
  local found = {}
  local total = redis.call('ZCARD', KEYS[8])
  local hits, per_term, scored_terms = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
  if total == 0 or hits <= 0 or first_posting > #KEYS then
    return '[]'
  end
  -- the rarest terms say the most (idf); only `scored_terms` of them are read
  local terms = {}
  for i = first_posting, #KEYS do
    local df = redis.call('ZCARD', KEYS[i])
    if df > 0 then
      terms[#terms + 1] = {KEYS[i], math.log(1 + (total - df + 0.5) / (df + 0.5))}
    end
  end
  table.sort(terms, function(a, b) return a[2] > b[2] end)
  local scores = {}
  for t = 1, math.min(#terms, scored_terms) do
    local idf = terms[t][2]
    local posting = redis.call('ZREVRANGE', terms[t][1], 0, per_term - 1, 'WITHSCORES')
    for j = 1, #posting, 2 do
      local id = posting[j]
      scores[id] = (scores[id] or 0) + idf * tonumber(posting[j + 1])
    end
  end
  -- the best `hits`, kept sorted by insertion: cheaper than sorting every candidate
  local best = {}
  for id, score in pairs(scores) do
    if #best < hits or score > best[#best][2] then
      local at = #best + 1
      while at > 1 and (best[at - 1][2] < score or (best[at - 1][2] == score and best[at - 1][1] > id)) do
        at = at - 1
      end
      table.insert(best, at, {id, score})
      best[hits + 1] = nil
    end
  end
  if #best == 0 then
    return '[]'
  end
  -- three reads for every hit and neighbour: where the hits are, who is around them, the entries
  local around, ids = tonumber(ARGV[10]), {}
  for n, hit in ipairs(best) do
    ids[n] = hit[1]
  end
  local places, fields, owners = redis.call('HMGET', KEYS[7], unpack(ids)), {}, {}
  for n, place in ipairs(places) do
    if place then
      local session, position = string.match(place, '^(.*)#(%d+)$')
      for d = -around, around do
        if d ~= 0 then
          fields[#fields + 1] = session .. '#' .. (tonumber(position) + d)
          owners[#fields] = n
        end
      end
    end
  end
  local near = #fields > 0 and redis.call('HMGET', KEYS[7], unpack(fields)) or {}
  local order, given, seen = {}, {}, {}
  local function take(id, score)
    if id and not seen[id] then
      seen[id] = true
      order[#order + 1] = id
      given[#order] = score
    end
  end
  local f = 1
  for n, hit in ipairs(best) do
    take(hit[1], hit[2])
    while owners[f] == n do
      take(near[f], 0)
      f = f + 1
    end
  end
  local raws = redis.call('HMGET', KEYS[6], unpack(order))
  for n, raw in ipairs(raws) do
    if raw then
      found[#found + 1] = '[' .. given[n] .. ',' .. raw .. ']'
    end
  end
  return '[' .. table.concat(found, ',') .. ']'
end

out[4] = memories()
out[5] = archive()
return out
