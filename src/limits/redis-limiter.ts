// The shared limiter: the semantics of limiter.ts with the state in Redis, so every
// gateway instance on one Redis counts against the same buckets, slots and budgets.
//
// Each admit, settle and renew is ONE Lua script call (redis-scripts.ts), atomic on
// the server: fifty instances admitting at once for a key limited to ten get exactly
// ten admissions, and a burst split across instances fits one budget. The script
// decides and charges; it returns the state it decided on, and this file rebuilds the
// answer (refusal kind, Retry-After, snapshot) with the same pure decideAdmission() as
// the in-process limiter, so both agree to the millisecond. A disagreement between the
// script and decideAdmission is a bug and throws.
//
// Redis key layout for gateway key K under prefix P (see redisLimiterKeys):
//   P{K}:rpm                hash {level, last}   requests bucket (level in 1/60000ths)
//   P{K}:tpm                hash {level, last}   tokens bucket
//   P{K}:permits            zset permit id -> lease expiry (ms)  unsettled permits
//   P{K}:budget:<window>    string               tokens counted in a UTC day/month window
//   P{K}:cost:<window>      string               cost in nanos counted in a UTC day/month window
// Budget counts hold settled charges plus live reservations (limiter.ts). Idle state
// vanishes by TTL: a bucket when it would be full again (+ a margin), the permits set
// after its last lease (+ the margin), a budget count a day after its window ends.
import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../redis/client.ts';
import type { RedisReply } from '../redis/resp.ts';
import { budgetWindowAt, type BudgetWindow } from './budget-period.ts';
import { decideAdmission, type KeyLimitState } from './key-admission.ts';
import { budgetNanos, hasAnyLimit, type BudgetPeriod, type KeyLimits } from './key-limits.ts';
import {
  DEFAULT_LEASE_MS,
  LimiterClosedError,
  assertLimiterInput,
  assertNow,
  type AdmitDecision,
  type AdmitInput,
  type BudgetUse,
  type Charge,
  type Limiter,
  type Permit,
  type SettleInput,
} from './limiter.ts';
import { countedCharge, DEFAULT_MAX_CHARGE_MULTIPLE } from './charge-ceiling.ts';
import { ADMIT_SCRIPT, RENEW_SCRIPT, SETTLE_SCRIPT } from './redis-scripts.ts';
import type { BucketState } from './token-bucket.ts';

interface RedisLimiterOptions {
  /** Prefix of every key, e.g. `portcullis:`. */
  keyPrefix: string;
  /** Permit lease in ms (default DEFAULT_LEASE_MS). */
  leaseMs?: number;
}

/**
 * Extra life of a bucket past the moment it would be full again. Expiry runs on Redis'
 * clock while levels follow the callers' clocks; the margin covers instances whose
 * clocks lag the one that charged, so they never see a bucket vanish early.
 */
const BUCKET_TTL_MARGIN_MS = 60_000;
/** A budget count is kept this long after its window ends, for a clock stepping back over midnight (as the memory limiter). */
export const ENDED_BUDGET_KEPT_MS = 24 * 60 * 60_000;
/** Key ids are the store's `key_...` ids; the bound keeps Redis key names small. */
const MAX_KEY_ID_LENGTH = 200;

interface RedisLimiterKeys {
  requests: string;
  tokens: string;
  permits: string;
  budget(windowId: string): string;
  cost(windowId: string): string;
}

/** The Redis keys of gateway key `keyId`; all share the hash tag {keyId}, so one Cluster slot. */
export function redisLimiterKeys(keyPrefix: string, keyId: string): RedisLimiterKeys {
  const base = `${keyPrefix}{${keyId}}`;
  return {
    requests: `${base}:rpm`,
    tokens: `${base}:tpm`,
    permits: `${base}:permits`,
    budget: (windowId) => `${base}:budget:${windowId}`,
    cost: (windowId) => `${base}:cost:${windowId}`,
  };
}

/** The script answered with something else than its documented shape. */
class LimiterScriptReplyError extends Error {
  override name = 'LimiterScriptReplyError';
  readonly code = 'limiter_script_reply';
}

