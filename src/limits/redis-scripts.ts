// The Lua side of the Redis limiter: the rules of limiter.ts and token-bucket.ts
// restated for Redis, one script per admit, settle and renew, so each runs
// atomically on the server (no other command runs while a script does).
//
// Exactness. Redis' Lua 5.1 numbers are IEEE doubles, like JavaScript's, and every
// value here is an integer far below 2^53 (about 9.0e15): levels are at most
// MAX_RATE_LIMIT * 60000 = 6e13 and at least DEBT_FLOOR = -1e15, times are epoch
// milliseconds (~1.8e12), budget counts (tokens, or cost in nanos) are kept in
// [0, BUDGET_COUNT_CEILING = 4e15] and a charge is at most MAX_CHARGE_NANOS = 1e15
// (limiter.ts), so a count plus a charge stays below 5e15. The operations are the
// same as token-bucket.ts and key-admission.ts (+, -, *, min, one division under
// math.ceil), so both sides compute the same doubles, bit for bit. Budget counts
// are plain strings read with GET and written with SET, never INCRBY: the clamp to
// the ceiling needs the value in Lua anyway. Two traps are avoided on purpose:
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
import { BUDGET_COUNT_CEILING } from './limiter.ts';

/** Shared helpers: the token-bucket.ts functions over (level, last) pairs. */
const PRELUDE = `
local WINDOW = 60000
local DEBT_FLOOR = -1e15
local CEILING = ${BUDGET_COUNT_CEILING}
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

-- key-admission.ts correctBudgetCount(): a count plus a delta, kept in [0, CEILING].
local function corrected(used, delta)
  local v = used + delta
  if v < 0 then v = 0 end
  if v > CEILING then v = CEILING end
  return v
end

-- key-admission.ts budgetAdmits(): not spent, and the reservation fits the room left.
local function admits(limit, used, reserved)
  if used >= limit then return false end
  return limit - used >= reserved
end

-- A budget count as stored (a string of digits), 0 when absent.
local function count(key)
  return tonumber(redis.call('GET', key) or '0')
end

-- The permits set lives until its latest lease ends, plus the margin.
local function keepPermits(key, margin)
  local top = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if top[2] then redis.call('PEXPIRE', key, int(tonumber(top[2]) - now + margin)) end
end

-- Kept until it would be full again (a missing bucket is a full one), plus a margin for clock skew.
local function store(key, level, last, limit, margin)
  redis.call('HSET', key, 'level', int(level), 'last', int(last))
  redis.call('PEXPIRE', key, int(wait(level, last, limit, limit) + margin))
end
`;

/**
 * Admission. KEYS: 1 requests bucket, 2 tokens bucket, 3 permits, then the count of the
 * token budget's current window and the cost budget's, each only when that budget is
 * set (their positions are ARGV 11 and 12). ARGV: 1 nowMs, 2 permit id, 3 leaseMs,
 * 4 reserved tokens, 5 reserved nanos, 6 requests/min, 7 tokens/min, 8 concurrent
 * (0 = no such limit), 9 token budget, 10 cost budget in nanos, 11 KEYS index of the
 * token budget count, 12 KEYS index of the cost budget count (0 = no such budget),
 * 13 token count TTL ms, 14 cost count TTL ms, 15 bucket TTL margin ms.
 *
 * Returns {allowed, hasRequests, requestsLevel, requestsLast, hasTokens, tokensLevel,
 * tokensLast, livePermits, tokenBudgetUsed, costBudgetUsed}: the decision and the
 * state it was made on, before any charge, so the caller can rebuild the exact answer
 * (refusal, waits, snapshot) with the same pure code as the in-process limiter.
 */
