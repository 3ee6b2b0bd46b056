// The shared limiter: the semantics of limiter.ts with the state in Redis, so every
// gateway instance on one Redis counts against the same buckets, slots and budgets.
//
// Each admit and each settle is ONE Lua script call (redis-scripts.ts), atomic on the
// server: fifty instances admitting at once for a key limited to ten get exactly ten
// admissions. The script decides and charges; it returns the state it decided on, and
// this file rebuilds the answer (refusal kind, Retry-After, snapshot) with the same
// pure decideAdmission() as the in-process limiter, so both agree to the millisecond.
// A disagreement between the script and decideAdmission is a bug and throws.
//
// Redis key layout for gateway key K under prefix P (see redisLimiterKeys):
//   P{K}:rpm                hash {level, last}   requests bucket (level in 1/60000ths)
//   P{K}:tpm                hash {level, last}   tokens bucket
//   P{K}:permits            zset permit id -> lease expiry (ms)  unsettled permits
//   P{K}:budget:<window>    string               tokens charged in a UTC day/month window
// Idle state vanishes by TTL: a bucket when it would be full again (+ a margin), the
// permits set after its last lease, a budget count a day after its window ends.
import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../redis/client.ts';
import type { RedisReply } from '../redis/resp.ts';
import { budgetWindowAt, type BudgetWindow } from './budget-period.ts';
import { decideAdmission, type KeyView } from './key-admission.ts';
import { hasAnyLimit, type KeyLimits } from './key-limits.ts';
import {
  DEFAULT_LEASE_MS,
  LimiterClosedError,
  assertLimiterInput,
  type AdmitDecision,
  type AdmitInput,
  type Limiter,
  type Permit,
  type SettleInput,
} from './limiter.ts';
import { ADMIT_SCRIPT, SETTLE_SCRIPT } from './redis-scripts.ts';
import type { BucketState } from './token-bucket.ts';

interface RedisLimiterOptions {
  /** Prefix of every key, e.g. `portcullis:`. */
  keyPrefix: string;
  /** Permit lease in ms (default 10 minutes). */
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
}

/** The Redis keys of gateway key `keyId`; all share the hash tag {keyId}, so one Cluster slot. */
export function redisLimiterKeys(keyPrefix: string, keyId: string): RedisLimiterKeys {
  const base = `${keyPrefix}{${keyId}}`;
  return {
    requests: `${base}:rpm`,
    tokens: `${base}:tpm`,
    permits: `${base}:permits`,
    budget: (windowId) => `${base}:budget:${windowId}`,
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

  return {
    async admit({ keyId, limits, estimatedTokens, nowMs }: AdmitInput): Promise<AdmitDecision> {
      checkOpen();
      assertLimiterInput(estimatedTokens, nowMs, 'estimatedTokens');
      checkKeyId(keyId);
      const id = randomUUID();
      if (!hasAnyLimit(limits)) {
        const permit = newPermit(keyId, id, estimatedTokens, nowMs, null);
        unheld.add(permit);
        return { allowed: true, permit, snapshot: {} };
      }
      const keys = redisLimiterKeys(keyPrefix, keyId);
      const budgetWindow = limits.tokenBudget === null ? null : budgetWindowAt(nowMs, limits.tokenBudget.period);
      const scriptKeys = [keys.requests, keys.tokens, keys.permits];
      if (budgetWindow !== null) scriptKeys.push(keys.budget(budgetWindow.id));
      const reply = await client.evalScript(ADMIT_SCRIPT, scriptKeys, [
        nowMs,
        id,
        leaseMs,
        estimatedTokens,
        limits.requestsPerMinute ?? 0,
        limits.tokensPerMinute ?? 0,
        limits.concurrentRequests ?? 0,
        limits.tokenBudget?.tokens ?? 0,
        budgetWindow === null ? 0 : budgetWindow.endMs - nowMs + ENDED_BUDGET_KEPT_MS,
        BUCKET_TTL_MARGIN_MS,
      ]);
      const { allowed, view } = readAdmitReply(reply, limits, budgetWindow);
      const decision = decideAdmission(view, limits, estimatedTokens, nowMs);
      if (decision.allowed !== allowed) {
        throw new LimiterScriptReplyError(
          `The admit script ${allowed ? 'admitted' : 'refused'} a request the limiter rules ${decision.allowed ? 'admit' : 'refuse'} (key ${keyId}); this is a bug.`,
        );
      }
      if (!decision.allowed) return decision;
      return { allowed: true, permit: newPermit(keyId, id, estimatedTokens, nowMs, budgetWindow?.id ?? null), snapshot: decision.snapshot };
    },

    async settle({ permit, limits, actualTokens, nowMs }: SettleInput): Promise<void> {
      checkOpen();
      assertLimiterInput(actualTokens, nowMs, 'actualTokens');
      if (unheld.has(permit)) return;
      checkKeyId(permit.keyId);
      const keys = redisLimiterKeys(keyPrefix, permit.keyId);
      const scriptKeys = [keys.tokens, keys.permits];
      if (permit.budgetPeriod !== null) scriptKeys.push(keys.budget(permit.budgetPeriod));
      await client.evalScript(SETTLE_SCRIPT, scriptKeys, [
        nowMs,
        permit.id,
        permit.estimatedTokens,
        actualTokens,
        limits.tokensPerMinute ?? 0,
        BUCKET_TTL_MARGIN_MS,
      ]);
    },

    async budgetUsed(keyId: string, limits: KeyLimits, nowMs: number): Promise<number> {
      checkOpen();
      if (limits.tokenBudget === null) return 0;
      checkKeyId(keyId);
      const windowId = budgetWindowAt(nowMs, limits.tokenBudget.period).id;
      const reply = await client.command(['GET', redisLimiterKeys(keyPrefix, keyId).budget(windowId)]);
      if (reply === null) return 0;
      const used = typeof reply === 'string' ? Number(reply) : Number.NaN;
      if (!Number.isSafeInteger(used) || used < 0) throw new LimiterScriptReplyError(`The budget count of key ${keyId} in Redis is not a count.`);
      return used;
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

function newPermit(keyId: string, id: string, estimatedTokens: number, admittedAtMs: number, budgetPeriod: string | null): Permit {
  return Object.freeze({ keyId, id, estimatedTokens, admittedAtMs, budgetPeriod });
}

/** The admit script's reply as the decision flag and the KeyView it was made on. */
function readAdmitReply(reply: RedisReply, limits: KeyLimits, budgetWindow: BudgetWindow | null): { allowed: boolean; view: KeyView } {
  if (!Array.isArray(reply) || reply.length !== 9 || !reply.every((n) => typeof n === 'number' && Number.isSafeInteger(n))) {
    throw new LimiterScriptReplyError('The admit script answered with an unexpected reply.');
  }
  const [allowed, hasRequests, requestsLevel, requestsLast, hasTokens, tokensLevel, tokensLast, livePermits, budgetUsed] = reply as number[];
  const bucket = (has: number | undefined, limit: number | null, level: number | undefined, lastMs: number | undefined): BucketState | undefined =>
    has === 1 && limit !== null ? { limit, level: level as number, lastMs: lastMs as number } : undefined;
  return {
    allowed: allowed === 1,
    view: {
      requests: bucket(hasRequests, limits.requestsPerMinute, requestsLevel, requestsLast),
      tokens: bucket(hasTokens, limits.tokensPerMinute, tokensLevel, tokensLast),
      livePermits: livePermits as number,
      budgetWindow,
      budgetUsed: budgetUsed as number,
    },
  };
}
