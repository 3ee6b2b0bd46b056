// What `portcullis state migrate` moves between the file backend and Redis, as
// plain data: the key records and their last use, the admin tokens, the usage
// series and the budget counts of the current windows. The audit chain is
// streamed beside it (it may be long), and checked by its head. Pure: both sides
// read into this shape and write from it, and the copy is verified by reading
// the destination back and comparing.
import { windowEndMs } from '../limits/budget-journal.ts';
import { BUDGET_COUNT_CEILING } from '../limits/limiter.ts';
import { budgetWindowAt } from '../limits/budget-period.ts';
import type { BudgetPeriod } from '../limits/key-limits.ts';
import type { AdminTokenRecord } from '../keys/admin-token.ts';
import type { KeyRecord } from '../keys/store-format.ts';
import { pruneStoredUsage, type StoredKeyUsage } from '../usage/usage-series.ts';

/** One budget window's count: tokens (prompt + completion) or cost in nanos, as the limiter keeps it. */
export interface BudgetCount {
  keyId: string;
  kind: 'tokens' | 'cost';
  /** `2026-11-22` (day) or `2026-11` (month), UTC. */
  windowId: string;
  used: number;
}

export interface StateSnapshot {
  /** Creation order (createdAt, then id). */
  keys: KeyRecord[];
  lastUsed: Map<string, string>;
  /** Creation order (createdAt, then id). */
  tokens: AdminTokenRecord[];
  /** Key id -> totals and the buckets still within retention. */
  usage: Map<string, StoredKeyUsage>;
  /** Ordered by key id, kind, window. */
  budgets: BudgetCount[];
}

export function byCreation<T extends { createdAt: string; id: string }>(records: readonly T[]): T[] {
  return [...records].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export function sortBudgets(counts: readonly BudgetCount[]): BudgetCount[] {
  const key = (c: BudgetCount) => `${c.keyId}\u0000${c.kind}\u0000${c.windowId}`;
  return [...counts].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** Usage as a store keeps it at `nowMs`: buckets past retention dropped (the Redis store lets them expire). */
export function usageWithinRetention(usage: Map<string, StoredKeyUsage>, nowMs: number): Map<string, StoredKeyUsage> {
  const out = new Map<string, StoredKeyUsage>();
  for (const id of [...usage.keys()].sort()) {
    const stored = usage.get(id) as StoredKeyUsage;
    const copy: StoredKeyUsage = { totals: { ...stored.totals }, hours: new Map(stored.hours), days: new Map(stored.days) };
    pruneStoredUsage(copy, nowMs);
    out.set(id, copy);
  }
  return out;
}

/**
 * The budget counts of the current windows, from what the keys spent in them
 * (the day buckets of the usage). A budget set during the window counts the
 * whole window's spending. Used as a floor under budgets.json's counts, which may
 * lag behind usage (a restart after upgrading finds no budgets.json).
 */
export function budgetCountsFromUsage(keys: readonly KeyRecord[], usage: Map<string, StoredKeyUsage>, nowMs: number): BudgetCount[] {
  const counts: BudgetCount[] = [];
  const spent = (keyId: string, period: BudgetPeriod) => {
    const windowId = budgetWindowAt(nowMs, period).id;
    let tokens = 0;
    let costNanos = 0;
    for (const [dayId, u] of usage.get(keyId)?.days ?? []) {
      if (period === 'day' ? dayId !== windowId : !dayId.startsWith(`${windowId}-`)) continue;
      tokens += u.promptTokens + u.completionTokens;
      costNanos += u.costNanos;
    }
    return { windowId, tokens, costNanos };
  };
  for (const key of keys) {
    if (key.revokedAt !== null) continue;
    const { tokenBudget, costBudget } = key.limits;
    if (tokenBudget !== null) {
      const { windowId, tokens } = spent(key.id, tokenBudget.period);
      if (tokens > 0) counts.push({ keyId: key.id, kind: 'tokens', windowId, used: tokens });
    }
    if (costBudget !== null) {
      const { windowId, costNanos } = spent(key.id, costBudget.period);
      if (costNanos > 0) counts.push({ keyId: key.id, kind: 'cost', windowId, used: costNanos });
    }
  }
  return sortBudgets(counts);
}

/**
 * The counts a migration moves: those of windows not ended at `nowMs` (a gateway
 * takes back no others), above 0, and per key, budget and window the larger of
 * `counts` and `floor`, so a migration never gives a key budget back.
 */
export function currentBudgetCounts(counts: readonly BudgetCount[], floor: readonly BudgetCount[], nowMs: number): BudgetCount[] {
  const merged = new Map<string, BudgetCount>();
  for (const c of [...counts, ...floor]) {
    if (c.used <= 0 || (windowEndMs(c.windowId) ?? 0) <= nowMs) continue;
    const id = `${c.keyId}\u0000${c.kind}\u0000${c.windowId}`;
    const used = Math.min(BUDGET_COUNT_CEILING, Math.max(c.used, merged.get(id)?.used ?? 0));
    merged.set(id, { keyId: c.keyId, kind: c.kind, windowId: c.windowId, used });
  }
  return sortBudgets([...merged.values()]);
}

/** Plain JSON of the parts both sides store, for comparing a copy with its source. */
export function snapshotJson(snapshot: StateSnapshot, withBudgets: boolean): string {
  const maps = (m: Map<string, unknown>) => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify({
    keys: snapshot.keys,
    lastUsed: maps(snapshot.lastUsed),
    tokens: snapshot.tokens,
    usage: maps(snapshot.usage).map(([id, u]) => {
      const stored = u as StoredKeyUsage;
      return [id, stored.totals, maps(stored.hours), maps(stored.days)];
    }),
    budgets: withBudgets ? snapshot.budgets : [],
  });
}

/** The first part that differs, for the error of a failed verification; null when equal. */
export function firstDifference(source: StateSnapshot, copy: StateSnapshot): string | null {
  const parts: Array<[string, (s: StateSnapshot) => unknown]> = [
    ['keys', (s) => s.keys],
    ['last-used times', (s) => [...s.lastUsed].sort()],
    ['admin tokens', (s) => s.tokens],
    ['usage', (s) => snapshotJson({ ...s, keys: [], lastUsed: new Map(), tokens: [], budgets: [] }, false)],
    ['budget counts', (s) => s.budgets],
  ];
  for (const [name, part] of parts) {
    if (JSON.stringify(part(source)) !== JSON.stringify(part(copy))) return name;
  }
  return null;
}

export interface SnapshotCounts {
  keys: number;
  revokedKeys: number;
  lastUsed: number;
  tokens: number;
  usageKeys: number;
  hourBuckets: number;
  dayBuckets: number;
  budgets: number;
}

export function snapshotCounts(s: StateSnapshot): SnapshotCounts {
  let hourBuckets = 0;
  let dayBuckets = 0;
  for (const u of s.usage.values()) {
    hourBuckets += u.hours.size;
    dayBuckets += u.days.size;
  }
  return {
    keys: s.keys.length,
    revokedKeys: s.keys.filter((k) => k.revokedAt !== null).length,
    lastUsed: s.lastUsed.size,
    tokens: s.tokens.length,
    usageKeys: s.usage.size,
    hourBuckets,
    dayBuckets,
    budgets: s.budgets.length,
  };
}