export const ADMIT_SCRIPT = defineScript(`${PRELUDE}
local reservedTokens = tonumber(ARGV[4])
local reservedNanos = tonumber(ARGV[5])
local rpm = tonumber(ARGV[6])
local tpm = tonumber(ARGV[7])
local concurrent = tonumber(ARGV[8])
local tokenBudget = tonumber(ARGV[9])
local costBudget = tonumber(ARGV[10])
local tokenKey = KEYS[tonumber(ARGV[11])]
local costKey = KEYS[tonumber(ARGV[12])]
local margin = tonumber(ARGV[15])

local rLevel, rLast = stored(KEYS[1])
local tLevel, tLast = stored(KEYS[2])
-- A permit expires when now >= its lease expiry, its score.
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[1])
local live = redis.call('ZCARD', KEYS[3])
local tokensUsed = 0
if tokenKey then tokensUsed = count(tokenKey) end
local nanosUsed = 0
if costKey then nanosUsed = count(costKey) end

local ok = true
local rl, rt, tl, tt
if rpm > 0 then
  rl, rt = refill(rLevel, rLast, rpm)
  if wait(rl, rt, rpm, 1) > 0 then ok = false end
end
if tpm > 0 then
  tl, tt = refill(tLevel, tLast, tpm)
  local need = reservedTokens
  if need > tpm then need = tpm end
  if wait(tl, tt, tpm, need) > 0 then ok = false end
end
if concurrent > 0 and live >= concurrent then ok = false end
if tokenKey and not admits(tokenBudget, tokensUsed, reservedTokens) then ok = false end
if costKey and not admits(costBudget, nanosUsed, reservedNanos) then ok = false end

if ok then
  if rpm > 0 then store(KEYS[1], charge(rl, rpm, 1), rt, rpm, margin) end
  if tpm > 0 then store(KEYS[2], charge(tl, tpm, reservedTokens), tt, tpm, margin) end
  redis.call('ZADD', KEYS[3], int(now + tonumber(ARGV[3])), ARGV[2])
  keepPermits(KEYS[3], margin)
  if tokenKey then redis.call('SET', tokenKey, int(corrected(tokensUsed, reservedTokens)), 'PX', ARGV[13]) end
  if costKey then redis.call('SET', costKey, int(corrected(nanosUsed, reservedNanos)), 'PX', ARGV[14]) end
end
return { ok and 1 or 0, rLevel and 1 or 0, rLevel or 0, rLast or 0, tLevel and 1 or 0, tLevel or 0, tLast or 0, live, tokensUsed, nanosUsed }
`);

/**
 * Settlement. KEYS: 1 tokens bucket, 2 permits, then the count of the token budget
 * window and of the cost budget window charged at admission, each only when the
 * permit has one (positions ARGV 9 and 10). ARGV: 1 nowMs, 2 permit id, 3 reserved
 * tokens, 4 charged tokens, 5 reserved nanos, 6 charged nanos, 7 tokens/min (0 = none),
 * 8 bucket TTL margin ms, 9 KEYS index of the token count, 10 of the cost count (0 = none).
 *
 * Returns 1 when the permit was held and live (corrections applied), else 0.
 */
export const SETTLE_SCRIPT = defineScript(`${PRELUDE}
local score = redis.call('ZSCORE', KEYS[2], ARGV[2])
if not score then return 0 end
redis.call('ZREM', KEYS[2], ARGV[2])
if now >= tonumber(score) then return 0 end

local tpm = tonumber(ARGV[7])
if tpm > 0 then
  local level0, last0 = stored(KEYS[1])
  local level, last = refill(level0, last0, tpm)
  store(KEYS[1], charge(level, tpm, tonumber(ARGV[4]) - tonumber(ARGV[3])), last, tpm, tonumber(ARGV[8]))
end
-- A count that expired meanwhile (its window ended a day ago) is not brought back.
local function settleCount(key, reserved, charged)
  if not key then return end
  local used = redis.call('GET', key)
  if used then redis.call('SET', key, int(corrected(tonumber(used), tonumber(charged) - tonumber(reserved))), 'KEEPTTL') end
end
settleCount(KEYS[tonumber(ARGV[9])], ARGV[3], ARGV[4])
settleCount(KEYS[tonumber(ARGV[10])], ARGV[5], ARGV[6])
return 1
`);

/**
 * Lease renewal. KEYS: 1 permits. ARGV: 1 nowMs, 2 permit id, 3 leaseMs, 4 bucket TTL
 * margin ms (the permits set's, as at admission).
 *
 * Moves the permit's expiry to nowMs + leaseMs (ZADD XX: only a permit present; never
 * earlier than it was, for a clock stepping back) and the set's PEXPIRE with it.
 * Returns 1 when the permit was held and live, else 0; an expired one is removed.
 */
export const RENEW_SCRIPT = defineScript(`${PRELUDE}
local score = redis.call('ZSCORE', KEYS[1], ARGV[2])
if not score then return 0 end
if now >= tonumber(score) then
  redis.call('ZREM', KEYS[1], ARGV[2])
  return 0
end
local expiry = now + tonumber(ARGV[3])
if expiry > tonumber(score) then redis.call('ZADD', KEYS[1], 'XX', int(expiry), ARGV[2]) end
keepPermits(KEYS[1], tonumber(ARGV[4]))
return 1
`);
