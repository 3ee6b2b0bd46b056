// The per-key limiter contract, shared by the in-process and the Redis implementation.
//
// Semantics (both implementations; src/testing/limiter-scenarios.ts pins them):
//
// A request is admitted with a RESERVATION (Charge: tokens and cost in nanos), an upper
// bound of what it can spend (src/limits/reservation.ts: prompt bytes + the output
// maximum, cost at the highest prices of the alias's targets). Admission charges the
// reservation everywhere it counts; settlement replaces it with what the request was
// actually charged. So every count below includes the requests in flight, and a burst
// cannot slip past a limit while its requests are still running.
//
// Requests and tokens per minute are token buckets. Capacity = the limit, refill =
// limit / 60000 per millisecond, a bucket starts full. A request costs 1 from the
// requests bucket and its reserved tokens from the tokens bucket. Levels are kept in
// exact integer 1/60000ths (token-bucket.ts), so no float error accumulates.
//
// Admission checks everything first and applies only if every check passes: a refusal
// charges nothing (no request, no tokens, no budget, no slot).
//   - requests: level >= 1.
//   - tokens: level >= min(reserved tokens, limit). A request bigger than the whole
//     bucket still passes once the bucket is full, then leaves it in debt.
//   - concurrency: live permits of the key < limit (see leases below).
//   - budgets, the token budget (tokens per UTC day/month) and the cost budget (nanos
//     per UTC day/month) alike: `used` is the window's count, which holds every settled
//     charge AND every live reservation. Admitted iff used < limit and
//     reserved <= limit - used. A reservation larger than the whole budget is never
//     admitted: no window could hold it. Hence, while every charge is at most its
//     reservation (for text it is, reservation.ts), the charges of a window never pass
//     the limit, whatever the burst. A charge above its reservation (an image beyond its
//     per-image bound) adds its excess to that, and is counted at most maxChargeMultiple
//     times its reservation (charge-ceiling.ts), so whatever upstreams report a burst
//     counts at most that multiple of the limit.
//     (used < limit makes a reservation of 0, e.g. an unpriced request against a cost
//     budget, meet a spent budget like any other request.)
//
// Refusal and Retry-After: when several checks fail, the refusal is `budget` if a budget
// fails (it is a different client error, 429 insufficient_quota), otherwise the failing
// check with the longest wait (ties: requests, tokens, concurrency). Of two failing
// budgets the refusal names one the request can never fit first, then a spent one, then
// the longer wait, then tokens. retryAfterMs is the longest wait among the failing
// checks, or null when a budget can never admit the request (its reservation is above
// the whole budget): retrying the same request cannot help, only a smaller one can.
//   - requests/tokens: time until the bucket holds enough (1, or min(reserved, limit));
//   - concurrency: a fixed hint of CONCURRENCY_RETRY_MS (1000 ms): slots free when other
//     requests finish, which the limiter cannot predict;
//   - budget spent (used >= limit): time until the period ends (next UTC midnight or
//     first of the month);
//   - budget not spent, the reservation does not fit the room left, and the key has
//     requests in flight: CONCURRENCY_RETRY_MS, as room comes back when they settle
//     below their reservations. With nothing in flight no room can come back before
//     the period ends: time until then.
// A budget refusal carries its detail (kind, limit, used, requested, period, resetsAt,
// spent, cause), in tokens or nanos by kind.
//
// Leases: a permit expires leaseMs (DEFAULT_LEASE_MS, 60 s) after admission or after its
// last renew(); renew() moves the expiry to nowMs + leaseMs (never earlier than it was).
// The gateway renews every leaseMs / 3 while the request runs, so a permit lives exactly
// as long as its request and expires only when its holder died. An expired permit frees
// its concurrency slot and stays charged: settling it, or renewing it, does nothing
// (renew answers false), because its slot may already be someone else's.
//
// Settlement (once per permit): the charge, each of tokens and cost taken at most
// maxChargeMultiple (default DEFAULT_MAX_CHARGE_MULTIPLE) times the permit's
// reservation (countedCharge, charge-ceiling.ts), replaces the reservation in the tokens
// bucket (the difference given back, clamped at capacity, or taken, possibly into
// debt), in the token budget window and in the cost budget window charged at admission
// (budgetPeriod, costBudgetPeriod), never below 0, so a request that spans midnight is
// counted in the day it was admitted. The concurrency slot is released. Corrections
// follow the limits passed to settle (the limits in force then). Settling a permit twice,
// a permit the limiter does not hold (admitted with no limits at all) or an expired one
// does nothing. Inputs are checked (assertLimiterInput) and a bad one rejects with a
// RangeError before anything changes: the gateway settles only checked values.
//
// Counts are bounded: a budget window's count never exceeds BUDGET_COUNT_CEILING (far
// above every budget, so the decisions are unchanged) and a charge is at most
// MAX_REQUEST_TOKENS tokens and MAX_CHARGE_NANOS nanos, so every sum is an exact integer
// in JavaScript and in Redis' Lua alike.
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

/** What a request reserves at admission or is charged at settlement. */
export interface Charge {
  readonly tokens: number;
  /** Integer nanos (1e-9) of the configured currency; 0 when unpriced. */
  readonly costNanos: number;
}

export interface AdmitInput {
  keyId: string;
  limits: KeyLimits;
  reservation: Charge;
  nowMs: number;
}

export interface Permit {
  readonly keyId: string;
  readonly id: string;
  readonly reservation: Charge;
  readonly admittedAtMs: number;
  /** Window ids charged at admission (`2026-11-22`, `2026-11`), null when that budget is not set. */
  readonly budgetPeriod: string | null;
  readonly costBudgetPeriod: string | null;
}