export function createRedisLimiter(client: RedisClient, options: RedisLimiterOptions): Limiter {
  const { keyPrefix } = options;
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  if (!Number.isSafeInteger(leaseMs) || leaseMs < 1) throw new RangeError(`leaseMs must be a positive integer; got ${leaseMs}.`);
  // Permits admitted with no limit at all: never written to Redis, so their settle skips the round trip.
  const unheld = new WeakSet<Permit>();
  let closed = false;

  function checkOpen(): void {
    if (closed) throw new LimiterClosedError();
  }

  /** The count's key and TTL (until a day after the window ends, see ENDED_BUDGET_KEPT_MS), and the window, of a budget set. */
  function budgetKey(name: (windowId: string) => string, period: BudgetPeriod | null, nowMs: number) {
    if (period === null) return null;
    const window = budgetWindowAt(nowMs, period);
    return { key: name(window.id), ttlMs: window.endMs - nowMs + ENDED_BUDGET_KEPT_MS, window };
  }

  return {
    leaseMs,

    async admit({ keyId, limits, reservation, nowMs }: AdmitInput): Promise<AdmitDecision> {
      checkOpen();
      assertLimiterInput(reservation, nowMs, 'reservation');
      checkKeyId(keyId);
      const id = randomUUID();
      if (!hasAnyLimit(limits)) {
        const permit = newPermit(keyId, id, reservation, nowMs, null, null);
        unheld.add(permit);
        return { allowed: true, permit, snapshot: {} };
      }
      const keys = redisLimiterKeys(keyPrefix, keyId);
      const tokenBudget = budgetKey(keys.budget, limits.tokenBudget?.period ?? null, nowMs);
      const costBudget = budgetKey(keys.cost, limits.costBudget?.period ?? null, nowMs);
      const scriptKeys = [keys.requests, keys.tokens, keys.permits];
      const tokenIndex = tokenBudget === null ? 0 : scriptKeys.push(tokenBudget.key);
      const costIndex = costBudget === null ? 0 : scriptKeys.push(costBudget.key);
      const reply = await client.evalScript(ADMIT_SCRIPT, scriptKeys, [
        nowMs,
        id,
        leaseMs,
        reservation.tokens,
        reservation.costNanos,
        limits.requestsPerMinute ?? 0,
        limits.tokensPerMinute ?? 0,
        limits.concurrentRequests ?? 0,
        limits.tokenBudget?.tokens ?? 0,
        budgetNanos(limits) ?? 0,
        tokenIndex,
        costIndex,
        tokenBudget?.ttlMs ?? 0,
        costBudget?.ttlMs ?? 0,
        BUCKET_TTL_MARGIN_MS,
      ]);
      const { allowed, view } = readAdmitReply(reply, limits, tokenBudget?.window ?? null, costBudget?.window ?? null);
      const decision = decideAdmission(view, limits, reservation, nowMs);
      if (decision.allowed !== allowed) {
        throw new LimiterScriptReplyError(
          `The admit script ${allowed ? 'admitted' : 'refused'} a request the limiter rules ${decision.allowed ? 'admit' : 'refuse'} (key ${keyId}); this is a bug.`,
        );
      }
      if (!decision.allowed) return decision;
      const permit = newPermit(keyId, id, reservation, nowMs, tokenBudget?.window.id ?? null, costBudget?.window.id ?? null);
      return { allowed: true, permit, snapshot: decision.snapshot };
    },

    async settle({ permit, limits, charge: reported, nowMs, maxChargeMultiple = DEFAULT_MAX_CHARGE_MULTIPLE }: SettleInput): Promise<void> {
      checkOpen();
      assertLimiterInput(reported, nowMs, 'charge');
      // The script takes the counted charge: the ceiling is the same pure rule as in memory.
      const charge = countedCharge(permit.reservation, reported, maxChargeMultiple);
      if (unheld.has(permit)) return;
      checkKeyId(permit.keyId);
      const keys = redisLimiterKeys(keyPrefix, permit.keyId);
      const scriptKeys = [keys.tokens, keys.permits];
      const tokenIndex = permit.budgetPeriod === null ? 0 : scriptKeys.push(keys.budget(permit.budgetPeriod));
      const costIndex = permit.costBudgetPeriod === null ? 0 : scriptKeys.push(keys.cost(permit.costBudgetPeriod));
      await client.evalScript(SETTLE_SCRIPT, scriptKeys, [
        nowMs,
        permit.id,
        permit.reservation.tokens,
        charge.tokens,
        permit.reservation.costNanos,
        charge.costNanos,
        limits.tokensPerMinute ?? 0,
        BUCKET_TTL_MARGIN_MS,
        tokenIndex,
        costIndex,
      ]);
    },

    async renew(permit: Permit, nowMs: number): Promise<boolean> {
      checkOpen();
      assertNow(nowMs);
      if (unheld.has(permit)) return false;
      checkKeyId(permit.keyId);
      const reply = await client.evalScript(RENEW_SCRIPT, [redisLimiterKeys(keyPrefix, permit.keyId).permits], [nowMs, permit.id, leaseMs, BUCKET_TTL_MARGIN_MS]);
      if (reply !== 0 && reply !== 1) throw new LimiterScriptReplyError('The renew script answered with an unexpected reply.');
      return reply === 1;
    },

    async budgetUsed(keyId: string, limits: KeyLimits, nowMs: number): Promise<BudgetUse> {
      checkOpen();
      assertNow(nowMs);
      if (limits.tokenBudget === null && limits.costBudget === null) return { tokens: 0, costNanos: 0 };
      checkKeyId(keyId);
      const keys = redisLimiterKeys(keyPrefix, keyId);
      const tokenBudget = budgetKey(keys.budget, limits.tokenBudget?.period ?? null, nowMs);
      const costBudget = budgetKey(keys.cost, limits.costBudget?.period ?? null, nowMs);
      // One GET per budget set, pipelined (the documented ACL allows GET, not MGET).
      const [tokens, costNanos] = await Promise.all([tokenBudget, costBudget].map(async (budget) =>
        budget === null ? 0 : readCount(await client.command(['GET', budget.key]), keyId),
      ));
      return { tokens: tokens as number, costNanos: costNanos as number };
    },

    async close(): Promise<void> {
      // The client belongs to the state backend, which closes it after everything built on it.
      closed = true;
    },
  };
}

