// The limits an operator can set on one API key, and their strict parser.
//
// Shape (every field optional; absent or null means "no limit"):
//   { "requestsPerMinute": 60, "tokensPerMinute": 100000, "concurrentRequests": 4,
//     "tokenBudget": { "tokens": 5000000, "period": "month" },
//     "costBudget": { "amount": 25.5, "period": "month" } }
// A cost budget is money in the gateway's currency (config `currency`), written in
// currency units as the operator thinks of it; the limiter counts it in integer nanos
// (budgetNanos), like every stored money value.
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
  costBudget: { amount: number; period: BudgetPeriod } | null;
}

export const NO_LIMITS: KeyLimits = Object.freeze({
  requestsPerMinute: null,
  tokensPerMinute: null,
  concurrentRequests: null,
  tokenBudget: null,
  costBudget: null,
});

/** Bounds of the per-minute and concurrency limits. 1e9 keeps the bucket arithmetic exact (see token-bucket.ts). */
export const MAX_RATE_LIMIT = 1_000_000_000;
/** Bound of a token budget per period. */
export const MAX_BUDGET_TOKENS = 1_000_000_000_000;
/**
 * Bound of a cost budget per period, in currency units: 1e6 units are 1e15 nanos, so a
 * budget, its count and one request's charge stay exact integers in JavaScript and in
 * Redis' Lua (doubles, exact below 2^53, about 9e15).
 */
export const MAX_COST_BUDGET = 1_000_000;
/** Most decimals of a cost budget's amount (a millionth of a currency unit). */
export const COST_BUDGET_DECIMALS = 6;
/** Nanos per currency unit. */
const NANOS_PER_UNIT = 1e9;

const LIMIT_FIELDS = ['requestsPerMinute', 'tokensPerMinute', 'concurrentRequests', 'tokenBudget', 'costBudget'] as const;
const BUDGET_FIELDS = ['tokens', 'period'] as const;
const COST_BUDGET_FIELDS = ['amount', 'period'] as const;
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
    costBudget: parseCostBudget(fields['costBudget'], join(at, 'costBudget')),
  };
}

/** True when at least one limit is set (a key without any skips the limiter's state). */
export function hasAnyLimit(limits: KeyLimits): boolean {
  return (
    limits.requestsPerMinute !== null ||
    limits.tokensPerMinute !== null ||
    limits.concurrentRequests !== null ||
    limits.tokenBudget !== null ||
    limits.costBudget !== null
  );
}

/** The cost budget in integer nanos (Math.round(amount * 1e9), exact for 6 decimals), null when none is set. */
export function budgetNanos(limits: KeyLimits): number | null {
  return limits.costBudget === null ? null : Math.round(limits.costBudget.amount * NANOS_PER_UNIT);
}

function parseBudget(value: unknown, at: string): KeyLimits['tokenBudget'] {
  if (value === undefined || value === null) return null;
  const fields = plainObject(value, at, BUDGET_FIELDS);
  const tokens = optionalInteger(fields['tokens'], join(at, 'tokens'), MAX_BUDGET_TOKENS);
  if (tokens === null) throw new KeyLimitsError(join(at, 'tokens'), `${join(at, 'tokens')} is required: the number of tokens allowed per period.`);
  return { tokens, period: parsePeriod(fields['period'], join(at, 'period')) };
}

function parseCostBudget(value: unknown, at: string): KeyLimits['costBudget'] {
  if (value === undefined || value === null) return null;
  const fields = plainObject(value, at, COST_BUDGET_FIELDS);
  const where = join(at, 'amount');
  const amount = fields['amount'];
  if (amount === undefined || amount === null) {
    throw new KeyLimitsError(where, `${where} is required: the money allowed per period, in the gateway's currency (e.g. 25.5).`);
  }
  // Exact test of "at most 6 decimals": for amounts up to 1e6, amount * 1e6 is within far
  // less than 0.5 of the integer n it was written as, and n / 1e6 is correctly rounded, so
  // it is the same double as the decimal literal; any further decimal gives another double.
  const scale = 10 ** COST_BUDGET_DECIMALS;
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount <= 0 || amount > MAX_COST_BUDGET || Math.round(amount * scale) / scale !== amount) {
    throw new KeyLimitsError(
      where,
      `${where} must be a number above 0 and at most ${MAX_COST_BUDGET}, with at most ${COST_BUDGET_DECIMALS} decimals; got ${describe(amount)}.`,
    );
  }
  return { amount, period: parsePeriod(fields['period'], join(at, 'period')) };
}

function parsePeriod(period: unknown, at: string): BudgetPeriod {
  if (period === undefined || period === null) {
    throw new KeyLimitsError(at, `${at} is required: "day" or "month" (UTC).`);
  }
  if (typeof period !== 'string' || !(PERIODS as readonly string[]).includes(period)) {
    throw new KeyLimitsError(at, `${at} must be "day" or "month" (UTC); got ${describe(period)}.`);
  }
  return period as BudgetPeriod;
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
