// The Lua side of the Redis limiter: the rules of limiter.ts and token-bucket.ts
// restated for Redis, one script per admit and one per settle, so each runs
// atomically on the server (no other command runs while a script does).
//
// Exactness. Redis' Lua 5.1 numbers are IEEE doubles, like JavaScript's, and every
// value here is an integer far below 2^53 (about 9.0e15): levels are at most
// MAX_RATE_LIMIT * 60000 = 6e13 and at least DEBT_FLOOR = -1e15, times are epoch
// milliseconds (~1.8e12), budget counts stay near MAX_BUDGET_TOKENS = 1e12. The
// operations are the same as token-bucket.ts (+, -, *, one division under
// math.ceil), so both sides compute the same doubles, bit for bit. Two traps are
// avoided on purpose:
//   - Lua turns a number into a string with "%.14g", which drops digits past the
//     14th (and writes 6e+13 style exponents). Every number written to Redis goes
//     through `int()` = string.format('%.0f', x), which is exact for integers.
//   - Returned numbers become Redis integer replies by truncation, exact for
//     integers; nothing fractional is ever returned.
//
// Keys of one gateway key carry the hash tag {keyId}, so on Redis Cluster every
// key a script touches lives in one slot (see redisLimiterKeys in redis-limiter.ts).
// nowMs always comes from the caller, never from Redis TIME, so tests inject clocks
// and instances agree on what "now" means for a request they admitted.
import { defineScript } from '../redis/script.ts';

/** Shared helpers: the token-bucket.ts functions over (level, last) pairs. */
const PRELUDE = `
local WINDOW = 60000
local DEBT_FLOOR = -1e15
local now = tonumber(ARGV[1])

local function int(x) return string.format('%.0f', x) end

-- A bucket as stored: level and last seen time, or nil, nil when absent (a fresh, full bucket).
local function stored(key)
  local v = redis.call('HMGET', key, 'level', 'last')
  if v[1] and v[2] then return tonumber(v[1]), tonumber(v[2]) end
  return nil, nil
end

-- token-bucket.ts refill(): full when new; a lowered limit clamps; no refill when the clock is behind.
local function refill(level, last, limit)
  local capacity = limit * WINDOW
  if level == nil then return capacity, now end
  if level > capacity then level = capacity end
  local elapsed = now - last
  if elapsed > 0 and level < capacity then
    if elapsed >= math.ceil((capacity - level) / limit) then level = capacity else level = level + elapsed * limit end
  end
  if now > last then last = now end
  return level, last
end

-- token-bucket.ts msUntilLevel(): includes the lag when the clock is behind the bucket.
local function wait(level, last, limit, units)
  local needed = units * WINDOW
  if level >= needed then return 0 end
  local lag = last - now
  if lag < 0 then lag = 0 end
  return lag + math.ceil((needed - level) / limit)
end

-- token-bucket.ts charge(): clamped to [DEBT_FLOOR, capacity].
local function charge(level, limit, cost)
  local l = level - cost * WINDOW
  if l < DEBT_FLOOR then l = DEBT_FLOOR end
  if l > limit * WINDOW then l = limit * WINDOW end
  return l
end

-- Kept until it would be full again (a missing bucket is a full one), plus a margin for clock skew.
local function store(key, level, last, limit, margin)
  redis.call('HSET', key, 'level', int(level), 'last', int(last))
  redis.call('PEXPIRE', key, int(wait(level, last, limit, limit) + margin))
end
`;

/**
 * Admission. KEYS: 1 requests bucket, 2 tokens bucket, 3 permits, [4 budget count of
 * the current window]. ARGV: 1 nowMs, 2 permit id, 3 leaseMs, 4 estimated tokens,
 * 5 requests/min, 6 tokens/min, 7 concurrent, 8 budget tokens (0 = no such limit),
 * 9 budget count TTL ms, 10 bucket TTL margin ms.
 *
 * Returns {allowed, hasRequests, requestsLevel, requestsLast, hasTokens, tokensLevel,
 * tokensLast, livePermits, budgetUsed}: the decision and the state it was made on,
 * before any charge, so the caller can rebuild the exact answer (refusal, waits,
 * snapshot) with the same pure code as the in-process limiter.
 */
export const ADMIT_SCRIPT = defineScript(`${PRELUDE}
local estimate = tonumber(ARGV[4])
local rpm = tonumber(ARGV[5])
local tpm = tonumber(ARGV[6])
local concurrent = tonumber(ARGV[7])
local budget = tonumber(ARGV[8])
local margin = tonumber(ARGV[10])

local rLevel, rLast = stored(KEYS[1])
local tLevel, tLast = stored(KEYS[2])
-- A permit expires when now >= admittedAt + leaseMs, its score.
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[1])
local live = redis.call('ZCARD', KEYS[3])
local used = 0
if KEYS[4] then used = tonumber(redis.call('GET', KEYS[4]) or '0') end

local ok = true
local rl, rt, tl, tt
if rpm > 0 then
  rl, rt = refill(rLevel, rLast, rpm)
  if wait(rl, rt, rpm, 1) > 0 then ok = false end
end
if tpm > 0 then
  tl, tt = refill(tLevel, tLast, tpm)
  local need = estimate
  if need > tpm then need = tpm end
  if wait(tl, tt, tpm, need) > 0 then ok = false end
end
if concurrent > 0 and live >= concurrent then ok = false end
if budget > 0 and used >= budget then ok = false end

if ok then
  if rpm > 0 then store(KEYS[1], charge(rl, rpm, 1), rt, rpm, margin) end
  if tpm > 0 then store(KEYS[2], charge(tl, tpm, estimate), tt, tpm, margin) end
  redis.call('ZADD', KEYS[3], int(now + tonumber(ARGV[3])), ARGV[2])
  local top = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
  redis.call('PEXPIRE', KEYS[3], int(tonumber(top[2]) - now + margin))
  if KEYS[4] then
    redis.call('INCRBY', KEYS[4], ARGV[4])
    redis.call('PEXPIRE', KEYS[4], ARGV[9])
  end
end
return { ok and 1 or 0, rLevel and 1 or 0, rLevel or 0, rLast or 0, tLevel and 1 or 0, tLevel or 0, tLast or 0, live, used }
`);

/**
 * Settlement. KEYS: 1 tokens bucket, 2 permits, [3 budget count of the permit's
 * window]. ARGV: 1 nowMs, 2 permit id, 3 estimated tokens, 4 actual tokens,
 * 5 tokens/min (0 = none), 6 bucket TTL margin ms.
 *
 * Returns 1 when the permit was held and live (corrections applied), else 0.
 */
export const SETTLE_SCRIPT = defineScript(`${PRELUDE}
local score = redis.call('ZSCORE', KEYS[2], ARGV[2])
if not score then return 0 end
redis.call('ZREM', KEYS[2], ARGV[2])
if now >= tonumber(score) then return 0 end

local estimate = tonumber(ARGV[3])
local actual = tonumber(ARGV[4])
local tpm = tonumber(ARGV[5])
if tpm > 0 then
  local level0, last0 = stored(KEYS[1])
  local level, last = refill(level0, last0, tpm)
  store(KEYS[1], charge(level, tpm, actual - estimate), last, tpm, tonumber(ARGV[6]))
end
if KEYS[3] then
  local used = redis.call('GET', KEYS[3])
  if used then
    local v = tonumber(used) + actual - estimate
    if v < 0 then v = 0 end
    redis.call('SET', KEYS[3], int(v), 'KEEPTTL')
  end
end
return 1
`);
