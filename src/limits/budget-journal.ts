// The budget counts of the in-process limiter as data that outlives the process:
// the shape written to <dataDir>/budgets.json, its strict parser, and which counts a
// restart takes back. Pure; the file is read and written by src/state/budget-file.ts.
//
//   {"version":1,"keys":{"<key id>":{"tokens":{"2026-11-22":4180},"cost":{"2026-11":61700000}}}}
//
// A count is what the limiter holds for that window: settled charges plus the
// reservations of requests in flight when it was written. A restart takes the counts
// of windows that have not ended; a request in flight at a crash stays charged at its
// reservation (its settlement died with the process), which over-counts, never under.
// Window ids are those of budget-period.ts (UTC day `YYYY-MM-DD`, month `YYYY-MM`).
import { BUDGET_COUNT_CEILING } from './limiter.ts';

export const BUDGET_JOURNAL_VERSION = 1;

export type BudgetKind = 'tokens' | 'cost';

/** One key's count in one window of one budget. */
export interface JournalEntry {
  readonly keyId: string;
  readonly kind: BudgetKind;
  /** `2026-11-22` or `2026-11`. */
  readonly windowId: string;
  readonly used: number;
}

const DAY_ID = /^(\d{4})-(\d{2})-(\d{2})$/;
const MONTH_ID = /^(\d{4})-(\d{2})$/;
const KINDS: readonly BudgetKind[] = ['tokens', 'cost'];

export class BudgetJournalError extends Error {
  override name = 'BudgetJournalError';
  readonly code = 'budget_journal_invalid';
}

/** First millisecond after the window `id` (a UTC day or month), or null when `id` is neither. */
export function windowEndMs(id: string): number | null {
  const day = DAY_ID.exec(id);
  if (day !== null) {
    const [y, m, d] = [Number(day[1]), Number(day[2]), Number(day[3])];
    const start = Date.UTC(y, m - 1, d);
    // Rejects 2026-02-30 and the like: the date must read back as written.
    return new Date(start).toISOString().slice(0, 10) === id ? Date.UTC(y, m - 1, d + 1) : null;
  }
  const month = MONTH_ID.exec(id);
  if (month !== null) {
    const [y, m] = [Number(month[1]), Number(month[2])];
    return m >= 1 && m <= 12 ? Date.UTC(y, m, 1) : null;
  }
  return null;
}

export function serializeBudgetJournal(entries: Iterable<JournalEntry>): string {
  const keys: Record<string, Partial<Record<BudgetKind, Record<string, number>>>> = {};
  const sorted = [...entries].sort((a, b) => compare(a.keyId, b.keyId) || compare(a.kind, b.kind) || compare(a.windowId, b.windowId));
  for (const e of sorted) {
    const key = (keys[e.keyId] ??= {});
    (key[e.kind] ??= {})[e.windowId] = e.used;
  }
  return `${JSON.stringify({ version: BUDGET_JOURNAL_VERSION, keys })}\n`;
}

/** Parses budgets.json; anything unexpected is an error naming the file and the field, never a silent zero. */
export function parseBudgetJournal(text: string, file: string): JournalEntry[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BudgetJournalError(`${file}: is not valid JSON`);
  }
  const root = value as { version?: unknown; keys?: unknown };
  if (!isObject(value) || root.version !== BUDGET_JOURNAL_VERSION || !isObject(root.keys)) {
    throw new BudgetJournalError(`${file}: expected {"version":1,"keys":{...}}`);
  }
  const out: JournalEntry[] = [];
  for (const [keyId, budgets] of Object.entries(root.keys)) {
    if (!isObject(budgets)) throw new BudgetJournalError(`${file}: keys.${keyId} must be an object`);
    for (const [kind, windows] of Object.entries(budgets)) {
      const at = `keys.${keyId}.${kind}`;
      if (!(KINDS as readonly string[]).includes(kind)) throw new BudgetJournalError(`${file}: ${at} is not a budget; the budgets are ${KINDS.join(', ')}`);
      if (!isObject(windows)) throw new BudgetJournalError(`${file}: ${at} must be an object`);
      for (const [windowId, used] of Object.entries(windows)) {
        if (windowEndMs(windowId) === null) throw new BudgetJournalError(`${file}: ${at} has a window "${windowId}" that is not a UTC day (YYYY-MM-DD) or month (YYYY-MM)`);
        if (typeof used !== 'number' || !Number.isSafeInteger(used) || used < 0 || used > BUDGET_COUNT_CEILING) {
          throw new BudgetJournalError(`${file}: ${at}.${windowId} must be an integer from 0 to ${BUDGET_COUNT_CEILING}`);
        }
        out.push({ keyId, kind: kind as BudgetKind, windowId, used });
      }
    }
  }
  return out;
}

/** The entries a limiter starting at `nowMs` takes back: windows not yet ended, with a count above 0. */
export function liveEntries(entries: readonly JournalEntry[], nowMs: number): JournalEntry[] {
  return entries.filter((e) => e.used > 0 && (windowEndMs(e.windowId) ?? 0) > nowMs);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
