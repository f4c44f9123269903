-- Append turns to one owner's archive and index them for BM25; an entry already there is left alone.
-- KEYS[1] entries hash, KEYS[2] positions hash, KEYS[3] ages zset, KEYS[4] stats hash,
-- KEYS[5..] the term postings this call writes to
-- ARGV[1] ttl seconds, ARGV[2] cap, ARGV[3] eviction chunk, ARGV[4] k1, ARGV[5] b, then per entry:
-- id, JSON, position field, length, n, and n pairs (posting index into KEYS[5..], term frequency)
-- Returns {entries added, then the JSON of every entry over the cap, oldest first}: the caller
-- evicts those with their postings (it alone knows their posting keys).
local ttl, cap, chunk = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local k1, b = tonumber(ARGV[4]), tonumber(ARGV[5])
local added, i = 0, 6
while i <= #ARGV do
  local id, json, field = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local length, n = tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4])
  local first, last = i + 5, i + 4 + 2 * n
  i = last + 1
  if redis.call('HSETNX', KEYS[1], id, json) == 1 then
    redis.call('HSET', KEYS[2], field, id)
    redis.call('ZADD', KEYS[3], redis.call('HINCRBY', KEYS[4], 'next', 1), id)
    local total = redis.call('HINCRBY', KEYS[4], 'total_length', length)
    -- the length norm against the average at write time: postings are stored by weight, so a
    -- read takes each term's best entries with one ZREVRANGE instead of scoring them all
    local norm = k1 * (1 - b + b * length * redis.call('ZCARD', KEYS[3]) / total)
    for j = first, last, 2 do
      local tf = tonumber(ARGV[j + 1])
      redis.call('ZADD', KEYS[4 + tonumber(ARGV[j])], tf * (k1 + 1) / (tf + norm), id)
    end
    added = added + 1
  end
end
for k = 1, #KEYS do
  redis.call('EXPIRE', KEYS[k], ttl)
end
local out = {added}
local count = redis.call('ZCARD', KEYS[3])
if count > cap then
  local over = redis.call('ZRANGE', KEYS[3], 0, count - cap + chunk - 1)
  for _, raw in ipairs(redis.call('HMGET', KEYS[1], unpack(over))) do
    if raw then
      out[#out + 1] = raw
    end
  end
end
return out