/** Why a budget refused: limit, used and requested in tokens (kind 'tokens') or nanos (kind 'cost'). */
export interface BudgetRefusal {
  kind: 'tokens' | 'cost';
  limit: number;
  /** The window's count at the decision: settled charges plus live reservations. */
  used: number;
  /** This request's reservation. */
  requested: number;
  period: BudgetPeriod;
  /** ISO 8601, the end of the period. */
  resetsAt: string;
  /** used >= limit; false when the reservation does not fit the room left. */
  spent: boolean;
  /** Why, which says when a retry can succeed (see BudgetRefusalCause). */
  cause: BudgetRefusalCause;
}

/**
 * Why a budget refused, and so when the same request can pass:
 *   - exceeds_budget: the reservation is above the whole budget: never (lower max_tokens or the prompt);
 *   - spent: used >= limit: when the period ends;
 *   - held_in_flight: the room left is too small while requests in flight hold reservations: soon;
 *   - too_little_left: the room left is too small and nothing is in flight: when the period ends.
 */
export type BudgetRefusalCause = 'exceeds_budget' | 'spent' | 'held_in_flight' | 'too_little_left';

export type AdmitDecision =
  | { allowed: true; permit: Permit; snapshot: RateLimitSnapshot }
  | {
      allowed: false;
      refusal: Refusal;
      /** null: the same request can never be admitted (a budget's cause exceeds_budget). */
      retryAfterMs: number | null;
      snapshot: RateLimitSnapshot;
      /** Present when refusal is 'budget'. */
      budget?: BudgetRefusal;
    };

export interface SettleInput {
  permit: Permit;
  limits: KeyLimits;
  charge: Charge;
  nowMs: number;
  /**
   * The charge is counted at most this many times the permit's reservation
   * (limits.maxChargeMultiple; DEFAULT_MAX_CHARGE_MULTIPLE when absent). null counts
   * it as given, for a caller that bounds it itself (the limiter's own tests of its
   * arithmetic at the extremes).
   */
  maxChargeMultiple?: number | null;
}

/** A key's budget counts in the current windows (0 for a budget not set). */
export interface BudgetUse {
  tokens: number;
  costNanos: number;
}

export interface Limiter {
  admit(input: AdmitInput): Promise<AdmitDecision>;
  /** Replaces the reservation with `charge`, releases the slot. Idempotent. */
  settle(input: SettleInput): Promise<void>;
  /** Extends the permit's lease to nowMs + leaseMs; false when the limiter no longer holds it (settled, expired, unheld). */
  renew(permit: Permit, nowMs: number): Promise<boolean>;
  /** Budget use in the current periods, live reservations included (for the admin API). */
  budgetUsed(keyId: string, limits: KeyLimits, nowMs: number): Promise<BudgetUse>;
  /** The lease, so callers renew well inside it (every leaseMs / 3). */
  readonly leaseMs: number;
  close(): Promise<void>;
}

/** Default permit lease: a holder that stops renewing gives its slot back after this. */
export const DEFAULT_LEASE_MS = 60_000;
/** Retry hint for a concurrency refusal and a budget held by requests in flight (see the semantics above). */
export const CONCURRENCY_RETRY_MS = 1000;
/**
 * Bound on one request's reserved or charged tokens; larger values are programming
 * errors (no model has a context near it) and would break the exact bucket arithmetic.
 */
export const MAX_REQUEST_TOKENS = 1_000_000_000;
/**
 * Bound on one request's reserved or charged cost: 1e15 nanos, a million currency
 * units, the largest cost budget (key-limits.ts MAX_COST_BUDGET). Beyond it a charge
 * could not change any decision, and sums would leave the exact-integer range.
 */
export const MAX_CHARGE_NANOS = 1_000_000_000_000_000;
/**
 * Highest value a budget window's count is kept at: above every budget (1e12 tokens,
 * 1e15 nanos) plus one request, and with one more charge still below 2^53.
 */
export const BUDGET_COUNT_CEILING = 4_000_000_000_000_000;

/** The limiter was used after close(). */
export class LimiterClosedError extends Error {
  override name = 'LimiterClosedError';
  readonly code = 'limiter_closed';
  constructor() {
    super('The limiter is closed.');
  }
}

/**
 * Throws RangeError on a charge or clock value the limiter cannot account exactly.
 * These come from the gateway, never from a client, so they are bugs: the gateway
 * checks upstream usage before it settles.
 */
export function assertLimiterInput(charge: Charge, nowMs: number, what: 'reservation' | 'charge'): void {
  if (typeof charge !== 'object' || charge === null) throw new RangeError(`${what} must be an object { tokens, costNanos }; got ${String(charge)}.`);
  const { tokens, costNanos } = charge;
  if (!Number.isSafeInteger(tokens) || tokens < 0 || tokens > MAX_REQUEST_TOKENS) {
    throw new RangeError(`${what}.tokens must be an integer from 0 to ${MAX_REQUEST_TOKENS}; got ${tokens}.`);
  }
  if (!Number.isSafeInteger(costNanos) || costNanos < 0 || costNanos > MAX_CHARGE_NANOS) {
    throw new RangeError(`${what}.costNanos must be an integer from 0 to ${MAX_CHARGE_NANOS}; got ${costNanos}.`);
  }
  assertNow(nowMs);
}

/** Throws RangeError on a clock value that is not whole milliseconds since the epoch. */
export function assertNow(nowMs: number): void {
  if (!Number.isSafeInteger(nowMs) || nowMs < 0) {
    throw new RangeError(`nowMs must be a non-negative integer (milliseconds since the epoch); got ${nowMs}.`);
  }
}
