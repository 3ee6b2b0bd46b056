// The in-process limiter: the rules of key-admission.ts over a Map of key states.
// The default for a single instance; state is lost on restart (buckets start full,
// budgets start at 0 unless the integrator seeds them from usage records).
import { randomUUID } from 'node:crypto';
import { budgetWindowAt } from './budget-period.ts';
import { decideAdmission, settleBudgetUsed, settleTokens } from './key-admission.ts';
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
import { isFull, refill, type BucketState } from './token-bucket.ts';

interface MemoryLimiterOptions {
  /** Permit lease in ms (default 10 minutes). */
  leaseMs?: number;
  /** Most keys with state (default 100000); see evictForNewKey. */
  maxKeys?: number;
}

interface MemoryLimiter extends Limiter {
  /** Drops the state of every key that holds nothing a fresh key would not; returns how many. */
  sweep(nowMs: number): number;
  /** Keys with state (for tests and metrics). */
  keyCount(): number;
}

const DEFAULT_MAX_KEYS = 100_000;
/** Budget windows kept per key: the current and the previous one (see limiter.ts, clock edges). */
const BUDGET_WINDOWS_KEPT = 2;
/** A sweep runs after this many admissions, or after as many as there are keys if more: amortized O(1). */
const SWEEP_EVERY_ADMISSIONS = 1024;
/**
 * A key's ended budget windows are kept this long before a sweep may drop them, so a
 * clock stepping back over midnight still finds the earlier day's count.
 */
const ENDED_BUDGET_KEPT_MS = 24 * 60 * 60_000;

interface BudgetCount {
  readonly id: string;
  readonly endMs: number;
  used: number;
}

interface KeyState {
  requests: BucketState | undefined;
  tokens: BucketState | undefined;
  /** Unsettled permits: id -> admittedAtMs. */
  readonly permits: Map<string, number>;
  /** At most BUDGET_WINDOWS_KEPT, any order. */
  readonly budgets: BudgetCount[];
}

