// Where a gateway keeps what must outlive a request: API keys, rate-limit and
// budget state, and usage. One instance uses the in-process backend (files in
// the data directory, limits in memory); several instances behind a load
// balancer share one Redis (redis-backend.ts), so a key created, revoked or
// spent on one is seen by all. See docs/scaling.md.
import type { KeyStore } from '../keys/key-store.ts';
import type { Limiter } from '../limits/limiter.ts';
import type { KeyUsage, PendingUsage } from '../usage/usage-ledger.ts';
import type { Granularity, UsageSeries } from '../usage/usage-series.ts';

export interface UsageStore {
  /** Adds a ledger's drained counters; rejects (and keeps nothing) on failure so the caller can restore them. */
  add(pending: PendingUsage, nowMs: number): Promise<void>;
  /** One key's usage series ending at `nowMs`. */
  series(keyId: string, granularity: Granularity, nowMs: number): Promise<UsageSeries>;
  /** Every key's all-time totals. */
  totals(): Promise<Map<string, KeyUsage>>;
}

export const BackendHealth = {
  Ok: 'ok',
  /** The shared store cannot be reached and requests are refused (state.onUnavailable "refuse"). */
  Unavailable: 'unavailable',
  /** The shared store cannot be reached and limits are counted per instance ("local"): still serving. */
  Degraded: 'degraded',
} as const;
export type BackendHealth = (typeof BackendHealth)[keyof typeof BackendHealth];

export interface StateBackend {
  readonly kind: 'memory' | 'redis';
  readonly keys: KeyStore;
  readonly usage: UsageStore;
  readonly limiter: Limiter;
  /** Whether the backing store answers now (memory: always ok). */
  health(): BackendHealth;
  /** Is the data directory / Redis writable? For /readyz; never throws. */
  checkWritable(): Promise<{ ok: true } | { ok: false; problem: string }>;
  close(): Promise<void>;
}
