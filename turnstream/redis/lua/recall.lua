-- GENERATED HEADER, from this script's spec in turnstream/redis/scripts.py: edit the spec, then run
-- `python -m turnstream.redis.render`. The body reads KEYS and ARGV by the names below only.
-- The read path in one call, every key under the owner's hash tag: a session's context, its owner's profile,
--   the top-k typed memories for the query keywords that this session was not given in its last `window`
--   prompts, and the archived turns that best match the query (BM25) with the turns around them.
-- KEYS[1] context: P:ctx:{O}:S, the session's context hash
-- KEYS[2] profile: P:profile:{O}, the owner's profile hash {text, version}
-- KEYS[3] memories: P:mem:{O}, memory id -> memory JSON
-- KEYS[4] access: P:memaccess:{O}, memory id -> access count
-- KEYS[5] injected: P:injected:{O}:S, the memory ids of the session's prompts, newest first, one comma-joined
--   list each
-- KEYS[6] archive: P:arcent:{O}, short archive entry id -> entry JSON
-- KEYS[7] positions: P:arcat:{O}, archive positions: `S#<position>` -> short entry id
-- KEYS[8] entry_terms: P:arcrec:{O}, short archive entry id -> `length<TAB>S#<position><TAB>terms`: where a hit
--   is
-- KEYS[9] dictionary: P:arcdict:{O}, the archive's term dictionary: term -> packed postings or `<df> <size>
--   <least>`
-- KEYS[10] vectors: P:arcvec:{O}, short entry id -> `<model tag><TAB><semantic terms><TAB><int8 vector>`
-- KEYS[11] semantic: P:arcsem:{O}, semantic term -> its best postings `id:weight,…`, highest first
-- KEYS[12 … 11 + ARGV[6]] keyword_sets: P:memkw:{O}:<keyword>, one per query keyword (lower-case words,
--   `keywords` in turnstream/text/prose.py); ARGV[6] of them
-- KEYS[12 + ARGV[6] …] postings: P:arcpost:{O}:<term>, one per query term (stemmed words and CJK bigrams,
--   `query_terms` in turnstream/text/terms.py): the postings key of a term the dictionary gives a frequency
-- ARGV[1] k: memories returned at most
-- ARGV[2] window: how many of the session's latest prompts count: what they were given is not given again
-- ARGV[3] ttl: seconds the injected list lives after a recording call
-- ARGV[4] now: unix time, for the memories' recency
-- ARGV[5] record: 1: count the memories as injected and raise their access counts, in a session that has a
--   context (one without records nothing); 0: only look
-- ARGV[6] keyword_count: how many keyword sets follow the fixed keys (the number of keyword_sets)
-- ARGV[7] hits: archived turns returned at most, best first
-- ARGV[8] postings_per_term: highest-weighted postings read per scored term
-- ARGV[9] scored_terms: rarest query terms scored
-- ARGV[10] neighbours: turns of the same session returned on each side of a hit
-- ARGV[11] terms: the query terms separated by spaces, in the order of the postings keys
-- ARGV[12] weight_scale: what the stored integer weights are multiplied by
-- ARGV[13] pool: candidates taken from each side, the lexical scores and the semantic terms' postings, for the
--   semantic share of the block (0: none, the reply's last two parts are empty)
-- ARGV[14] semantic_terms: the query's semantic terms separated by spaces (its own terms, and with a model its
--   nearest vocabulary terms)
-- ARGV[15] vector_tag: the tag of the reader's model: the pool's vectors of that model are returned (empty:
--   none)
-- Returns {doc, profile text, profile version, {memory JSON, access count, score, …}, archive JSON, pool JSON,
--   {vector, …}}: the archive part is one JSON array of [score, entry] pairs, hits best first, each followed by
--   its neighbours (score 0), so the client parses one string instead of a hundred replies; the pool is a JSON
--   array of [lexical score, semantic score, entry] (an entry the archive part holds already: its place there,
--   from 0) and the vectors its entries' vectors of `vector_tag`, in its order (false where there is none).
local KEY = {
  context = 1, profile = 2, memories = 3, access = 4, injected = 5, archive = 6, positions = 7, entry_terms = 8,
  dictionary = 9, vectors = 10, semantic = 11
}
local FIXED_KEYS = 11
local ARG = {
  k = 1, window = 2, ttl = 3, now = 4, record = 5, keyword_count = 6, hits = 7, postings_per_term = 8,
  scored_terms = 9, neighbours = 10, terms = 11, weight_scale = 12, pool = 13, semantic_terms = 14, vector_tag =
  15
}
-- (end of the generated header)
local out = {redis.call('HGET', KEYS[KEY.context], 'doc')}
local profile = redis.call('HMGET', KEYS[KEY.profile], 'text', 'version')
out[2], out[3] = profile[1], profile[2]
-- a read never creates a session: one without a context (never written, erased, expired) records nothing, so an
-- erasure stays whole until the session's next turn
local k, window = tonumber(ARGV[ARG.k]), tonumber(ARGV[ARG.window])
local record = ARGV[ARG.record] == '1' and out[1] ~= false
local keyword_count = tonumber(ARGV[ARG.keyword_count])
local first_posting = FIXED_KEYS + 1 + keyword_count

local function memories()
  local found = {}
  if k <= 0 or keyword_count <= 0 then
    return found
  end
  local excluded = {}
  for _, ids in ipairs(window > 0 and redis.call('LRANGE', KEYS[KEY.injected], 0, window - 1) or {}) do
    for id in string.gmatch(ids, '[^,]+') do
      excluded[id] = true
    end
  end
  local hits = {}
  for i = FIXED_KEYS + 1, first_posting - 1 do
    for _, id in ipairs(redis.call('SMEMBERS', KEYS[i])) do
      if not excluded[id] then
        hits[id] = (hits[id] or 0) + 1
      end
    end
  end
  local now, scored = tonumber(ARGV[ARG.now]), {}
  for id, count in pairs(hits) do
    local raw = redis.call('HGET', KEYS[KEY.memories], id)
    if raw then
      local memory = cjson.decode(raw)
      local access = tonumber(redis.call('HGET', KEYS[KEY.access], id)) or 0
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
      access = redis.call('HINCRBY', KEYS[KEY.access], id, 1)
    end
    found[#found + 1] = scored[i][2]
    found[#found + 1] = tostring(access)
    found[#found + 1] = tostring(scored[i][3])
  end
  if record and #picked > 0 and redis.call('TTL', KEYS[KEY.access]) == -1 then
    -- the first access creates the hash: it expires with the memories it counts
    local left = redis.call('TTL', KEYS[KEY.memories])
    if left > 0 then
      redis.call('EXPIRE', KEYS[KEY.access], left)
    end
  end
  if record and window > 0 then
    -- a prompt that recalled nothing still counts towards the window
    redis.call('LPUSH', KEYS[KEY.injected], table.concat(picked, ','))
    redis.call('LTRIM', KEYS[KEY.injected], 0, window - 1)
    redis.call('EXPIRE', KEYS[KEY.injected], ARGV[ARG.ttl])
  end
  return found
end

-- the best `n` of `scores`, kept sorted by insertion: cheaper than sorting every candidate
local function top(scores, n)
  local best = {}
  for id, score in pairs(scores) do
    if #best < n or score > best[#best][2] then
      local at = #best + 1
      while at > 1 and (best[at - 1][2] < score or (best[at - 1][2] == score and best[at - 1][1] > id)) do
        at = at - 1
      end
      table.insert(best, at, {id, score})
      best[n + 1] = nil
    end
  end
  return best
end

-- BM25 of every entry the query terms' best postings name
local function lexical_scores(total)
  local per_term = tonumber(ARGV[ARG.postings_per_term])
  local scored_terms, scale = tonumber(ARGV[ARG.scored_terms]), tonumber(ARGV[ARG.weight_scale])
  local names, scores = {}, {}
  for term in string.gmatch(ARGV[ARG.terms], '%S+') do
    names[#names + 1] = term
  end
  if #names == 0 then
    return scores
  end
  -- the rarest terms say the most (idf); only `scored_terms` of them are read. A dictionary field is a
  -- rare term's postings, packed, or the frequency of a term whose best postings have their own key
  local terms = {}
  for n, value in ipairs(redis.call('HMGET', KEYS[KEY.dictionary], unpack(names))) do
    if value then
      local df = tonumber(string.match(value, '^(%d+) '))
      local packed = not df and value or nil
      df = df or select(2, string.gsub(value, ',', ',')) + 1
      terms[#terms + 1] = {first_posting + n - 1, math.log(1 + (total - df + 0.5) / (df + 0.5)), packed}
    end
  end
  table.sort(terms, function(a, b) return a[2] > b[2] end)
  for t = 1, math.min(#terms, scored_terms) do
    local idf, packed, posting = terms[t][2], terms[t][3], {}
    if packed then
      local pairs_ = {}
      for id, weight in string.gmatch(packed, '([^:,]+):(%d+)') do
        pairs_[#pairs_ + 1] = {id, tonumber(weight)}
      end
      if #pairs_ > per_term then  -- the order a postings key has: by weight, then by id, highest first
        table.sort(pairs_, function(a, b) return a[2] > b[2] or (a[2] == b[2] and a[1] > b[1]) end)
      end
      for j = 1, math.min(#pairs_, per_term) do
        posting[#posting + 1] = pairs_[j][1]
        posting[#posting + 1] = pairs_[j][2]
      end
    else
      posting = redis.call('ZREVRANGE', KEYS[terms[t][1]], 0, per_term - 1, 'WITHSCORES')
    end
    for j = 1, #posting, 2 do
      local id = posting[j]
      scores[id] = (scores[id] or 0) + idf * tonumber(posting[j + 1]) / scale
    end
  end
  return scores
end

-- the hits with the turns around them: [score, entry] pairs, each hit followed by its neighbours (score 0); and
-- where each entry sits in that array (from 0), so the pool names an entry already sent by its place
local function with_neighbours(best)
  local placed = {}
  if #best == 0 then
    return '[]', placed
  end
  -- three reads for every hit and neighbour: where the hits are, who is around them, the entries
  local around, ids = tonumber(ARGV[ARG.neighbours]), {}
  for n, hit in ipairs(best) do
    ids[n] = hit[1]
  end
  local records, fields, owners = redis.call('HMGET', KEYS[KEY.entry_terms], unpack(ids)), {}, {}
  for n, record in ipairs(records) do
    local session, position = string.match(record or '', '^%d+\t([^\t]*)#(%d+)\t')
    if session then
      for d = -around, around do
        if d ~= 0 then
          fields[#fields + 1] = session .. '#' .. (tonumber(position) + d)
          owners[#fields] = n
        end
      end
    end
  end
  local near = #fields > 0 and redis.call('HMGET', KEYS[KEY.positions], unpack(fields)) or {}
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
  local found = {}
  local raws = redis.call('HMGET', KEYS[KEY.archive], unpack(order))
  for n, raw in ipairs(raws) do
    if raw then
      found[#found + 1] = '[' .. given[n] .. ',' .. raw .. ']'
      placed[order[n]] = #found - 1
    end
  end
  return '[' .. table.concat(found, ',') .. ']', placed
end

-- the semantic share's candidates: the best `pool` by BM25 and the best `pool` by the semantic terms' postings
-- (weights summed), with the entries' vectors of the reader's model when it has one; an entry the archive part
-- already holds is named by its place there instead of sent twice
local function pool(scores, size, placed)
  local semantic, names = {}, {}
  for term in string.gmatch(ARGV[ARG.semantic_terms], '%S+') do
    names[#names + 1] = term
  end
  if #names > 0 then
    for _, packed in ipairs(redis.call('HMGET', KEYS[KEY.semantic], unpack(names))) do
      for id, weight in string.gmatch(packed or '', '([^:,]+):(%d+)') do
        semantic[id] = (semantic[id] or 0) + tonumber(weight)
      end
    end
  end
  local ids, seen = {}, {}
  for _, side in ipairs({top(scores, size), top(semantic, size)}) do
    for _, candidate in ipairs(side) do
      if not seen[candidate[1]] then
        seen[candidate[1]] = true
        ids[#ids + 1] = candidate[1]
      end
    end
  end
  if #ids == 0 then
    return '[]', {}
  end
  local tag, found, vectors, fetch = ARGV[ARG.vector_tag], {}, {}, {}
  for _, id in ipairs(ids) do
    if not placed[id] then
      fetch[#fetch + 1] = id
    end
  end
  local fetched, raws = #fetch > 0 and redis.call('HMGET', KEYS[KEY.archive], unpack(fetch)) or {}, {}
  for n, id in ipairs(fetch) do
    raws[id] = fetched[n]
  end
  local stored = tag ~= '' and redis.call('HMGET', KEYS[KEY.vectors], unpack(ids)) or {}
  for n, id in ipairs(ids) do
    local entry = placed[id] or raws[id]
    if entry then
      found[#found + 1] = '[' .. (scores[id] or 0) .. ',' .. (semantic[id] or 0) .. ',' .. entry .. ']'
      local vector = stored[n]
      local prefix = tag .. '\t'
      if vector and string.sub(vector, 1, #prefix) == prefix then
        local terms_end = string.find(vector, '\t', #prefix + 1, true)
        vectors[#found] = string.sub(vector, terms_end + 1)
      else
        vectors[#found] = false
      end
    end
  end
  return '[' .. table.concat(found, ',') .. ']', vectors
end

local function archive()
  local total = redis.call('HLEN', KEYS[KEY.archive])
  local hits, size = tonumber(ARGV[ARG.hits]), tonumber(ARGV[ARG.pool])
  if total == 0 then
    return '[]', '[]', {}
  end
  local scores = lexical_scores(total)
  local hits_json, placed = with_neighbours(hits > 0 and top(scores, hits) or {})
  if size <= 0 then
    return hits_json, '[]', {}
  end
  return hits_json, pool(scores, size, placed)
end

out[4] = memories()
out[5], out[6], out[7] = archive()
return out
