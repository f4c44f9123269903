-- GENERATED HEADER, from this script's spec in turnstream/schemas/scripts.py: edit the spec, then run
-- `python -m turnstream.schemas.script_render`. The body reads KEYS and ARGV by the names below only.
-- Append turns to one owner's archive and index them for BM25; an entry already there is left alone.
-- KEYS[1] archive: P:arc:{O}, entry id -> entry JSON (one applied turn)
-- KEYS[2] positions: P:arcpos:{O}, `S#<position>` -> entry id and entry id -> `S#<position>`
-- KEYS[3] entry_terms: P:arcterms:{O}, entry id -> `length<TAB>S#<position><TAB>term term …`
-- KEYS[4] ages: P:arcage:{O}, entry id -> arrival number
-- KEYS[5] stats: P:arcstat:{O}, total_length, next
-- KEYS[6 …] postings: P:arcterm:{O}:<term>, the term postings this call writes to
-- ARGV[1] ttl: seconds every archive key of the owner lives after this write
-- ARGV[2] cap: entries kept at most
-- ARGV[3] evict_chunk: entries reported over the cap beyond the excess, so the next appends need no eviction
-- ARGV[4] k1: BM25 k1
-- ARGV[5] b: BM25 b
-- ARGV[6 …] entries: per entry appended, 6 arguments each; j counts them from 0
-- ARGV[6 + 6j] entries[j].id: entry id
-- ARGV[7 + 6j] entries[j].json: entry JSON
-- ARGV[8 + 6j] entries[j].record: its terms record, `length<TAB>S#<position><TAB>term term …`
-- ARGV[9 + 6j] entries[j].field: its position field, `S#<position>`
-- ARGV[10 + 6j] entries[j].length: its length in terms
-- ARGV[11 + 6j] entries[j].postings: its postings as `index:frequency` pairs separated by spaces, index
--   counting from 1 into the postings keys: one argument per entry, not two per term, keeps the call cheap
-- Returns {entries added, then id and terms record of every entry over the cap, oldest first}: the caller
--   evicts those with their postings (it alone can name their posting keys).
local KEY = {archive = 1, positions = 2, entry_terms = 3, ages = 4, stats = 5}
local FIXED_KEYS = 5
local ARG = {ttl = 1, cap = 2, evict_chunk = 3, k1 = 4, b = 5}
local FIXED_ARGV = 5
local ENTRY = {id = 0, json = 1, record = 2, field = 3, length = 4, postings = 5}
local ENTRY_SIZE = 6
-- (end of the generated header)
local ttl, cap, chunk = tonumber(ARGV[ARG.ttl]), tonumber(ARGV[ARG.cap]), tonumber(ARGV[ARG.evict_chunk])
local k1, b = tonumber(ARGV[ARG.k1]), tonumber(ARGV[ARG.b])
local added = 0
for i = FIXED_ARGV + 1, #ARGV, ENTRY_SIZE do
  local id, json = ARGV[i + ENTRY.id], ARGV[i + ENTRY.json]
  local record, field = ARGV[i + ENTRY.record], ARGV[i + ENTRY.field]
  local length = tonumber(ARGV[i + ENTRY.length])
  if redis.call('HSETNX', KEYS[KEY.archive], id, json) == 1 then
    redis.call('HSET', KEYS[KEY.positions], field, id, id, field)
    redis.call('HSET', KEYS[KEY.entry_terms], id, record)
    redis.call('ZADD', KEYS[KEY.ages], redis.call('HINCRBY', KEYS[KEY.stats], 'next', 1), id)
    local total = redis.call('HINCRBY', KEYS[KEY.stats], 'total_length', length)
    -- the length norm against the average at write time: postings are stored by weight, so a
    -- read takes each term's best entries with one ZREVRANGE instead of scoring them all
    local norm = k1 * (1 - b + b * length * redis.call('ZCARD', KEYS[KEY.ages]) / total)
    for index, frequency in string.gmatch(ARGV[i + ENTRY.postings], '(%d+):(%d+)') do
      local tf = tonumber(frequency)
      redis.call('ZADD', KEYS[FIXED_KEYS + tonumber(index)], tf * (k1 + 1) / (tf + norm), id)
    end
    added = added + 1
  end
end
for k = 1, #KEYS do
  redis.call('EXPIRE', KEYS[k], ttl)
end
local out = {added}
local count = redis.call('ZCARD', KEYS[KEY.ages])
if count > cap then
  local over = redis.call('ZRANGE', KEYS[KEY.ages], 0, count - cap + chunk - 1)
  local records = redis.call('HMGET', KEYS[KEY.entry_terms], unpack(over))
  for n, id in ipairs(over) do
    out[#out + 1] = id
    out[#out + 1] = records[n] or ''
  end
end
return out
