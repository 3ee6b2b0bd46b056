// The limits an operator can set on one API key, and their strict parser.
//
// Shape (every field optional; absent or null means "no limit"):
//   { "requestsPerMinute": 60, "tokensPerMinute": 100000, "concurrentRequests": 4,
//     "tokenBudget": { "tokens": 5000000, "period": "month" } }
//
// Parsing is strict, like the config and key files: an unknown field, a wrong type or a
// value out of range is an error naming the JSON path, never a silent clamp, because a
// typo such as `tokensPerMinutes` must not quietly leave a key unlimited.

export type BudgetPeriod = 'day' | 'month';

export interface KeyLimits {
  /** null = unlimited. */
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  concurrentRequests: number | null;
  tokenBudget: { tokens: number; period: BudgetPeriod } | null;
  /** Money per UTC day or month, in currency units as written (max 6 decimals, > 0, <= 1_000_000). */
  costBudget: { amount: number; period: BudgetPeriod } | null; // i15-lead: from helper A
}

export const NO_LIMITS: KeyLimits = Object.freeze({
  requestsPerMinute: null,
  tokensPerMinute: null,
  concurrentRequests: null,
  tokenBudget: null,
  costBudget: null, // i15-lead: from helper A
});

/** Bounds of the per-minute and concurrency limits. 1e9 keeps the bucket arithmetic exact (see token-bucket.ts). */
export const MAX_RATE_LIMIT = 1_000_000_000;
/** Bound of a token budget per period. */
export const MAX_BUDGET_TOKENS = 1_000_000_000_000;

const LIMIT_FIELDS = ['requestsPerMinute', 'tokensPerMinute', 'concurrentRequests', 'tokenBudget', 'costBudget'] as const; // i15-lead: from helper A
const BUDGET_FIELDS = ['tokens', 'period'] as const;
const PERIODS: readonly BudgetPeriod[] = ['day', 'month'];

/** A limits value that breaks the schema; `param` is the JSON path, e.g. `limits.tokensPerMinute`. */
export class KeyLimitsError extends Error {
  override name = 'KeyLimitsError';
  readonly code = 'invalid_limits';
  readonly param: string;
  constructor(param: string, message: string) {
    super(message);
    this.param = param;
  }
}

/**
 * Checks `value` (parsed JSON from the key file, the admin API or the CLI) and returns
 * the limits. `at` is the path of `value` itself, used to name the offending field;
 * undefined or null means no limits at all.
 */
export function parseKeyLimits(value: unknown, at: string): KeyLimits {
  if (value === undefined || value === null) return NO_LIMITS;
  const fields = plainObject(value, at, LIMIT_FIELDS);
  return {
    requestsPerMinute: optionalInteger(fields['requestsPerMinute'], join(at, 'requestsPerMinute'), MAX_RATE_LIMIT),
    tokensPerMinute: optionalInteger(fields['tokensPerMinute'], join(at, 'tokensPerMinute'), MAX_RATE_LIMIT),
    concurrentRequests: optionalInteger(fields['concurrentRequests'], join(at, 'concurrentRequests'), MAX_RATE_LIMIT),
    tokenBudget: parseBudget(fields['tokenBudget'], join(at, 'tokenBudget')),
    costBudget: parseCostBudget(fields['costBudget'], join(at, 'costBudget')), // i15-lead: from helper A
  };
}

/** True when at least one limit is set (a key without any skips the limiter's state). */
export function hasAnyLimit(limits: KeyLimits): boolean {
  return (
    limits.requestsPerMinute !== null ||
    limits.tokensPerMinute !== null ||
    limits.concurrentRequests !== null ||
    limits.tokenBudget !== null
  );
}

function parseBudget(value: unknown, at: string): KeyLimits['tokenBudget'] {
  if (value === undefined || value === null) return null;
  const fields = plainObject(value, at, BUDGET_FIELDS);
  const tokens = optionalInteger(fields['tokens'], join(at, 'tokens'), MAX_BUDGET_TOKENS);
  if (tokens === null) throw new KeyLimitsError(join(at, 'tokens'), `${join(at, 'tokens')} is required: the number of tokens allowed per period.`);
  const period = fields['period'];
  if (period === undefined || period === null) {
    throw new KeyLimitsError(join(at, 'period'), `${join(at, 'period')} is required: "day" or "month" (UTC).`);
  }
  if (typeof period !== 'string' || !(PERIODS as readonly string[]).includes(period)) {
    throw new KeyLimitsError(join(at, 'period'), `${join(at, 'period')} must be "day" or "month" (UTC); got ${describe(period)}.`);
  }
  return { tokens, period: period as BudgetPeriod };
}

// i15-lead: from helper A (a stand-in so helper C's branch compiles; take A's version).
function parseCostBudget(value: unknown, at: string): KeyLimits['costBudget'] {
  if (value === undefined || value === null) return null;
  const fields = plainObject(value, at, ['amount', 'period']);
  const amount = fields['amount'];
  if (typeof amount !== 'number' || !(amount > 0) || amount > 1_000_000 || Math.round(amount * 1e6) / 1e6 !== amount) {
    throw new KeyLimitsError(join(at, 'amount'), `${join(at, 'amount')} must be an amount above 0 and at most 1000000 with at most 6 decimals; got ${describe(amount)}.`);
  }
  const period = fields['period'];
  if (typeof period !== 'string' || !(PERIODS as readonly string[]).includes(period)) {
    throw new KeyLimitsError(join(at, 'period'), `${join(at, 'period')} must be "day" or "month" (UTC); got ${describe(period)}.`);
  }
  return { amount, period: period as BudgetPeriod };
}

function plainObject(value: unknown, at: string, allowed: readonly string[]): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new KeyLimitsError(at, `${at || 'limits'} must be an object; got ${describe(value)}.`);
  }
  const fields = value as Record<string, unknown>;
  for (const name of Object.keys(fields)) {
    if (!allowed.includes(name)) {
      throw new KeyLimitsError(join(at, name), `Unknown field ${join(at, name)}; the fields are ${allowed.join(', ')}.`);
    }
  }
  return fields;
}

function optionalInteger(value: unknown, at: string, max: number): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new KeyLimitsError(at, `${at} must be an integer from 1 to ${max} (or null for no limit); got ${describe(value)}.`);
  }
  return value;
}

function join(at: string, name: string): string {
  return at === '' ? name : `${at}.${name}`;
}

/** A short, safe rendering of a bad value for a message (bounded: values come from clients). */
function describe(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return value.length > 40 ? `a string of ${value.length} characters` : JSON.stringify(value);
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : String(value);
}
