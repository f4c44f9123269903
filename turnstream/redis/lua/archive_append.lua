-- GENERATED HEADER, from this script's spec in turnstream/redis/scripts.py: edit the spec, then run
-- `python -m turnstream.redis.render`. The body reads KEYS and ARGV by the names below only.
-- Append turns to one owner's archive and index them for BM25; an entry already there is left alone.
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
-- KEYS[8 …] postings: P:arcpost:{O}:<term>, the postings keys of the call's terms named in `keyed`, in its
--   order: a term with a key, or one near to getting one, as far as the caller knows
-- ARGV[1] ttl: seconds every archive key of the owner lives after this write
-- ARGV[2] cap: entries kept at most
-- ARGV[3] evict_chunk: entries reported over the cap beyond the excess, so the next appends need no eviction
-- ARGV[4] k1: BM25 k1
-- ARGV[5] b: BM25 b
-- ARGV[6] weight_scale: a weight is stored as the integer nearest weight × weight_scale
-- ARGV[7] packed_max: postings a term keeps packed in its dictionary field; one more moves them to its key
-- ARGV[8] postings_kept: postings a postings key holds at most, the highest-weighted (a read takes fewer)
-- ARGV[9] postings_trimmed: postings a full postings key is cut back to, so that most additions need no cut
-- ARGV[10] terms: the call's terms separated by spaces
-- ARGV[11] keyed: the indexes, counting from 1 into `terms`, of the terms whose postings keys are named
-- ARGV[12] entries: the entries appended, one JSON array of objects: `id` the stable id (entry_id: a turn whose
--   position holds it already is not added), `json` the entry JSON, `record` its terms record
--   (`length<TAB>S#<position><TAB>term term …`), `field` its position field (`S#<position>`), `length` its
--   length in terms, `postings` its [index, frequency, …] pairs flat, index counting from 1 into `terms`: one
--   argument for the call, however many entries and terms
-- Returns {status, the count of the terms to name from now on, those terms, then short id, terms record and
--   stable id of every entry over the cap, oldest first}. Status is the number of entries added, or -1 when a
--   postings key the call needs was not named: then nothing is written, and the caller calls again naming the
--   terms returned. The terms returned are those with a key, or with half of `packed_max` postings, that were
--   not named, so the call in which a term gets its key seldom has to be made twice. The caller evicts the
--   entries over the cap with their postings (it alone can name their postings keys).
local KEY = {archive = 1, positions = 2, entry_terms = 3, stats = 4, dictionary = 5, vectors = 6, semantic = 7}
local FIXED_KEYS = 7
local ARG = {
  ttl = 1, cap = 2, evict_chunk = 3, k1 = 4, b = 5, weight_scale = 6, packed_max = 7, postings_kept = 8,
  postings_trimmed = 9, terms = 10, keyed = 11, entries = 12
}
-- (end of the generated header)
local ttl, cap, chunk = tonumber(ARGV[ARG.ttl]), tonumber(ARGV[ARG.cap]), tonumber(ARGV[ARG.evict_chunk])
local k1, b = tonumber(ARGV[ARG.k1]), tonumber(ARGV[ARG.b])
local scale, packed_max = tonumber(ARGV[ARG.weight_scale]), tonumber(ARGV[ARG.packed_max])
local kept, trimmed = tonumber(ARGV[ARG.postings_kept]), tonumber(ARGV[ARG.postings_trimmed])
local DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
local BATCH = 1000  -- arguments per HMGET/HSET/ZADD, well inside Lua's stack

local function short_id(number)
  local id = ''
  repeat
    local digit = number % 62
    id = string.sub(DIGITS, digit + 1, digit + 1) .. id
    number = (number - digit) / 62
  until number == 0
  return id
end

