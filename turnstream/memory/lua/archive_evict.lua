-- GENERATED HEADER, from this script's spec in turnstream/schemas/scripts.py: edit the spec, then run
-- `python -m turnstream.schemas.script_render`. The body reads KEYS and ARGV by the names below only.
-- Remove entries from one owner's archive together with their postings; safe to repeat.
-- KEYS[1] archive: P:arc:{O}, entry id -> entry JSON (one applied turn)
-- KEYS[2] positions: P:arcpos:{O}, `S#<position>` -> entry id and entry id -> `S#<position>`
-- KEYS[3] entry_terms: P:arcterms:{O}, entry id -> `length<TAB>S#<position><TAB>term term …`
-- KEYS[4] ages: P:arcage:{O}, entry id -> arrival number
-- KEYS[5] stats: P:arcstat:{O}, total_length, next
-- KEYS[6 …] postings: P:arcterm:{O}:<term>, the postings of the evicted entries' terms
-- ARGV[1 …] entries: per entry evicted, 3 arguments each; j counts them from 0
-- ARGV[1 + 3j] entries[j].id: entry id
-- ARGV[2 + 3j] entries[j].field: its position field, `S#<position>`
-- ARGV[3 + 3j] entries[j].length: its length in terms
-- Returns the number of entries removed.
local KEY = {archive = 1, positions = 2, entry_terms = 3, ages = 4, stats = 5}
local FIXED_KEYS = 5
local FIXED_ARGV = 0
local ENTRY = {id = 0, field = 1, length = 2}
local ENTRY_SIZE = 3
-- (end of the generated header)
local removed, ids = 0, {}
for i = FIXED_ARGV + 1, #ARGV, ENTRY_SIZE do
  local id = ARGV[i + ENTRY.id]
  ids[#ids + 1] = id
  redis.call('ZREM', KEYS[KEY.ages], id)
  redis.call('HDEL', KEYS[KEY.entry_terms], id)
  if redis.call('HDEL', KEYS[KEY.archive], id) == 1 then
    redis.call('HDEL', KEYS[KEY.positions], ARGV[i + ENTRY.field], id)
    redis.call('HINCRBY', KEYS[KEY.stats], 'total_length', -tonumber(ARGV[i + ENTRY.length]))
    removed = removed + 1
  end
end
for k = FIXED_KEYS + 1, #KEYS do
  redis.call('ZREM', KEYS[k], unpack(ids))
end
return removed
