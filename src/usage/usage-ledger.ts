// Per-key usage accounting: requests, tokens, errors, cost and the egress guard's
// findings by action, per UTC hour. The
// pure core keeps counters until a flush; the stores (usage-file.ts, the
// Redis backend) add them to their totals, hourly and daily series.
//
// Every counter is a non-negative safe integer; money is integer nanos (1e-9 of
// the configured currency), so sums stay exact.

export interface KeyUsage {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  errors: number;
  /** What the requests cost, in nanos of the configured currency. */
  costNanos: number;
  /** The egress guard's findings in the requests (and their answers) by action: refused, masked, recorded only. */
  guardBlocked: number;
  guardMasked: number;
  guardLogged: number;
}

export const USAGE_FIELDS = ['requests', 'promptTokens', 'completionTokens', 'cachedTokens', 'errors', 'costNanos', 'guardBlocked', 'guardMasked', 'guardLogged'] as const;

/**
 * Fields stored usage may lack, read as 0: usage files and Redis hashes written
 * before cost or the guard's findings were recorded.
 */
export const OPTIONAL_USAGE_FIELDS: ReadonlySet<keyof KeyUsage> = new Set(['costNanos', 'guardBlocked', 'guardMasked', 'guardLogged']);

/** One request's guard findings by action (the gateway's guard tally; counts, never the text found). */
export interface GuardCounts {
  blocked: number;
  masked: number;
  logged: number;
}

/** What one request is charged: the same numbers the limiter settles. */
export interface Charged {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  costNanos: number;
}

export interface CompletionOutcome {
  /** What this request is charged: the same numbers the limiter settles. null when nothing is charged. */
  charged: Charged | null;
  /** The client got an error (status >= 400 or an error frame mid-stream). */
  error: boolean;
  /** The guard's findings in the request and its answer; absent or null when the guard did not look. */
  guard?: GuardCounts | null | undefined;
}

export const HOUR_MS = 3_600_000;

/** Pending counters: key id -> start of the UTC hour (ms) -> counters. */
export type PendingUsage = Map<string, Map<number, KeyUsage>>;

export function emptyUsage(): KeyUsage {
  return { requests: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0, errors: 0, costNanos: 0, guardBlocked: 0, guardMasked: 0, guardLogged: 0 };
}

export function addUsage(into: KeyUsage, from: KeyUsage): void {
  into.requests += from.requests;
  into.promptTokens += from.promptTokens;
  into.completionTokens += from.completionTokens;
  into.cachedTokens += from.cachedTokens;
  into.errors += from.errors;
  into.costNanos += from.costNanos;
  into.guardBlocked += from.guardBlocked;
  into.guardMasked += from.guardMasked;
  into.guardLogged += from.guardLogged;
}

const CHARGED_FIELDS = ['promptTokens', 'completionTokens', 'cachedTokens', 'costNanos'] as const;

/**
 * Throws RangeError, before anything is counted, on a charge that is not non-negative
 * safe integers: one NaN or fraction summed into the stores would make usage.json
 * unreadable (its parser refuses it) and every later flush fail. The gateway records
 * only checked numbers, the same it settles with the limiter.
 */
export function assertCharged(charged: Charged): void {
  for (const field of CHARGED_FIELDS) {
    const n = charged[field];
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`charged.${field} must be a non-negative safe integer; got ${n}.`);
  }
}

const GUARD_FIELDS = ['blocked', 'masked', 'logged'] as const;

/** As assertCharged, for the guard's counts. */
export function assertGuardCounts(guard: GuardCounts): void {
  for (const field of GUARD_FIELDS) {
    const n = guard[field];
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`guard.${field} must be a non-negative safe integer; got ${n}.`);
  }
}

function hourStart(ms: number): number {
  return ms - (((ms % HOUR_MS) + HOUR_MS) % HOUR_MS);
}

export interface UsageLedger {
  /** Counts one finished request of `keyId`, in the UTC hour of `atMs` (default now). RangeError on a bad charge (assertCharged). */
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
      const { charged } = outcome;
      const guard = outcome.guard ?? null;
      if (charged !== null) assertCharged(charged);
      if (guard !== null) assertGuardCounts(guard);
      const u = entry(keyId, hourStart(atMs));
      u.requests++;
      if (outcome.error) u.errors++;
      if (charged !== null) {
        u.promptTokens += charged.promptTokens;
        u.completionTokens += charged.completionTokens;
        u.cachedTokens += charged.cachedTokens;
        u.costNanos += charged.costNanos;
      }
      if (guard !== null) {
        u.guardBlocked += guard.blocked;
        u.guardMasked += guard.masked;
        u.guardLogged += guard.logged;
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
