// Where a gateway keeps what must outlive a request: API keys, rate-limit and
// budget state, and usage. One instance uses the in-process backend (files in
// the data directory, limits in memory); several instances behind a load
// balancer share one Redis (redis-backend.ts), so a key created, revoked or
// spent on one is seen by all. See docs/scaling.md.
import type { AuditLog } from '../audit/audit-log.ts';
import type { Limiter } from '../limits/limiter.ts';
import type { AdminTokenStore } from './admin-token-store-port.ts';
import type { KeyStore } from './key-store-port.ts';
import type { UsageStore } from './usage-store-port.ts';
import type { ResponseStore, ResponseStoreLimits } from './response-store-port.ts';
import type { Scheduler } from '../time/scheduler.ts';

export type { UsageStore } from './usage-store-port.ts';

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
  /** Admin API tokens: <dataDir>/admin-tokens.json, or shared in Redis. */
  readonly tokens: AdminTokenStore;
  /** The audit chain: audit.jsonl in the data directory, or one shared Redis list. docs/audit.md. */
  readonly audit: AuditLog;
  /**
   * The store of Responses answers, opened when responses.store is on: one file a
   * record under <dataDir>/responses/, or in the shared Redis. Rejects with a
   * FileError when the directory cannot be made or read.
   */
  openResponseStore(limits: ResponseStoreLimits, scheduler: Scheduler, onProblem: (message: string) => void): Promise<ResponseStore>;
  /** Whether the backing store answers now (memory: always ok). */
  health(): BackendHealth;
  /** Is the data directory / Redis writable? For /readyz; never throws. */
  checkWritable(): Promise<{ ok: true } | { ok: false; problem: string }>;
  close(): Promise<void>;
}