local function hmget(key, names)
  local values = {}
  for start = 1, #names, BATCH do
    local got = redis.call('HMGET', key, unpack(names, start, math.min(start + BATCH - 1, #names)))
    for n = 1, #got do
      values[start + n - 1] = got[n]
    end
  end
  return values
end

local function hset(key, pairs_)
  for start = 1, #pairs_, BATCH do
    redis.call('HSET', key, unpack(pairs_, start, math.min(start + BATCH - 1, #pairs_)))
  end
end

local terms = {}
for term in string.gmatch(ARGV[ARG.terms], '%S+') do
  terms[#terms + 1] = term
end
-- the postings key of each named term, by its index into `terms`
local key_of, named = {}, 0
for slot in string.gmatch(ARGV[ARG.keyed], '%d+') do
  named = named + 1
  key_of[tonumber(slot)] = KEYS[FIXED_KEYS + named]
end
local entries = cjson.decode(ARGV[ARG.entries])
-- the dictionary fields of the call's terms, read once and written once: a rare term's postings are one string
local fields = hmget(KEYS[KEY.dictionary], terms)

-- per term touched: its packed postings as a list (parsed once, joined once), or its frequency and key size
local state, touched = {}, {}
local function term_state(slot)
  local value = fields[slot]
  if not state[slot] then
    local df, size, least = string.match(value or '', '^(%d+) (%d+) (%d+)$')
    if df then
      state[slot] = {df = tonumber(df), size = tonumber(size), least = tonumber(least)}
    elseif value then
      state[slot] = {packed = {value}, count = select(2, string.gsub(value, ',', ',')) + 1}
    else
      state[slot] = {packed = {}, count = 0}
    end
  end
  return state[slot]
end

-- postings added to a term's key, sent in one ZADD per key (before any cut of it, and at the end)
local pending = {}
local function add(key, weight, id)
  local queue = pending[key]
  if not queue then
    queue = {}
    pending[key] = queue
  end
  queue[#queue + 1] = weight
  queue[#queue + 1] = id
end
local function flush(key)
  local queue = pending[key]
  for start = 1, queue and #queue or 0, BATCH do
    redis.call('ZADD', key, unpack(queue, start, math.min(start + BATCH - 1, #queue)))
  end
  pending[key] = nil
end

local function index(slot, id, weight)
  local term = term_state(slot)
  if term.packed and term.count < packed_max then
    term.packed[#term.packed + 1] = id .. ':' .. weight
    term.count = term.count + 1
    return
  end
  local key = key_of[slot]
  if term.packed then  -- one posting too many for the field: the term gets a postings key
    for packed_id, packed_weight in string.gmatch(table.concat(term.packed, ','), '([^:,]+):(%d+)') do
      add(key, packed_weight, packed_id)
    end
    term.packed, term.df, term.size, term.least = nil, term.count, term.count, 0
  end
  term.df = term.df + 1
  -- below the lowest weight the key kept at its last cut, with as many as a cut keeps: never among the best
  if term.size >= trimmed and weight < term.least then
    return
  end
  add(key, weight, id)
  term.size = term.size + 1
  if term.size >= kept then  -- only the best are ever read
    flush(key)
    redis.call('ZREMRANGEBYRANK', key, 0, -trimmed - 1)
    term.size, term.least = trimmed, tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2])
  end
  touched[key] = true
end

-- every entry's position and what holds it, read at once: a replayed turn has its position already
local positions = {}
for n, entry in ipairs(entries) do
  positions[n] = entry.field
end
local holders = hmget(KEYS[KEY.positions], positions)
local held, holder_ids = {}, {}
for n = 1, #positions do
  if holders[n] then
    holder_ids[#holder_ids + 1] = holders[n]
  end
end
for n, raw in ipairs(hmget(KEYS[KEY.archive], holder_ids)) do
  held[holder_ids[n]] = raw or ''
end

-- the entries to add: a new turn at a taken position (a reused session key) takes it; one placed by this call
-- counts too
local placed, new = {}, {}
for n, entry in ipairs(entries) do
  local there = placed[entry.field] and ('"id":"' .. placed[entry.field] .. '"') or (holders[n] and held[holders[n]])
  if not (there and string.find(there, '"id":"' .. entry.id .. '"', 1, true)) then
    placed[entry.field] = entry.id
    new[#new + 1] = entry
  end
end

-- the terms whose key this call may write, or that are half way to one, and were not named: all named before
-- anything is written, or nothing is
local additions = {}
for _, entry in ipairs(new) do
  local postings = entry.postings
  for p = 1, #postings, 2 do
    additions[postings[p]] = (additions[postings[p]] or 0) + 1
  end
end
local unnamed, missing = {}, false
for slot, count in pairs(additions) do
  local term = term_state(slot)
  local reach = term.packed and term.count + count
  if not key_of[slot] and (not reach or reach >= packed_max / 2) then
    unnamed[#unnamed + 1] = terms[slot]
    missing = missing or not reach or reach > packed_max
  end
end
local out = {#new, #unnamed}
if missing then
  out[1] = -1
end
for _, term in ipairs(unnamed) do
  out[#out + 1] = term
end
if missing then
  return out
end

-- a field no term can be (terms hold no space) whose value is longer than a compact hash's values may be: the
-- dictionary stays a hash table from its first write. In the compact encoding (a few hundred terms of a young
-- archive) every field written is a linear scan and a move of the whole hash, more than all the postings cost
redis.call('HSETNX', KEYS[KEY.dictionary], 'hash table', string.rep('-', 65))

-- the counters as they stand; each new entry takes the next number, and its length norm is against the
-- archive as it is once the entry is in, as if the entries were written one by one
local stats = redis.call('HMGET', KEYS[KEY.stats], 'next', 'total_length')
local number, total = tonumber(stats[1]) or 0, tonumber(stats[2]) or 0
local size = redis.call('HLEN', KEYS[KEY.archive])
local archive_writes, position_writes, record_writes = {}, {}, {}
for _, entry in ipairs(new) do
  number = number + 1
  local id = short_id(number)
  archive_writes[#archive_writes + 1] = id
  archive_writes[#archive_writes + 1] = entry.json
  position_writes[#position_writes + 1] = entry.field
  position_writes[#position_writes + 1] = id
  record_writes[#record_writes + 1] = id
  record_writes[#record_writes + 1] = entry.record
  total, size = total + entry.length, size + 1
  -- the length norm against the average at write time: postings are stored by weight, so a
  -- read takes each term's best entries without scoring them all
  local norm = k1 * (1 - b + b * entry.length * size / total)
  local postings = entry.postings
  for p = 1, #postings, 2 do
    local tf = postings[p + 1]
    index(postings[p], id, math.max(1, math.floor(tf * (k1 + 1) / (tf + norm) * scale + 0.5)))
  end
end
if #new > 0 then
  hset(KEYS[KEY.archive], archive_writes)
  hset(KEYS[KEY.positions], position_writes)
  hset(KEYS[KEY.entry_terms], record_writes)
  redis.call('HSET', KEYS[KEY.stats], 'next', number, 'total_length', total)
end
for key in pairs(pending) do
  flush(key)
end
local writes = {}
for slot, term in pairs(state) do
  writes[#writes + 1] = terms[slot]
  writes[#writes + 1] = term.packed and table.concat(term.packed, ',') or table.concat({term.df, term.size, term.least}, ' ')
end
hset(KEYS[KEY.dictionary], writes)
-- the semantic side (archive_embed.lua) lives as long as the archive it indexes
for _, key in ipairs({KEYS[KEY.archive], KEYS[KEY.positions], KEYS[KEY.entry_terms], KEYS[KEY.stats],
                      KEYS[KEY.dictionary], KEYS[KEY.vectors], KEYS[KEY.semantic]}) do
  redis.call('EXPIRE', key, ttl)
end
for key in pairs(touched) do
  redis.call('EXPIRE', key, ttl)
end
local count = redis.call('HLEN', KEYS[KEY.archive])
if count > cap then
  -- the oldest entries are those of the lowest numbers, from `first` on; erased entries leave gaps
  local wanted = count - cap + chunk
  local number = tonumber(redis.call('HGET', KEYS[KEY.stats], 'first')) or 1
  local last = tonumber(redis.call('HGET', KEYS[KEY.stats], 'next'))
  local first
  local over = #out
  while #out < over + 3 * wanted and number <= last do
    local ids = {}
    for n = number, math.min(number + wanted - 1, last) do
      ids[#ids + 1] = short_id(n)
    end
    local records = redis.call('HMGET', KEYS[KEY.entry_terms], unpack(ids))
    local raws = redis.call('HMGET', KEYS[KEY.archive], unpack(ids))
    for n, id in ipairs(ids) do
      if raws[n] and #out < over + 3 * wanted then
        first = first or number + n - 1
        out[#out + 1] = id
        out[#out + 1] = records[n] or ''
        out[#out + 1] = cjson.decode(raws[n]).id
      end
    end
    number = number + #ids
  end
  redis.call('HSET', KEYS[KEY.stats], 'first', first or number)
end
return out
