// Per-key usage accounting: requests, tokens and errors, per UTC hour. The
// pure core keeps counters until a flush; the stores (usage-file.ts, the
// Redis backend) add them to their totals, hourly and daily series.
import type { Usage } from '../chat/types.ts';

export interface KeyUsage {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  errors: number;
}

export const USAGE_FIELDS = ['requests', 'promptTokens', 'completionTokens', 'cachedTokens', 'errors'] as const;

export interface CompletionOutcome {
  /** The upstream's usage, when it gave any (streamed completions included). */
  usage?: Usage | undefined;
  /** The client got an error (status >= 400 or an error frame mid-stream). */
  error: boolean;
}

export const HOUR_MS = 3_600_000;

/** Pending counters: key id -> start of the UTC hour (ms) -> counters. */
export type PendingUsage = Map<string, Map<number, KeyUsage>>;

export function emptyUsage(): KeyUsage {
  return { requests: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0, errors: 0 };
}

export function addUsage(into: KeyUsage, from: KeyUsage): void {
  into.requests += from.requests;
  into.promptTokens += from.promptTokens;
  into.completionTokens += from.completionTokens;
  into.cachedTokens += from.cachedTokens;
  into.errors += from.errors;
}

function hourStart(ms: number): number {
  return ms - (((ms % HOUR_MS) + HOUR_MS) % HOUR_MS);
}

export interface UsageLedger {
  /** Counts one finished request of `keyId`, in the UTC hour of `atMs` (default now). */
  record(keyId: string, outcome: CompletionOutcome, atMs?: number): void;
  /** Counters gathered since the last `drain()`, removed from the ledger. */
  drain(): PendingUsage;
  /** Puts drained counters back (a flush that failed must not lose them). */
  restore(pending: PendingUsage): void;
  /** True when there is something to flush. */
  dirty(): boolean;
}

/** Sum of every hour of every key, per key. */
export function totalsOf(pending: PendingUsage): Map<string, KeyUsage> {
  const out = new Map<string, KeyUsage>();
  for (const [keyId, hours] of pending) {
    const t = emptyUsage();
    for (const u of hours.values()) addUsage(t, u);
    out.set(keyId, t);
  }
  return out;
}

export function createUsageLedger(clock: () => number = Date.now): UsageLedger {
  let pending: PendingUsage = new Map();
  const entry = (keyId: string, hour: number): KeyUsage => {
    let hours = pending.get(keyId);
    if (hours === undefined) {
      hours = new Map();
      pending.set(keyId, hours);
    }
    let u = hours.get(hour);
    if (u === undefined) {
      u = emptyUsage();
      hours.set(hour, u);
    }
    return u;
  };
  return {
    record(keyId, outcome, atMs = clock()) {
      const u = entry(keyId, hourStart(atMs));
      u.requests++;
      if (outcome.error) u.errors++;
      if (outcome.usage !== undefined) {
        u.promptTokens += outcome.usage.prompt_tokens;
        u.completionTokens += outcome.usage.completion_tokens;
        u.cachedTokens += outcome.usage.prompt_tokens_details.cached_tokens;
      }
    },
    drain() {
      const out = pending;
      pending = new Map();
      return out;
    },
    restore(back) {
      for (const [keyId, hours] of back) {
        for (const [hour, u] of hours) addUsage(entry(keyId, hour), u);
      }
    },
    dirty: () => pending.size > 0,
  };
}
