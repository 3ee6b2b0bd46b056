// The admission and settlement rules of limiter.ts as pure functions over one key's
// state. The in-process limiter stores their results in a Map; the Redis limiter
// restates the same rules in Lua, and the shared scenario table checks both agree.
import type { BudgetWindow } from './budget-period.ts';
import { budgetNanos, type BudgetPeriod, type KeyLimits } from './key-limits.ts';
import {
  BUDGET_COUNT_CEILING,
  CONCURRENCY_RETRY_MS,
  type AdmitDecision,
  type BudgetRefusal,
  type BudgetRefusalCause,
  type Charge,
  type RateLimitSnapshot,
  type Refusal,
} from './limiter.ts';
import { charge, msUntilLevel, refill, remainingUnits, type BucketState } from './token-bucket.ts';

/** One budget's window and its count (settled charges + live reservations) as of the call. */
export interface BudgetCountView {
  readonly window: BudgetWindow;
  /** 0 when the window has no count yet. */
  readonly used: number;
}

/** What admission needs to know about a key, as of the call. */
export interface KeyLimitState {
  readonly requests: BucketState | undefined;
  readonly tokens: BucketState | undefined;
  /** Unsettled permits whose lease has not expired. */
  readonly livePermits: number;
  /** The token budget's current window, null when no token budget is set. */
  readonly tokenBudget: BudgetCountView | null;
  /** The cost budget's current window (count in nanos), null when no cost budget is set. */
  readonly costBudget: BudgetCountView | null;
}

export type LimitDecision =
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
  /** null: retrying the same request cannot help. */
  readonly waitMs: number | null;
}

/** True when a budget with `used` of `limit` admits a reservation of `reserved` (see limiter.ts). */
export function budgetAdmits(limit: number, used: number, reserved: number): boolean {
  return used < limit && limit - used >= reserved;
}

/** A budget count with `delta` added (a reservation, or charge - reservation), kept in [0, BUDGET_COUNT_CEILING]. */
export function correctBudgetCount(used: number, delta: number): number {
  return Math.min(BUDGET_COUNT_CEILING, Math.max(0, used + delta));
}

/** Decides one admission; see the semantics in limiter.ts. Charges nothing unless every check passes. */
export function decideAdmission(view: KeyLimitState, limits: KeyLimits, reservation: Charge, nowMs: number): LimitDecision {
  const failed: FailedCheck[] = [];
  const requests = limits.requestsPerMinute === null ? undefined : refill(view.requests, limits.requestsPerMinute, nowMs);
  const tokens = limits.tokensPerMinute === null ? undefined : refill(view.tokens, limits.tokensPerMinute, nowMs);

  if (requests !== undefined) {
    const waitMs = msUntilLevel(requests, 1, nowMs);
    if (waitMs > 0) failed.push({ refusal: 'requests', waitMs });
  }
  if (tokens !== undefined) {
    const waitMs = msUntilLevel(tokens, Math.min(reservation.tokens, tokens.limit), nowMs);
    if (waitMs > 0) failed.push({ refusal: 'tokens', waitMs });
  }
  if (limits.concurrentRequests !== null && view.livePermits >= limits.concurrentRequests) {
    failed.push({ refusal: 'concurrency', waitMs: CONCURRENCY_RETRY_MS });
  }
  const budgets: { refusal: BudgetRefusal; waitMs: number | null }[] = [];
  if (limits.tokenBudget !== null && view.tokenBudget !== null) {
    const refused = checkBudget('tokens', limits.tokenBudget.tokens, limits.tokenBudget.period, view.tokenBudget, reservation.tokens, view.livePermits, nowMs);
    if (refused !== null) budgets.push(refused);
  }
  const costLimit = budgetNanos(limits);
  if (limits.costBudget !== null && costLimit !== null && view.costBudget !== null) {
    const refused = checkBudget('cost', costLimit, limits.costBudget.period, view.costBudget, reservation.costNanos, view.livePermits, nowMs);
    if (refused !== null) budgets.push(refused);
  }
  for (const budget of budgets) failed.push({ refusal: 'budget', waitMs: budget.waitMs });

  if (failed.length === 0) {
    const chargedRequests = requests === undefined ? undefined : charge(requests, 1);
    const chargedTokens = tokens === undefined ? undefined : charge(tokens, reservation.tokens);
    return { allowed: true, requests: chargedRequests, tokens: chargedTokens, snapshot: snapshotOf(chargedRequests, chargedTokens, nowMs) };
  }

  // The longest wait; a check that can never pass (null) outweighs every wait.
  let worst = failed[0] as FailedCheck;
  for (const check of failed) if (worst.waitMs !== null && (check.waitMs === null || check.waitMs > worst.waitMs)) worst = check;
  const snapshot = snapshotOf(requests, tokens, nowMs);
  const named = budgets.reduce<(typeof budgets)[number] | undefined>((best, b) => (best === undefined || outranks(b, best) ? b : best), undefined);
  if (named !== undefined) return { allowed: false, refusal: 'budget', retryAfterMs: worst.waitMs, snapshot, budget: named.refusal };
  return { allowed: false, refusal: worst.refusal, retryAfterMs: worst.waitMs, snapshot };
}

/** Of two failing budgets, the one the refusal names: one never passable first, then spent, then the longer wait; tokens (pushed first) on a tie. */
function outranks(a: { refusal: BudgetRefusal; waitMs: number | null }, b: { refusal: BudgetRefusal; waitMs: number | null }): boolean {
  if ((a.waitMs === null) !== (b.waitMs === null)) return a.waitMs === null;
  if (a.refusal.spent !== b.refusal.spent) return a.refusal.spent;
  return (a.waitMs ?? 0) > (b.waitMs ?? 0);
}

function checkBudget(
  kind: BudgetRefusal['kind'],
  limit: number,
  period: BudgetPeriod,
  view: BudgetCountView,
  requested: number,
  livePermits: number,
  nowMs: number,
): { refusal: BudgetRefusal; waitMs: number | null } | null {
  if (budgetAdmits(limit, view.used, requested)) return null;
  const spent = view.used >= limit;
  const cause: BudgetRefusalCause = requested > limit ? 'exceeds_budget' : spent ? 'spent' : livePermits > 0 ? 'held_in_flight' : 'too_little_left';
  const toPeriodEnd = Math.max(0, view.window.endMs - nowMs);
  return {
    refusal: { kind, limit, used: view.used, requested, period, resetsAt: new Date(view.window.endMs).toISOString(), spent, cause },
    waitMs: cause === 'exceeds_budget' ? null : cause === 'held_in_flight' ? CONCURRENCY_RETRY_MS : toPeriodEnd,
  };
}

/** The tokens bucket after settling a permit: the reservation replaced by the charge, capped at capacity. */
export function settleTokens(bucket: BucketState | undefined, limit: number, reservedTokens: number, chargedTokens: number, nowMs: number): BucketState {
  return charge(refill(bucket, limit, nowMs), chargedTokens - reservedTokens);
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
