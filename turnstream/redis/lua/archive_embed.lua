-- GENERATED HEADER, from this script's spec in turnstream/redis/scripts.py: edit the spec, then run
-- `python -m turnstream.redis.render`. The body reads KEYS and ARGV by the names below only.
-- Store archived turns' sentence vectors and index them under their semantic terms; an entry no longer archived
--   is skipped, one already embedded by the same model left alone, one of another model re-indexed.
-- KEYS[1] archive: P:arcent:{O}, short entry id -> entry JSON
-- KEYS[2] positions: P:arcat:{O}, `S#<position>` -> short entry id
-- KEYS[3] vectors: P:arcvec:{O}, short entry id -> `<model tag><TAB><semantic terms><TAB><int8 vector>`
-- KEYS[4] semantic: P:arcsem:{O}, semantic term -> its best postings `id:weight,…`, highest first
-- ARGV[1] ttl: seconds both keys live after this write (the archive's)
-- ARGV[2] tag: the model's tag
-- ARGV[3] postings_max: postings a semantic term keeps, the highest-weighted
-- ARGV[4 …] entries: per entry embedded, 4 arguments each; j counts them from 0
-- ARGV[4 + 4j] entries[j].field: its position field, `S#<position>`
-- ARGV[5 + 4j] entries[j].id: its stable id (entry_id): a turn whose position holds another entry is skipped
-- ARGV[6 + 4j] entries[j].vector: its int8 vector (4-byte scale, then one byte a dimension)
-- ARGV[7 + 4j] entries[j].terms: its semantic terms as `term:weight` separated by spaces, weight = cosine ×
--   1000
-- Returns the number of entries embedded.
local KEY = {archive = 1, positions = 2, vectors = 3, semantic = 4}
local ARG = {ttl = 1, tag = 2, postings_max = 3}
local FIXED_ARGV = 3
local ENTRY = {field = 0, id = 1, vector = 2, terms = 3}
local ENTRY_SIZE = 4
-- (end of the generated header)
local ttl, tag, cap = tonumber(ARGV[ARG.ttl]), ARGV[ARG.tag], tonumber(ARGV[ARG.postings_max])

local fields = {}
for i = FIXED_ARGV + 1, #ARGV, ENTRY_SIZE do
  fields[#fields + 1] = ARGV[i + ENTRY.field]
end
if #fields == 0 then
  return 0
end
local shorts = redis.call('HMGET', KEYS[KEY.positions], unpack(fields))
local held = {}
for n = 1, #fields do
  if shorts[n] then
    held[#held + 1] = shorts[n]
  end
end
if #held == 0 then
  return 0
end
local raws, olds = {}, {}
local got = redis.call('HMGET', KEYS[KEY.archive], unpack(held))
local had = redis.call('HMGET', KEYS[KEY.vectors], unpack(held))
for n, short in ipairs(held) do
  raws[short], olds[short] = got[n], had[n]
end

-- a term's postings, parsed once, highest weight first; written back once at the end
local postings, touched = {}, {}
local function term_postings(term)
  local list = postings[term]
  if not list then
    list = {}
    local packed = redis.call('HGET', KEYS[KEY.semantic], term)
    for id, weight in string.gmatch(packed or '', '([^:,]+):(%d+)') do
      list[#list + 1] = {id, tonumber(weight)}
    end
    postings[term] = list
  end
  touched[term] = true
  return list
end
local function remove(term, id)
  local list = term_postings(term)
  for n = #list, 1, -1 do
    if list[n][1] == id then
      table.remove(list, n)
    end
  end
end
local function add(term, id, weight)
  local list = term_postings(term)
  if #list >= cap and weight <= list[#list][2] then
    return  -- below the best `cap` of the term: never read
  end
  local at = #list + 1
  while at > 1 and list[at - 1][2] < weight do
    at = at - 1
  end
  table.insert(list, at, {id, weight})
  list[cap + 1] = nil
end

local embedded, vectors = 0, {}
for n = 1, #fields do
  local short = shorts[n]
  local i = FIXED_ARGV + 1 + (n - 1) * ENTRY_SIZE
  local raw = short and raws[short]
  -- the position may hold another turn now (a reused session key): only the entry itself is embedded
  if raw and string.find(raw, '"id":"' .. ARGV[i + ENTRY.id] .. '"', 1, true) then
    local old = olds[short]
    local old_tag, old_terms = string.match(old or '', '^([^\t]*)\t([^\t]*)\t')
    if old_tag ~= tag then
      for term in string.gmatch(old_terms or '', '%S+') do
        remove(term, short)  -- another model's terms: this model's replace them
      end
      local names = {}
      for term, weight in string.gmatch(ARGV[i + ENTRY.terms], '(%S+):(%d+)') do
        add(term, short, tonumber(weight))
        names[#names + 1] = term
      end
      vectors[#vectors + 1] = short
      vectors[#vectors + 1] = tag .. '\t' .. table.concat(names, ' ') .. '\t' .. ARGV[i + ENTRY.vector]
      embedded = embedded + 1
    end
  end
end
if embedded == 0 then
  return 0
end
redis.call('HSET', KEYS[KEY.vectors], unpack(vectors))
for term in pairs(touched) do
  local list, packed = postings[term], {}
  for n, posting in ipairs(list) do
    packed[n] = posting[1] .. ':' .. posting[2]
  end
  if #packed > 0 then
    redis.call('HSET', KEYS[KEY.semantic], term, table.concat(packed, ','))
  else
    redis.call('HDEL', KEYS[KEY.semantic], term)
  end
end
redis.call('EXPIRE', KEYS[KEY.vectors], ttl)
redis.call('EXPIRE', KEYS[KEY.semantic], ttl)
return embedded
