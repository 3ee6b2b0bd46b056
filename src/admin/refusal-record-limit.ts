// How often a refusal that anyone can provoke is written to the audit trail.
// A refused admin API token (token-auth.ts) and a refused single sign-on
// callback (sso-routes.ts) are each an audit record, but a client repeating
// the same refusal (a CI job retrying a revoked token, a script hitting
// /sso/callback) must not fill the hash-chained log with copies: per key
// (what was refused, why, from which address) at most one record per
// `intervalMs`, and across all keys at most `maxPerInterval` records per
// `intervalMs`. The refusals not recorded still answer the same and still
// appear in the log stream (the access log line, the warning line).
//
// Memory is bounded: at most `maxKeys` keys; making room drops keys whose
// interval is over, then the oldest.

const DEFAULT_INTERVAL_MS = 60_000;
const DEFAULT_MAX_PER_INTERVAL = 100;
const DEFAULT_MAX_KEYS = 10_000;
const MAX_KEY_LENGTH = 512;

export interface RefusalRecordLimitOptions {
  clock: () => number;
  intervalMs?: number;
  maxPerInterval?: number;
  maxKeys?: number;
}

export interface RefusalRecordLimit {
  /** True when the refusal named by `key` should be recorded now (and counts it); false: log only. */
  take(key: string): boolean;
}

export function createRefusalRecordLimit(options: RefusalRecordLimitOptions): RefusalRecordLimit {
  const { clock } = options;
  const intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
  const maxPerInterval = options.maxPerInterval ?? DEFAULT_MAX_PER_INTERVAL;
  const maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
  // Insertion order is the order of last record: the first entry is the stalest.
  const lastRecorded = new Map<string, number>();
  let windowStartMs = Number.NEGATIVE_INFINITY;
  let recordedInWindow = 0;

  const makeRoom = (nowMs: number): void => {
    if (lastRecorded.size < maxKeys) return;
    for (const [key, atMs] of lastRecorded) {
      if (nowMs - atMs < intervalMs) break;
      lastRecorded.delete(key);
    }
    while (lastRecorded.size >= maxKeys) {
      const stalest = lastRecorded.keys().next();
      if (stalest.done === true) break;
      lastRecorded.delete(stalest.value);
    }
  };

  return {
    take(rawKey) {
      const key = rawKey.slice(0, MAX_KEY_LENGTH);
      const nowMs = clock();
      const last = lastRecorded.get(key);
      if (last !== undefined && nowMs - last < intervalMs && nowMs >= last) return false;
      if (nowMs - windowStartMs >= intervalMs || nowMs < windowStartMs) {
        windowStartMs = nowMs;
        recordedInWindow = 0;
      }
      if (recordedInWindow >= maxPerInterval) return false;
      recordedInWindow++;
      lastRecorded.delete(key);
      makeRoom(nowMs);
      lastRecorded.set(key, nowMs);
      return true;
    },
  };
}