function checkKeyId(keyId: string): void {
  if (typeof keyId !== 'string' || keyId.length === 0 || keyId.length > MAX_KEY_ID_LENGTH) {
    throw new RangeError(`keyId must be a string of 1 to ${MAX_KEY_ID_LENGTH} characters.`);
  }
}

function newPermit(keyId: string, id: string, reservation: Charge, admittedAtMs: number, budgetPeriod: string | null, costBudgetPeriod: string | null): Permit {
  return Object.freeze({
    keyId,
    id,
    reservation: Object.freeze({ tokens: reservation.tokens, costNanos: reservation.costNanos }),
    admittedAtMs,
    budgetPeriod,
    costBudgetPeriod,
  });
}

/** A budget count as GET returns it: null (no count yet) or a string of digits. */
function readCount(value: RedisReply, keyId: string): number {
  if (value === null) return 0;
  const used = typeof value === 'string' ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(used) || used < 0) throw new LimiterScriptReplyError(`A budget count of key ${keyId} in Redis is not a count.`);
  return used;
}

/** The admit script's reply as the decision flag and the KeyLimitState it was made on. */
function readAdmitReply(
  reply: RedisReply,
  limits: KeyLimits,
  tokenWindow: BudgetWindow | null,
  costWindow: BudgetWindow | null,
): { allowed: boolean; view: KeyLimitState } {
  if (!Array.isArray(reply) || reply.length !== 10 || !reply.every((n) => typeof n === 'number' && Number.isSafeInteger(n))) {
    throw new LimiterScriptReplyError('The admit script answered with an unexpected reply.');
  }
  const [allowed, hasRequests, requestsLevel, requestsLast, hasTokens, tokensLevel, tokensLast, livePermits, tokensUsed, nanosUsed] = reply as number[];
  const bucket = (has: number | undefined, limit: number | null, level: number | undefined, lastMs: number | undefined): BucketState | undefined =>
    has === 1 && limit !== null ? { limit, level: level as number, lastMs: lastMs as number } : undefined;
  return {
    allowed: allowed === 1,
    view: {
      requests: bucket(hasRequests, limits.requestsPerMinute, requestsLevel, requestsLast),
      tokens: bucket(hasTokens, limits.tokensPerMinute, tokensLevel, tokensLast),
      livePermits: livePermits as number,
      tokenBudget: tokenWindow === null ? null : { window: tokenWindow, used: tokensUsed as number },
      costBudget: costWindow === null ? null : { window: costWindow, used: nanosUsed as number },
    },
  };
}
