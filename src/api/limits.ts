// The ports that count: where usage is added up, and the limiter that admits
// and settles each request against a key's limits and budgets. Public types
// only; the key's limits themselves are in ./keys.ts. Each port has a contract
// suite in `portcullis/testing`.
import type { BudgetPeriod, KeyLimits } from './keys.ts';

// ---------------------------------------------------------------- usage

/** Counters of one key in one bucket, or in total. */
export interface KeyUsage {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  errors: number;
  /** Nanos (1e-9) of the configured currency. */
  costNanos: number;
  guardBlocked: number;
  guardMasked: number;
  guardLogged: number;
}

/** Drained counters: key id → hour start (ms since the epoch) → usage. */
export type PendingUsage = Map<string, Map<number, KeyUsage>>;

export type UsageGranularity = 'hour' | 'day';

export interface UsageBucket extends KeyUsage {
  /** ISO 8601 start of the bucket. */
  start: string;
}

export interface UsageSeries {
  granularity: UsageGranularity;
  /** 48 hours or 30 days in time order, ending with the bucket holding nowMs; empty ones are zeros. */
  buckets: UsageBucket[];
  totals: KeyUsage;
}

/** Where per-key usage is counted, by the hour. Times are milliseconds since the epoch (UTC). */
export interface UsageStore {
  /**
   * Adds drained counters (every 5 s and at close), all or nothing: on failure it
   * rejects and keeps none of them, and the gateway adds them to the next flush.
   */
  add(pending: PendingUsage, nowMs: number): Promise<void>;
  /** One key's usage (admin API): the last 48 hours by hour or 30 days by UTC day, ending with the bucket holding nowMs. */
  series(keyId: string, granularity: UsageGranularity, nowMs: number): Promise<UsageSeries>;
  /** Every key's all-time totals, by key id. */
  totals(): Promise<Map<string, KeyUsage>>;
  /** Every key with stored usage, summed over the window series(id, granularity, nowMs) covers, by key id. */
  periodTotals(granularity: UsageGranularity, nowMs: number): Promise<Map<string, KeyUsage>>;
}

// ---------------------------------------------------------------- limits

/** One per-minute limit's state, as the x-ratelimit-* headers give it. */
export interface LimitWindowState {
  /** The limit per minute (requests or tokens). */
  limit: number;
  /** What is left now, a whole number, at least 0. */
  remaining: number;
  /** A duration, not a time: milliseconds from now until the bucket is full again (0 when full). */
  resetMs: number;
}

export interface RateLimitSnapshot {
  requests?: LimitWindowState;
  tokens?: LimitWindowState;
}

/** What a request reserves at admission or is charged at settlement. */
export interface Charge {
  readonly tokens: number;
  /** Integer nanos of the configured currency. */
  readonly costNanos: number;
}

export interface Permit {
  readonly keyId: string;
  readonly id: string;
  readonly reservation: Charge;
  readonly admittedAtMs: number;
  readonly budgetPeriod: string | null;
  readonly costBudgetPeriod: string | null;
}

/**
 * A budget's refusal. `limit`, `used` and `requested` are tokens, or integer nanos for a
 * cost budget; `used` counts the period's settled charges and the reservations still
 * held; `spent` is used >= limit; `resetsAt` is the period's end (ISO 8601, UTC). Why,
 * and the refusal's retryAfterMs:
 *   - exceeds_budget: the reservation is above the whole budget: never (null);
 *   - spent: used >= limit: until resetsAt;
 *   - held_in_flight: too little room while the key's requests in flight hold reservations: a short wait;
 *   - too_little_left: too little room and nothing in flight: until resetsAt.
 */
export interface BudgetRefusal {
  kind: 'tokens' | 'cost';
  limit: number;
  used: number;
  requested: number;
  period: BudgetPeriod;
  resetsAt: string;
  spent: boolean;
  cause: 'exceeds_budget' | 'spent' | 'held_in_flight' | 'too_little_left';
}

export type AdmitDecision =
  | { allowed: true; permit: Permit; snapshot: RateLimitSnapshot }
  | {
      allowed: false;
      refusal: 'requests' | 'tokens' | 'concurrency' | 'budget';
      /** null: the same request can never be admitted. */
      retryAfterMs: number | null;
      snapshot: RateLimitSnapshot;
      budget?: BudgetRefusal;
    };

/**
 * Per-key limits (KeyLimits) at injected times (nowMs, ms since the epoch, UTC), what
 * runLimiterContract holds an implementation to:
 *   - requestsPerMinute and tokensPerMinute are buckets holding the limit, full at first
 *     and refilled continuously at the limit per 60 s, never above it; a request takes 1
 *     request and its reservation's tokens. The admission's snapshot has a window for each
 *     of the two set (none for a limit not set): `remaining` the whole units left.
 *   - concurrentRequests counts the key's permits in flight (admitted, not settled, lease
 *     not run out).
 *   - tokenBudget and costBudget count per UTC day or month (the budget's period); a cost
 *     budget in integer nanos (amount × 1e9). A reservation counts at admission, in the
 *     period of the admission, and is replaced by the charge at settle, in that same period.
 *     A refusal names the budget (BudgetRefusal) when one refuses, else the limit with the
 *     longest wait; retryAfterMs is how long until the same request can pass.
 *   - A refusal charges nothing. Keys never share anything.
 *   - Every permit of a key with a limit set holds a lease of leaseMs from admit or renew;
 *     a key without limits holds nothing (its permits' renew is false, their settle does
 *     nothing). A lease that ran out frees its slot; its reservation stays charged and a
 *     later settle changes nothing.
 */
export interface Limiter {
  /**
   * Admits a request of `keyId` reserving `reservation` at time nowMs, or refuses it and says
   * why. A permit is the admission as given (keyId, reservation, admittedAtMs), a new id, and
   * the budget periods it counts in: 'YYYY-MM-DD' (day) or 'YYYY-MM' (month), UTC, of nowMs;
   * null for a budget not set.
   */
  admit(input: { keyId: string; limits: KeyLimits; reservation: Charge; nowMs: number }): Promise<AdmitDecision>;
  /**
   * Replaces the reservation with the charge (in the tokens bucket, never above full, and
   * in both budgets) and releases the slot. The charge counts at most maxChargeMultiple times
   * the reservation, per field: 2 when absent, no ceiling when null. Idempotent.
   */
  settle(input: { permit: Permit; limits: KeyLimits; charge: Charge; nowMs: number; maxChargeMultiple?: number | null }): Promise<void>;
  /** Extends the lease to nowMs + leaseMs; false when the permit holds none (settled, run out, or a key without limits). */
  renew(permit: Permit, nowMs: number): Promise<boolean>;
  /**
   * The key's use of its budgets in the current UTC day or month (the period of
   * each budget in `limits`) at time nowMs (ms since the epoch), reservations of
   * requests in flight included: tokens, and cost in integer nanos; 0 for a
   * budget `limits` does not set. For the admin API.
   */
  budgetUsed(keyId: string, limits: KeyLimits, nowMs: number): Promise<{ tokens: number; costNanos: number }>;
  /**
   * A duration in milliseconds: how long a permit lives without renew(), after
   * which its slot is given back; the gateway renews every leaseMs / 3.
   * A whole number of milliseconds, at least 1000: createGateway refuses a host
   * limiter with another value (an error naming limiter.leaseMs).
   */
  readonly leaseMs: number;
  /** Called by the gateway only for a limiter it opened. */
  close(): Promise<void>;
}
