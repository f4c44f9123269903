-- Remove entries from one owner's archive together with their postings; safe to repeat.
-- KEYS[1] entries hash, KEYS[2] positions hash, KEYS[3] entry-terms hash, KEYS[4] ages zset,
-- KEYS[5] stats hash, KEYS[6..] the postings of the evicted entries' terms
-- ARGV per entry: id, position field, length
-- Returns the number of entries removed.
local removed, ids = 0, {}
for i = 1, #ARGV, 3 do
  local id = ARGV[i]
  ids[#ids + 1] = id
  redis.call('ZREM', KEYS[4], id)
  redis.call('HDEL', KEYS[3], id)
  if redis.call('HDEL', KEYS[1], id) == 1 then
    redis.call('HDEL', KEYS[2], ARGV[i + 1], id)
    redis.call('HINCRBY', KEYS[5], 'total_length', -tonumber(ARGV[i + 2]))
    removed = removed + 1
  end
end
for k = 6, #KEYS do
  redis.call('ZREM', KEYS[k], unpack(ids))
end
return removed
