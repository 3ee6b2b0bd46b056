// The body of GET /api/keys/:id/usage (docs/admin-api.md), pure: a key's usage
// series with each bucket's cost in currency units beside its integer nanos, and
// where its token and cost budgets stand. The handler in admin-api.ts reads the
// store and the limiter and hands their answers here.
import { budgetWindowAt } from '../limits/budget-period.ts';
import { amountOf } from '../limits/cost.ts';
import type { BudgetPeriod, KeyLimits } from '../limits/key-limits.ts';
import type { KeyUsage } from '../usage/usage-ledger.ts';
import type { Granularity, UsageBucket, UsageSeries } from '../usage/usage-series.ts';

/** What the limiter counts in the budgets' current windows, requests in flight included. */
export interface BudgetUse {
  tokens: number;
  costNanos: number;
}

type Costed<T extends KeyUsage> = T & { cost: number };

export interface UsageView {
  keyId: string;
  granularity: Granularity;
  buckets: Costed<UsageBucket>[];
  totals: Costed<KeyUsage>;
  currency: string;
  budget: { tokens: number; used: number; period: BudgetPeriod; resetsAt: string } | null;
  costBudget: { amount: number; used: number; usedNanos: number; period: BudgetPeriod; resetsAt: string; currency: string } | null;
}

/**
 * i15-lead: helper A's Limiter.budgetUsed returns a BudgetUse; until it is merged
 * it returns the tokens alone. Drop this once budgetUsed answers { tokens, costNanos }.
 */
export function budgetUseOf(used: number | BudgetUse): BudgetUse {
  return typeof used === 'number' ? { tokens: used, costNanos: 0 } : used;
}

/** The usage with its cost in currency units beside the exact nanos (the CLI's --json too). */
export function costed<T extends KeyUsage>(u: T): Costed<T> {
  return { ...u, cost: amountOf(u.costNanos) };
}

/** `used` is null only when neither budget is set (the limiter is then not asked). */
export function usageView(keyId: string, series: UsageSeries, limits: KeyLimits, used: BudgetUse | null, currency: string, nowMs: number): UsageView {
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
        : { amount: costBudget.amount, used: amountOf(use.costNanos), usedNanos: use.costNanos, period: costBudget.period, resetsAt: resetsAt(costBudget.period), currency },
  };
}
