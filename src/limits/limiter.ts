// The per-key limiter contract, shared by the in-process and the Redis implementation.
//
// Semantics (both implementations; test/limits/limiter-scenarios.ts pins them):
//
// Requests and tokens per minute are token buckets. Capacity = the limit, refill =
// limit / 60000 per millisecond, a bucket starts full. A request costs 1 from the
// requests bucket and its estimated tokens from the tokens bucket. Levels are kept in
// exact integer 1/60000ths (token-bucket.ts), so no float error accumulates.
//
// Admission checks everything first and applies only if every check passes: a refusal
// charges nothing (no request, no tokens, no budget, no slot).
//   - requests: level >= 1.
//   - tokens: level >= min(estimate, limit). A request bigger than the whole bucket still
//     passes once the bucket is full, then leaves it in debt (a negative level).
//   - concurrency: unsettled, unexpired permits of the key < limit. A permit expires
//     `leaseMs` after admission (default 10 minutes) so a crashed holder cannot leak a
//     slot forever.
//   - budget: refused when the tokens used in the current UTC period are already >= the
//     budget ("spent"); otherwise admitted and the estimate charged. Why not refuse when
//     used + estimate > budget: the estimate is dominated by the maximum output tokens,
//     an upper bound that replies rarely reach, so that rule would refuse requests that
//     fit, with a "quota" error the client cannot act on. With the spent rule in-flight
//     estimates still count (admission charges them), so at most the one request that
//     crosses the line overshoots, by at most its own tokens.
//
// Refusal and Retry-After: when several checks fail, the refusal is `budget` if the
// budget fails (it is a different client error, 429 insufficient_quota), otherwise the
// failing check with the longest wait (ties: requests, tokens, concurrency).
// retryAfterMs is the longest wait among the failing checks:
//   - requests/tokens: time until the bucket holds enough (1, or min(estimate, limit));
//   - concurrency: a fixed hint of CONCURRENCY_RETRY_MS (1000 ms): slots free when other
//     requests finish, which the limiter cannot predict;
//   - budget: time until the period ends (next UTC midnight or first of the month).
//
// Settlement (once per permit): the token bucket gets (estimate - actual) back, clamped
// at capacity; when actual > estimate the level goes down, possibly into debt, delaying
// later requests. The budget counter of the permit's own period (budgetPeriod, fixed at
// admission) is corrected by (actual - estimate), never below 0, so a request that
// spans midnight is counted in the day it was admitted. The concurrency slot is
// released. Corrections follow the limits passed to settle (the limits in force then).
// Settling a permit twice, a permit the limiter does not hold (admitted with no limits
// at all) or a permit whose lease expired does nothing: after the lease the slot was
// already given back, and the estimate stays charged. Set leaseMs above the longest
// request the gateway allows.
//
// Snapshot (the x-ratelimit-* headers' data), on every answer, for the configured
// per-minute limits only: remaining = floor(level), at least 0; resetMs = time until the
// bucket is full again. After an admission it shows the state after the charge; after
// a refusal the state without one.
//
// Clock edges: every call carries nowMs. A bucket remembers the latest time it has seen;
// an earlier nowMs (clock stepped back, or instances with skewed clocks) refills nothing
// and the waits it reports include the time until the clock is back at that latest
// time, so they are never negative and never optimistic. Budget windows are computed
// from nowMs; counts of the current and the previous window are kept, so a clock stepping
// back over midnight counts into the earlier day's existing count, never a fresh one.
//
// Memory: state exists only for keys seen with at least one limit; a key whose buckets
// are full, whose permits are gone and whose budget windows have ended holds nothing a
// fresh key would not, and is dropped by a sweep.
import type { BudgetPeriod, KeyLimits } from './key-limits.ts';

export interface LimitWindowState {
  limit: number;
  remaining: number;
  /** Milliseconds until the bucket is full again (0 when full). */
  resetMs: number;
}

export interface RateLimitSnapshot {
  requests?: LimitWindowState;
  tokens?: LimitWindowState;
}

export type Refusal = 'requests' | 'tokens' | 'concurrency' | 'budget';

export interface AdmitInput {
  keyId: string;
  limits: KeyLimits;
  estimatedTokens: number;
  nowMs: number;
}

export interface Permit {
  readonly keyId: string;
  readonly id: string;
  readonly estimatedTokens: number;
  readonly admittedAtMs: number;
  /** Budget window id charged at admission (`2026-11-22`, `2026-11`), null when no budget was set. */
  readonly budgetPeriod: string | null;
}

export type AdmitDecision =
  | { allowed: true; permit: Permit; snapshot: RateLimitSnapshot }
  | {
      allowed: false;
      refusal: Refusal;
      retryAfterMs: number;
      snapshot: RateLimitSnapshot;
      /** Present when refusal is 'budget'. resetsAt is ISO 8601, the end of the period. */
      budget?: { tokens: number; used: number; period: BudgetPeriod; resetsAt: string };
    };

export interface SettleInput {
  permit: Permit;
  limits: KeyLimits;
  actualTokens: number;
  nowMs: number;
}

export interface Limiter {
  admit(input: AdmitInput): Promise<AdmitDecision>;
  /** Charges actual - estimated to the token bucket and budget; releases the concurrency slot. Idempotent per permit. */
  settle(input: SettleInput): Promise<void>;
  /** Budget use in the current period (for the admin API). */
  budgetUsed(keyId: string, limits: KeyLimits, nowMs: number): Promise<number>;
  close(): Promise<void>;
}

/** Default permit lease: a holder that never settles gives its slot back after this. */
export const DEFAULT_LEASE_MS = 10 * 60_000;
/** Retry hint for a concurrency refusal (see the semantics above). */
export const CONCURRENCY_RETRY_MS = 1000;
/**
 * Bound on one request's estimated or actual tokens; larger values are programming
 * errors (no model has a context near it) and would break the exact bucket arithmetic.
 */
const MAX_REQUEST_TOKENS = 1_000_000_000;

/** The limiter was used after close(). */
export class LimiterClosedError extends Error {
  override name = 'LimiterClosedError';
  readonly code = 'limiter_closed';
  constructor() {
    super('The limiter is closed.');
  }
}

/**
 * Throws RangeError on a token count or clock value the limiter cannot account
 * exactly. These come from the gateway, never from a client, so they are bugs.
 */
export function assertLimiterInput(tokens: number, nowMs: number, what: string): void {
  if (!Number.isSafeInteger(tokens) || tokens < 0 || tokens > MAX_REQUEST_TOKENS) {
    throw new RangeError(`${what} must be an integer from 0 to ${MAX_REQUEST_TOKENS}; got ${tokens}.`);
  }
  if (!Number.isSafeInteger(nowMs) || nowMs < 0) {
    throw new RangeError(`nowMs must be a non-negative integer (milliseconds since the epoch); got ${nowMs}.`);
  }
}
