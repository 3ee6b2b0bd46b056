// The admission and settlement rules of limiter.ts as pure functions over one key's
// state. The in-process limiter stores their results in a Map; the Redis limiter
// restates the same rules in Lua, and the shared scenario table checks both agree.
import type { BudgetWindow } from './budget-period.ts';
import type { KeyLimits } from './key-limits.ts';
import { CONCURRENCY_RETRY_MS, type AdmitDecision, type RateLimitSnapshot, type Refusal } from './limiter.ts';
import { charge, msUntilLevel, refill, remainingUnits, type BucketState } from './token-bucket.ts';

/** What admission needs to know about a key, as of the call. */
export interface KeyView {
  readonly requests: BucketState | undefined;
  readonly tokens: BucketState | undefined;
  /** Unsettled permits whose lease has not expired. */
  readonly livePermits: number;
  /** The budget window containing nowMs, null when no budget is set. */
  readonly budgetWindow: BudgetWindow | null;
  /** Tokens used in budgetWindow so far (0 when unknown). */
  readonly budgetUsed: number;
}

export type Admission =
  | {
      readonly allowed: true;
      /** Buckets to store: refilled to nowMs and charged; undefined for unset limits. */
      readonly requests: BucketState | undefined;
      readonly tokens: BucketState | undefined;
      readonly snapshot: RateLimitSnapshot;
    }
  | Extract<AdmitDecision, { allowed: false }>;

interface FailedCheck {
  readonly refusal: Refusal;
  readonly waitMs: number;
}

/** Decides one admission; see the semantics in limiter.ts. Charges nothing unless every check passes. */
export function decideAdmission(view: KeyView, limits: KeyLimits, estimatedTokens: number, nowMs: number): Admission {
  const failed: FailedCheck[] = [];
  const requests = limits.requestsPerMinute === null ? undefined : refill(view.requests, limits.requestsPerMinute, nowMs);
  const tokens = limits.tokensPerMinute === null ? undefined : refill(view.tokens, limits.tokensPerMinute, nowMs);

  if (requests !== undefined) {
    const waitMs = msUntilLevel(requests, 1, nowMs);
    if (waitMs > 0) failed.push({ refusal: 'requests', waitMs });
  }
  if (tokens !== undefined) {
    const waitMs = msUntilLevel(tokens, Math.min(estimatedTokens, tokens.limit), nowMs);
    if (waitMs > 0) failed.push({ refusal: 'tokens', waitMs });
  }
  if (limits.concurrentRequests !== null && view.livePermits >= limits.concurrentRequests) {
    failed.push({ refusal: 'concurrency', waitMs: CONCURRENCY_RETRY_MS });
  }
  const budget = limits.tokenBudget;
  const budgetSpent = budget !== null && view.budgetWindow !== null && view.budgetUsed >= budget.tokens;
  if (budgetSpent) failed.push({ refusal: 'budget', waitMs: view.budgetWindow.endMs - nowMs });

  if (failed.length === 0) {
    const chargedRequests = requests === undefined ? undefined : charge(requests, 1);
    const chargedTokens = tokens === undefined ? undefined : charge(tokens, estimatedTokens);
    return { allowed: true, requests: chargedRequests, tokens: chargedTokens, snapshot: snapshotOf(chargedRequests, chargedTokens, nowMs) };
  }

  let worst = failed[0] as FailedCheck;
  for (const check of failed) if (check.waitMs > worst.waitMs) worst = check;
  const snapshot = snapshotOf(requests, tokens, nowMs);
  if (budgetSpent) {
    return {
      allowed: false,
      refusal: 'budget',
      retryAfterMs: worst.waitMs,
      snapshot,
      budget: { tokens: budget.tokens, used: view.budgetUsed, period: budget.period, resetsAt: new Date(view.budgetWindow.endMs).toISOString() },
    };
  }
  return { allowed: false, refusal: worst.refusal, retryAfterMs: worst.waitMs, snapshot };
}

/** The tokens bucket after settling a permit: (estimate - actual) given back, capped at capacity. */
export function settleTokens(bucket: BucketState | undefined, limit: number, estimatedTokens: number, actualTokens: number, nowMs: number): BucketState {
  return charge(refill(bucket, limit, nowMs), actualTokens - estimatedTokens);
}

/** A budget count after settling a permit: the estimate replaced by the actual, never below 0. */
export function settleBudgetUsed(used: number, estimatedTokens: number, actualTokens: number): number {
  return Math.max(0, used + actualTokens - estimatedTokens);
}

/** The headers' data for the configured buckets (see limiter.ts). */
function snapshotOf(requests: BucketState | undefined, tokens: BucketState | undefined, nowMs: number): RateLimitSnapshot {
  const snapshot: RateLimitSnapshot = {};
  if (requests !== undefined) snapshot.requests = windowOf(requests, nowMs);
  if (tokens !== undefined) snapshot.tokens = windowOf(tokens, nowMs);
  return snapshot;
}

function windowOf(bucket: BucketState, nowMs: number) {
  return { limit: bucket.limit, remaining: remainingUnits(bucket), resetMs: msUntilLevel(bucket, bucket.limit, nowMs) };
}
