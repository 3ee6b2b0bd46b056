// The usage store port: where the ledgers' drained counters are added up and read
// back as series and totals. Adapters: the data directory's usage file
// (file-usage-store.ts) and Redis (redis-usage-store.ts); both are held to
// src/testing/usage-store-contract.ts.
import type { KeyUsage, PendingUsage } from '../usage/usage-ledger.ts';
import type { Granularity, UsageSeries } from '../usage/usage-series.ts';

export interface UsageStore {
  /** Adds a ledger's drained counters; rejects (and keeps nothing) on failure so the caller can restore them. */
  add(pending: PendingUsage, nowMs: number): Promise<void>;
  /** One key's usage series ending at `nowMs`. */
  series(keyId: string, granularity: Granularity, nowMs: number): Promise<UsageSeries>;
  /** Every key's all-time totals. */
  totals(): Promise<Map<string, KeyUsage>>;
  /** Every key with stored usage, its usage over the period `series(id, granularity, nowMs)` covers (periodSum), by key id in order. */
  periodTotals(granularity: Granularity, nowMs: number): Promise<Map<string, KeyUsage>>;
}
