-- Append turns to one owner's archive and index them for BM25; an entry already there is left alone.
-- KEYS[1] entries hash, KEYS[2] positions hash (both ways: position field -> id, id -> position field),
-- KEYS[3] entry-terms hash, KEYS[4] ages zset,
-- KEYS[5] stats hash, KEYS[6..] the term postings this call writes to
-- ARGV[1] ttl seconds, ARGV[2] cap, ARGV[3] eviction chunk, ARGV[4] k1, ARGV[5] b, then per entry:
-- id, JSON, terms record, position field, length, and its postings as one string of
-- "index:frequency" pairs separated by spaces (index into KEYS[6..]): one argument per entry, not two
-- per term, keeps the call cheap to send and to read
-- Returns {entries added, then id and terms record of every entry over the cap, oldest first}: the
-- caller evicts those with their postings (it alone can name their posting keys).
local ttl, cap, chunk = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local k1, b = tonumber(ARGV[4]), tonumber(ARGV[5])
local added = 0
for i = 6, #ARGV, 6 do
  local id, json, record, field = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local length = tonumber(ARGV[i + 4])
  if redis.call('HSETNX', KEYS[1], id, json) == 1 then
    redis.call('HSET', KEYS[2], field, id, id, field)
    redis.call('HSET', KEYS[3], id, record)
    redis.call('ZADD', KEYS[4], redis.call('HINCRBY', KEYS[5], 'next', 1), id)
    local total = redis.call('HINCRBY', KEYS[5], 'total_length', length)
    -- the length norm against the average at write time: postings are stored by weight, so a
    -- read takes each term's best entries with one ZREVRANGE instead of scoring them all
    local norm = k1 * (1 - b + b * length * redis.call('ZCARD', KEYS[4]) / total)
    for index, frequency in string.gmatch(ARGV[i + 5], '(%d+):(%d+)') do
      local tf = tonumber(frequency)
      redis.call('ZADD', KEYS[5 + tonumber(index)], tf * (k1 + 1) / (tf + norm), id)
    end
    added = added + 1
  end
end
for k = 1, #KEYS do
  redis.call('EXPIRE', KEYS[k], ttl)
end
local out = {added}
local count = redis.call('ZCARD', KEYS[4])
if count > cap then
  local over = redis.call('ZRANGE', KEYS[4], 0, count - cap + chunk - 1)
  local records = redis.call('HMGET', KEYS[3], unpack(over))
  for n, id in ipairs(over) do
    out[#out + 1] = id
    out[#out + 1] = records[n] or ''
  end
end
return out
