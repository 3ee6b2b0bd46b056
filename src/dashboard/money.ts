// Money as the dashboard words and reads it. The admin API counts cost in
// integer nanos (1e-9 of the gateway's currency) and writes budgets and prices
// as decimals in currency units; this module turns both into exact decimal
// text (no float rounding: nanos are split into whole units and a 9-digit
// fraction), and reads the amount an operator types. Pure: no DOM.
import type { BudgetPeriod, CostBudget, Price } from './admin-model.ts';

export const NANOS_PER_UNIT = 1_000_000_000;
/** Costs show every digit that is not zero, and at least 2 decimals: "0.00", "0.0001492", "12.50". */
const COST_DECIMALS = 2;
/** Budgets and prices are written with at most 6 decimals and shown with at least 2. */
const AMOUNT_MIN_DECIMALS = 2;
const AMOUNT_MAX_DECIMALS = 6;
/** The server's bound on a spending budget, in currency units. */
export const MAX_BUDGET_AMOUNT = 1_000_000;

const wholeUnits = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const decimalSeparator = new Intl.NumberFormat(undefined).formatToParts(1.5).find((part) => part.type === 'decimal')?.value ?? '.';

/**
 * The decimal text of a non-negative whole number of nanos, in the
 * browser's locale (grouping and decimal separator), with trailing zeros of
 * the fraction dropped down to `minDecimals`. null for anything that is not a
 * safe non-negative integer (a server bug, never shown as a wrong amount).
 */
export function decimalOfNanos(nanos: number, minDecimals: number): string | null {
  if (!Number.isSafeInteger(nanos) || nanos < 0) return null;
  const units = Math.floor(nanos / NANOS_PER_UNIT);
  const fraction = String(nanos - units * NANOS_PER_UNIT).padStart(9, '0');
  let end = fraction.length;
  while (end > minDecimals && fraction[end - 1] === '0') end--;
  const whole = wholeUnits.format(units);
  return end === 0 ? whole : `${whole}${decimalSeparator}${fraction.slice(0, end)}`;
}

/** Currency units (as the API writes budgets and prices) to nanos; exact for up to 6 decimals below 9 million units. */
export function nanosOfAmount(amount: number): number {
  return Math.round(amount * NANOS_PER_UNIT);
}

function withCurrency(text: string, currency: string): string {
  return currency === '' ? text : `${text} ${currency}`;
}

/** A cost, exact: "0.00015 USD", "12.345678 USD", "0.000000001 USD", "0.00 USD"; "unknown" for a value that is not whole nanos. */
export function formatCost(nanos: number, currency: string): string {
  const text = decimalOfNanos(nanos, COST_DECIMALS);
  return text === null ? 'unknown' : withCurrency(text, currency);
}

/** An amount written in currency units (a budget, a price): "25.50", "0.075", "1,000,000.00". */
export function formatAmount(amount: number): string {
  if (!Number.isFinite(amount) || amount < 0) return String(amount);
  return decimalOfNanos(nanosOfAmount(amount), AMOUNT_MIN_DECIMALS) ?? String(amount);
}

/** A chart axis label for a cost in nanos: the amount alone, no trailing zeros ("0.0002", "5", "1,500"). */
export function formatCostAxis(nanos: number): string {
  return decimalOfNanos(Math.round(nanos), 0) ?? '';
}

/** "25.50 USD/month": the CLI's wording of a spending budget. */
export function formatCostBudget(budget: CostBudget, currency: string): string {
  return `${withCurrency(formatAmount(budget.amount), currency)}/${budget.period}`;
}

/** "2.50 / 10.00 USD per 1M tokens in/out", with the cached-input price when it differs; "Free" when all are 0. */
export function formatPrice(price: Price, currency: string): string {
  if (price.input === 0 && price.cachedInput === 0 && price.output === 0) return 'Free';
  const base = `${withCurrency(`${formatAmount(price.input)} / ${formatAmount(price.output)}`, currency)} per 1M tokens in/out`;
  return price.cachedInput === price.input ? base : `${base}, cached input ${formatAmount(price.cachedInput)}`;
}

export type AmountParse = { ok: true; amount: number | null } | { ok: false; reason: AmountProblem };

export const AmountProblem = {
  /** A comma: a decimal comma or a thousands separator, either way ambiguous. */
  comma: 'comma',
  /** Not digits with an optional dot and decimals. */
  notAnAmount: 'not_an_amount',
  tooManyDecimals: 'too_many_decimals',
  zero: 'zero',
  tooLarge: 'too_large',
} as const;
export type AmountProblem = (typeof AmountProblem)[keyof typeof AmountProblem];

/**
 * Reads a spending budget typed in currency units: "25.50", "25.5", "0.125",
 * "1000"; empty is no budget. The text is read as written (never rounded): at
 * most 6 decimals, more than 0, at most MAX_BUDGET_AMOUNT.
 */
export function parseBudgetAmount(text: string): AmountParse {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: true, amount: null };
  if (trimmed.includes(',')) return { ok: false, reason: AmountProblem.comma };
  const match = /^(\d{1,16})(?:\.(\d{1,16}))?$/.exec(trimmed);
  if (match === null) return { ok: false, reason: AmountProblem.notAnAmount };
  if ((match[2] ?? '').length > AMOUNT_MAX_DECIMALS) return { ok: false, reason: AmountProblem.tooManyDecimals };
  const amount = Number(trimmed);
  if (amount === 0) return { ok: false, reason: AmountProblem.zero };
  if (amount > MAX_BUDGET_AMOUNT) return { ok: false, reason: AmountProblem.tooLarge };
  return { ok: true, amount };
}

const WINDOW_NOUN: Record<BudgetPeriod, string> = { day: 'today', month: 'this month' };

/**
 * Why the bar shows less than the records, worded without guessing which
 * cause it was: the budget counts only what was charged to it, and the
 * records hold everything the key spent in the window. Spending before the
 * budget was set, the part of an answer's charge above what one answer may
 * be charged (limits.maxChargeMultiple), a request admitted in the previous
 * window that ended in this one, and requests admitted while the count could
 * not be kept (no count on disk yet, the shared state unreachable) are in the
 * records and not in the count. null when they
 * agree (the bar may run ahead of the records: requests in flight are
 * reserved at once, and recorded when they end).
 */
export function uncountedNote(usedNanos: number, recordedNanos: number | null, period: BudgetPeriod, currency: string): string | null {
  if (recordedNanos === null || recordedNanos <= usedNanos) return null;
  return `The key spent ${formatCost(recordedNanos, currency)} ${WINDOW_NOUN[period]} (UTC) in all; ${formatCost(recordedNanos - usedNanos, currency)} of it is not counted against the budget: spent before the budget was set, above what one answer may be charged, or while the budget could not be counted.`;
}
