-- Upsert memories of one owner and, optionally, compare-and-set the owner's profile; all or nothing.
-- KEYS[1] memories hash (id -> JSON), KEYS[2] created_at hash, KEYS[3] profile hash {text, version}
-- ARGV[1] keyword-set key prefix, ARGV[2] expected profile version ('' leaves the profile alone),
-- ARGV[3] new profile text, ARGV[4..] per memory: id, JSON, created_at, keywords joined by '\n'
-- Returns 1 when applied, 0 when the profile moved past the expected version (nothing written).
if ARGV[2] ~= '' then
  local stored = tonumber(redis.call('HGET', KEYS[3], 'version')) or 0
  if stored ~= tonumber(ARGV[2]) then
    return 0
  end
  redis.call('HSET', KEYS[3], 'text', ARGV[3], 'version', stored + 1)
end
for i = 4, #ARGV, 4 do
  local id = ARGV[i]
  local old = redis.call('HGET', KEYS[1], id)
  if old then
    -- re-index: the corrected text may have lost keywords ("2000") the old one had
    for _, keyword in ipairs(cjson.decode(old).keywords) do
      redis.call('SREM', ARGV[1] .. keyword, id)
    end
  end
  redis.call('HSET', KEYS[1], id, ARGV[i + 1])
  redis.call('HSETNX', KEYS[2], id, ARGV[i + 2])
  for keyword in string.gmatch(ARGV[i + 3], '[^\n]+') do
    redis.call('SADD', ARGV[1] .. keyword, id)
  end
end
return 1