export function createMemoryLimiter(options: MemoryLimiterOptions = {}): MemoryLimiter {
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
  if (!Number.isSafeInteger(leaseMs) || leaseMs < 1) throw new RangeError(`leaseMs must be a positive integer; got ${leaseMs}.`);
  if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) throw new RangeError(`maxKeys must be a positive integer; got ${maxKeys}.`);

  // Insertion order is recency order: a key is re-inserted when admitted, so the
  // first entry is the least recently admitted one.
  const keys = new Map<string, KeyState>();
  let admissionsSinceSweep = 0;
  let closed = false;

  function leaseExpired(admittedAtMs: number, nowMs: number): boolean {
    return nowMs - admittedAtMs >= leaseMs;
  }

  function dropExpiredPermits(state: KeyState, nowMs: number): void {
    for (const [id, admittedAtMs] of state.permits) if (leaseExpired(admittedAtMs, nowMs)) state.permits.delete(id);
  }

  function isIdle(state: KeyState, nowMs: number): boolean {
    dropExpiredPermits(state, nowMs);
    if (state.permits.size > 0) return false;
    for (const bucket of [state.requests, state.tokens]) {
      if (bucket !== undefined && !isFull(refill(bucket, bucket.limit, nowMs))) return false;
    }
    return state.budgets.every((count) => count.endMs + ENDED_BUDGET_KEPT_MS <= nowMs);
  }

  function sweep(nowMs: number): number {
    admissionsSinceSweep = 0;
    let dropped = 0;
    for (const [keyId, state] of keys) {
      if (isIdle(state, nowMs)) {
        keys.delete(keyId);
        dropped++;
      }
    }
    return dropped;
  }

  /**
   * Room for one more key: idle keys go first; if every key is busy, the least recently
   * admitted one is forgotten, which resets its limits (fail open for that key). Only
   * reachable with more active keys than maxKeys, which the operator sizes above the
   * number of keys in the store.
   */
  function evictForNewKey(nowMs: number): void {
    if (keys.size < maxKeys) return;
    sweep(nowMs);
    const oldest = keys.keys().next();
    if (keys.size >= maxKeys && oldest.done !== true) keys.delete(oldest.value);
  }

  function budgetCount(state: KeyState | undefined, id: string): BudgetCount | undefined {
    return state?.budgets.find((count) => count.id === id);
  }

  function checkOpen(): void {
    if (closed) throw new LimiterClosedError();
  }

  return {
    async admit({ keyId, limits, estimatedTokens, nowMs }: AdmitInput): Promise<AdmitDecision> {
      checkOpen();
      assertLimiterInput(estimatedTokens, nowMs, 'estimatedTokens');
      if (!hasAnyLimit(limits)) {
        // Nothing to count: no state, and the permit is not held (its settle is a no-op).
        return { allowed: true, permit: newPermit(keyId, estimatedTokens, nowMs, null), snapshot: {} };
      }
      if (++admissionsSinceSweep >= Math.max(SWEEP_EVERY_ADMISSIONS, keys.size)) sweep(nowMs);

      const known = keys.get(keyId);
      if (known !== undefined) dropExpiredPermits(known, nowMs);
      const budgetWindow = limits.tokenBudget === null ? null : budgetWindowAt(nowMs, limits.tokenBudget.period);
      const budget = budgetWindow === null ? undefined : budgetCount(known, budgetWindow.id);
      const admission = decideAdmission(
        {
          requests: known?.requests,
          tokens: known?.tokens,
          livePermits: known?.permits.size ?? 0,
          budgetWindow,
          budgetUsed: budget?.used ?? 0,
        },
        limits,
        estimatedTokens,
        nowMs,
      );
      if (!admission.allowed) return admission;

      let state = known;
      if (state === undefined) {
        evictForNewKey(nowMs);
        state = { requests: undefined, tokens: undefined, permits: new Map(), budgets: [] };
      } else {
        keys.delete(keyId);
      }
      keys.set(keyId, state);
      // A limit set to null keeps its old bucket untouched: it is swept once full.
      if (admission.requests !== undefined) state.requests = admission.requests;
      if (admission.tokens !== undefined) state.tokens = admission.tokens;
      if (budgetWindow !== null) {
        if (budget !== undefined) budget.used += estimatedTokens;
        else addBudgetCount(state, { id: budgetWindow.id, endMs: budgetWindow.endMs, used: estimatedTokens });
      }
      const permit = newPermit(keyId, estimatedTokens, nowMs, budgetWindow?.id ?? null);
      state.permits.set(permit.id, nowMs);
      return { allowed: true, permit, snapshot: admission.snapshot };
    },

    async settle({ permit, limits, actualTokens, nowMs }: SettleInput): Promise<void> {
      checkOpen();
      assertLimiterInput(actualTokens, nowMs, 'actualTokens');
      const state = keys.get(permit.keyId);
      const admittedAtMs = state?.permits.get(permit.id);
      if (state === undefined || admittedAtMs === undefined) return;
      state.permits.delete(permit.id);
      if (leaseExpired(admittedAtMs, nowMs)) return;
      if (limits.tokensPerMinute !== null) {
        state.tokens = settleTokens(state.tokens, limits.tokensPerMinute, permit.estimatedTokens, actualTokens, nowMs);
      }
      const budget = permit.budgetPeriod === null ? undefined : budgetCount(state, permit.budgetPeriod);
      if (budget !== undefined) budget.used = settleBudgetUsed(budget.used, permit.estimatedTokens, actualTokens);
    },

    async budgetUsed(keyId: string, limits: KeyLimits, nowMs: number): Promise<number> {
      checkOpen();
      if (limits.tokenBudget === null) return 0;
      return budgetCount(keys.get(keyId), budgetWindowAt(nowMs, limits.tokenBudget.period).id)?.used ?? 0;
    },

    async close(): Promise<void> {
      closed = true;
      keys.clear();
    },

    sweep(nowMs: number): number {
      checkOpen();
      return sweep(nowMs);
    },

    keyCount(): number {
      return keys.size;
    },
  };
}

function newPermit(keyId: string, estimatedTokens: number, admittedAtMs: number, budgetPeriod: string | null): Permit {
  return Object.freeze({ keyId, id: randomUUID(), estimatedTokens, admittedAtMs, budgetPeriod });
}

/** Keeps the newest BUDGET_WINDOWS_KEPT windows (by end), so memory per key stays bounded. */
function addBudgetCount(state: KeyState, count: BudgetCount): void {
  state.budgets.push(count);
  if (state.budgets.length <= BUDGET_WINDOWS_KEPT) return;
  let oldest = 0;
  for (let i = 1; i < state.budgets.length; i++) if ((state.budgets[i] as BudgetCount).endMs < (state.budgets[oldest] as BudgetCount).endMs) oldest = i;
  state.budgets.splice(oldest, 1);
}
