// The UTC calendar windows a token budget is counted in.
//
// A day is `YYYY-MM-DD`, a month `YYYY-MM`, both in UTC so every instance, whatever its
// time zone, counts into the same window. Ids are the ISO date prefix, which sorts as
// time does and reads as a date in logs, Redis keys and the admin API.
import type { BudgetPeriod } from './key-limits.ts';

export interface BudgetWindow {
  /** `2026-11-22` for a day, `2026-11` for a month. */
  readonly id: string;
  /** First millisecond of the window (UTC). */
  readonly startMs: number;
  /** First millisecond after the window: when the budget resets. */
  readonly endMs: number;
}

/** The window of `period` that contains `nowMs` (milliseconds since the epoch). */
export function budgetWindowAt(nowMs: number, period: BudgetPeriod): BudgetWindow {
  const now = new Date(nowMs);
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth();
  if (period === 'month') {
    // Date.UTC carries month 12 into January of the next year, so December needs no case.
    return { id: `${pad(year, 4)}-${pad(month + 1, 2)}`, startMs: Date.UTC(year, month, 1), endMs: Date.UTC(year, month + 1, 1) };
  }
  const day = now.getUTCDate();
  return {
    id: `${pad(year, 4)}-${pad(month + 1, 2)}-${pad(day, 2)}`,
    startMs: Date.UTC(year, month, day),
    endMs: Date.UTC(year, month, day + 1),
  };
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}
