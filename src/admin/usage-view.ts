// The bodies of GET /api/keys/:id/usage and GET /api/usage (docs/admin-api.md),
// pure: a key's usage series with each bucket's cost in currency units beside its
// integer nanos, and where its token and cost budgets stand; every key's usage
// over the same period. The handlers in admin-api.ts read the store and the
// limiter and hand their answers here.
import { budgetWindowAt } from '../limits/budget-period.ts';
import { amountOf } from '../limits/cost.ts';
import type { BudgetPeriod, KeyLimits } from '../limits/key-limits.ts';
import type { BudgetUse } from '../limits/limiter.ts';
import { HOUR_MS, type KeyUsage } from '../usage/usage-ledger.ts';
import { bucketStart, SERIES_LENGTH, type Granularity, type UsageBucket, type UsageSeries } from '../usage/usage-series.ts';

type Costed<T extends KeyUsage> = T & { cost: number };

export interface UsageView {
  keyId: string;
  granularity: Granularity;
  buckets: Costed<UsageBucket>[];
  totals: Costed<KeyUsage>;
  currency: string;
  budget: { tokens: number; used: number; period: BudgetPeriod; resetsAt: string } | null;
  /**
   * `recordedNanos`: what the usage records hold for the budget's window, all
   * of the key's spending in it, where `usedNanos` counts only what was
   * charged while the budget was set; null when the day series does not
   * reach back to the window's start.
   */
  costBudget: { amount: number; used: number; usedNanos: number; recordedNanos: number | null; period: BudgetPeriod; resetsAt: string; currency: string } | null;
}

/** The usage with its cost in currency units beside the exact nanos (the CLI's --json too). */
export function costed<T extends KeyUsage>(u: T): Costed<T> {
  return { ...u, cost: amountOf(u.costNanos) };
}

/** The cost the day series records from the start of `period`'s window at `nowMs`; null when the series starts later. */
export function recordedCostInWindow(days: UsageSeries, period: BudgetPeriod, nowMs: number): number | null {
  const startMs = budgetWindowAt(nowMs, period).startMs;
  const first = days.buckets[0];
  if (days.granularity !== 'day' || first === undefined || Date.parse(first.start) > startMs) return null;
  return days.buckets.reduce((sum, b) => (Date.parse(b.start) >= startMs ? sum + b.costNanos : sum), 0);
}

/**
 * `used` is null only when neither budget is set (the limiter is then not
 * asked); `days` is the key's day series, read when a spending budget is set.
 */
export function usageView(keyId: string, series: UsageSeries, limits: KeyLimits, used: BudgetUse | null, currency: string, nowMs: number, days: UsageSeries | null = null): UsageView {
  const resetsAt = (period: BudgetPeriod): string => new Date(budgetWindowAt(nowMs, period).endMs).toISOString();
  const { tokenBudget, costBudget } = limits;
  const use = used ?? { tokens: 0, costNanos: 0 };
  return {
    keyId,
    granularity: series.granularity,
    buckets: series.buckets.map(costed),
    totals: costed(series.totals),
    currency,
    budget: tokenBudget === null ? null : { tokens: tokenBudget.tokens, used: use.tokens, period: tokenBudget.period, resetsAt: resetsAt(tokenBudget.period) },
    costBudget:
      costBudget === null
        ? null
        : {
            amount: costBudget.amount,
            used: amountOf(use.costNanos),
            usedNanos: use.costNanos,
            recordedNanos: days === null ? null : recordedCostInWindow(days, costBudget.period, nowMs),
            period: costBudget.period,
            resetsAt: resetsAt(costBudget.period),
            currency,
          },
  };
}

export interface PeriodUsageView {
  granularity: Granularity;
  /** ISO 8601 start of the period: the first bucket of a key's series at the same granularity. */
  from: string;
  /** Every key with recorded usage, by id; a key with none in the period has zeros. */
  data: Costed<KeyUsage & { keyId: string }>[];
  currency: string;
}

/** Every key's usage over the period a series at `granularity` covers at `nowMs` (48 hours, 30 days). */
export function periodUsageView(granularity: Granularity, totals: ReadonlyMap<string, KeyUsage>, currency: string, nowMs: number): PeriodUsageView {
  const size = granularity === 'hour' ? HOUR_MS : 24 * HOUR_MS;
  const from = bucketStart(nowMs, granularity) - (SERIES_LENGTH[granularity] - 1) * size;
  const data = [...totals].map(([keyId, u]) => costed({ keyId, ...u }));
  return { granularity, from: new Date(from).toISOString(), data, currency };
}
