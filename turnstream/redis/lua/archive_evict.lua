-- GENERATED HEADER, from this script's spec in turnstream/redis/scripts.py: edit the spec, then run
-- `python -m turnstream.redis.render`. The body reads KEYS and ARGV by the names below only.
-- Remove entries from one owner's archive together with their postings; safe to repeat.
-- KEYS[1] archive: P:arcent:{O}, short entry id -> entry JSON (one applied turn)
-- KEYS[2] positions: P:arcat:{O}, `S#<position>` -> short entry id
-- KEYS[3] entry_terms: P:arcrec:{O}, short entry id -> `length<TAB>S#<position><TAB>term term …`
-- KEYS[4] stats: P:arcmeta:{O}, total_length, next (the newest entry's number), first (the oldest's, or a gap
--   before it)
-- KEYS[5] dictionary: P:arcdict:{O}, term -> its packed postings `id:weight,…` (a rare term), or `<df> <size>
--   <least>`: its document frequency, its postings key's size and the lowest weight the key kept at its last
--   cut (a term with a postings key); and `hash table`, a field no term can be that keeps the hash in Redis's
--   hash table encoding
-- KEYS[6] vectors: P:arcvec:{O}, short entry id -> `<model tag><TAB><semantic terms><TAB><int8 vector>`
-- KEYS[7] semantic: P:arcsem:{O}, semantic term -> its best postings `id:weight,…`, highest first
-- KEYS[8 …] postings: P:arcpost:{O}:<term>, the postings keys of the evicted entries' terms
-- ARGV[1] terms: the evicted entries' terms separated by spaces, in the order of the postings keys
-- ARGV[2 …] entries: per entry evicted, 4 arguments each; j counts them from 0
-- ARGV[2 + 4j] entries[j].id: short entry id
-- ARGV[3 + 4j] entries[j].field: its position field, `S#<position>`
-- ARGV[4 + 4j] entries[j].length: its length in terms
-- ARGV[5 + 4j] entries[j].terms: its terms as indexes counting from 1 into `terms`, separated by spaces
-- Returns the number of entries removed.
local KEY = {archive = 1, positions = 2, entry_terms = 3, stats = 4, dictionary = 5, vectors = 6, semantic = 7}
local FIXED_KEYS = 7
local ARG = {terms = 1}
local FIXED_ARGV = 1
local ENTRY = {id = 0, field = 1, length = 2, terms = 3}
local ENTRY_SIZE = 4
-- (end of the generated header)
local terms = {}
for term in string.gmatch(ARGV[ARG.terms], '%S+') do
  terms[#terms + 1] = term
end
-- only an entry still there counts: a repeated eviction changes nothing
local removed, gone, semantic_gone = 0, {}, {}
for i = FIXED_ARGV + 1, #ARGV, ENTRY_SIZE do
  local id, field = ARGV[i + ENTRY.id], ARGV[i + ENTRY.field]
  redis.call('HDEL', KEYS[KEY.entry_terms], id)
  if redis.call('HDEL', KEYS[KEY.archive], id) == 1 then
    if redis.call('HGET', KEYS[KEY.positions], field) == id then  -- a later turn may have taken the position
      redis.call('HDEL', KEYS[KEY.positions], field)
    end
    local length = tonumber(ARGV[i + ENTRY.length])
    if length > 0 then  -- a turn with no index terms ("在吗？"): -0 would reach Redis as "-0", not an integer
      redis.call('HINCRBY', KEYS[KEY.stats], 'total_length', -length)
    end
    for slot in string.gmatch(ARGV[i + ENTRY.terms], '%d+') do
      slot = tonumber(slot)
      gone[slot] = gone[slot] or {}
      gone[slot][#gone[slot] + 1] = id
    end
    removed = removed + 1
  end
  -- the entry's vector and semantic postings go with it (its vector names the terms it is indexed under)
  local vector = redis.call('HGET', KEYS[KEY.vectors], id)
  if vector then
    redis.call('HDEL', KEYS[KEY.vectors], id)
    for term in string.gmatch(string.match(vector, '^[^\t]*\t([^\t]*)\t') or '', '%S+') do
      semantic_gone[term] = semantic_gone[term] or {}
      semantic_gone[term][id] = true
    end
  end
end
for term, ids in pairs(semantic_gone) do
  local left = {}
  for posting, id in string.gmatch(redis.call('HGET', KEYS[KEY.semantic], term) or '', '(([^:,]+):%d+)') do
    if not ids[id] then
      left[#left + 1] = posting
    end
  end
  if #left == 0 then
    redis.call('HDEL', KEYS[KEY.semantic], term)
  else
    redis.call('HSET', KEYS[KEY.semantic], term, table.concat(left, ','))
  end
end
for slot, ids in pairs(gone) do
  local value = redis.call('HGET', KEYS[KEY.dictionary], terms[slot])
  local df, size, least = string.match(value or '', '^(%d+) (%d+) (%d+)$')
  if df then
    df = tonumber(df) - #ids
    size = tonumber(size)
    for start = 1, #ids, 1000 do  -- arguments per ZREM, well inside Lua's stack
      size = size - redis.call('ZREM', KEYS[FIXED_KEYS + slot], unpack(ids, start, math.min(start + 999, #ids)))
    end
    size = math.max(0, size)
    -- a key emptied while entries beyond the kept ones still hold the term keeps its frequency: the idf stays true
    if df <= 0 then
      redis.call('DEL', KEYS[FIXED_KEYS + slot])
      redis.call('HDEL', KEYS[KEY.dictionary], terms[slot])
    else
      redis.call('HSET', KEYS[KEY.dictionary], terms[slot], table.concat({df, size, least}, ' '))
    end
  elseif value then
    local drop, left = {}, {}
    for _, id in ipairs(ids) do
      drop[id] = true
    end
    for posting, id in string.gmatch(value, '(([^:,]+):%d+)') do
      if not drop[id] then
        left[#left + 1] = posting
      end
    end
    if #left == 0 then
      redis.call('HDEL', KEYS[KEY.dictionary], terms[slot])
    else
      redis.call('HSET', KEYS[KEY.dictionary], terms[slot], table.concat(left, ','))
    end
  end
end
return removed
