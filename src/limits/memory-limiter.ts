// The in-process limiter: the rules of key-admission.ts over a Map of key states.
// The default for a single instance. Budget counts outlive the process when a journal
// is given (the file backend's budgets.json, budget-journal.ts): the limiter starts
// from its counts, and an admission that charges a budget returns only once a write
// holding it is done, so a crash loses no admitted reservation (when that write fails,
// the admission is undone and rejected). Per-minute buckets
// start full on restart (a minute's window; docs/keys.md says so) and permits vanish
// with the process, so no concurrency slot is left held.
import { randomUUID } from 'node:crypto';
import { budgetWindowAt } from './budget-period.ts';
import { countedCharge, DEFAULT_MAX_CHARGE_MULTIPLE } from './charge-ceiling.ts';
import { correctBudgetCount, decideAdmission, settleTokens, type BudgetCountView } from './key-admission.ts';
import { hasAnyLimit, type BudgetPeriod, type KeyLimits } from './key-limits.ts';
import {
  DEFAULT_LEASE_MS,
  LimiterClosedError,
  assertLimiterInput,
  assertNow,
  type AdmitDecision,
  type AdmitInput,
  type BudgetUse,
  type Charge,
  type Limiter,
  type Permit,
  type SettleInput,
} from './limiter.ts';
import { isFull, refill, type BucketState } from './token-bucket.ts';
import { liveEntries, windowEndMs, type JournalEntry } from './budget-journal.ts';

/** Where budget counts are kept across restarts. */
export interface BudgetJournal {
  /** The counts written last (read at start). */
  readonly entries: readonly JournalEntry[];
  /**
   * Writes the counts `snapshot` returns when the write starts; resolves once a write
   * begun after the call is done (several callers share one write).
   */
  save(snapshot: () => JournalEntry[]): Promise<void>;
}

interface MemoryLimiterOptions {
  /** Permit lease in ms (default DEFAULT_LEASE_MS). */
  leaseMs?: number;
  /** Most keys with state (default 100000); see evictForNewKey. */
  maxKeys?: number;
  /** Budget counts that outlive the process; none: they start at 0. */
  journal?: BudgetJournal;
  /** Start time for the journal's counts (windows ended by then are dropped). Default Date.now(). */
  nowMs?: number;
  /** A settlement's journal write failed: its correction is kept in memory; only a restart would lose it. */
  onJournalError?: (error: Error) => void;
  /**
   * What an admission rejects with when the write holding its reservation failed
   * (default: the write's error). The admission is undone either way.
   */
  journalUnavailable?: (error: Error) => Error;
}

interface MemoryLimiter extends Limiter {
  /** Drops the state of every key that holds nothing a fresh key would not; returns how many. */
  sweep(nowMs: number): number;
  /** Keys with state (for tests and metrics). */
  keyCount(): number;
}

const DEFAULT_MAX_KEYS = 100_000;
/** Budget windows kept per key and budget: the current and the previous one (see limiter.ts, clock edges). */
const BUDGET_WINDOWS_KEPT = 2;
/** A sweep runs after this many admissions, or after as many as there are keys if more: amortized O(1). */
const SWEEP_EVERY_ADMISSIONS = 1024;
/**
 * A key's ended budget windows are kept this long before a sweep may drop them, so a
 * clock stepping back over midnight still finds the earlier day's count.
 */
const ENDED_BUDGET_KEPT_MS = 24 * 60 * 60_000;

interface BudgetCount {
  readonly id: string;
  readonly endMs: number;
  used: number;
}

interface KeyState {
  requests: BucketState | undefined;
  tokens: BucketState | undefined;
  /** Unsettled permits: id -> lease expiry (ms); expired when nowMs >= it. */
  readonly permits: Map<string, number>;
  /** Token budget counts, at most BUDGET_WINDOWS_KEPT, any order. */
  readonly budgets: BudgetCount[];
  /** Cost budget counts in nanos, likewise. */
  readonly costs: BudgetCount[];
}

export function createMemoryLimiter(options: MemoryLimiterOptions = {}): MemoryLimiter {
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
  if (!Number.isSafeInteger(leaseMs) || leaseMs < 1) throw new RangeError(`leaseMs must be a positive integer; got ${leaseMs}.`);
  if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) throw new RangeError(`maxKeys must be a positive integer; got ${maxKeys}.`);

  // Insertion order is recency order: a key is re-inserted when admitted, so the
  // first entry is the least recently admitted one.
  const keys = new Map<string, KeyState>();
  let admissionsSinceSweep = 0;
  let closed = false;
  const journal = options.journal;
  const onJournalError = options.onJournalError ?? ((error: Error) => process.emitWarning(error));
  if (journal !== undefined) seedFromJournal(keys, journal.entries, options.nowMs ?? Date.now());

  /** Every budget count held, for the journal. */
  function snapshot(): JournalEntry[] {
    const out: JournalEntry[] = [];
    for (const [keyId, state] of keys) {
      for (const c of state.budgets) out.push({ keyId, kind: 'tokens', windowId: c.id, used: c.used });
      for (const c of state.costs) out.push({ keyId, kind: 'cost', windowId: c.id, used: c.used });
    }
    return out;
  }

  async function persist(): Promise<void> {
    if (journal === undefined) return;
    await journal.save(snapshot).catch((error: unknown) => onJournalError(error as Error));
  }

  function dropExpiredPermits(state: KeyState, nowMs: number): void {
    for (const [id, expiresAtMs] of state.permits) if (nowMs >= expiresAtMs) state.permits.delete(id);
  }

  function isIdle(state: KeyState, nowMs: number): boolean {
    dropExpiredPermits(state, nowMs);
    if (state.permits.size > 0) return false;
    for (const bucket of [state.requests, state.tokens]) {
      if (bucket !== undefined && !isFull(refill(bucket, bucket.limit, nowMs))) return false;
    }
    return [...state.budgets, ...state.costs].every((count) => count.endMs + ENDED_BUDGET_KEPT_MS <= nowMs);
  }

  function sweep(nowMs: number): number {
    admissionsSinceSweep = 0;
    let dropped = 0;
    for (const [keyId, state] of keys) {
      if (isIdle(state, nowMs)) {
        keys.delete(keyId);
        dropped++;
      }
    }
    return dropped;
  }

  /**
   * Room for one more key: idle keys go first; if every key is busy, the least recently
   * admitted one is forgotten, which resets its limits (fail open for that key). Only
   * reachable with more active keys than maxKeys, which the operator sizes above the
   * number of keys in the store.
   */
  function evictForNewKey(nowMs: number): void {
    if (keys.size < maxKeys) return;
    sweep(nowMs);
    const oldest = keys.keys().next();
    if (keys.size >= maxKeys && oldest.done !== true) keys.delete(oldest.value);
  }


  function checkOpen(): void {
    if (closed) throw new LimiterClosedError();
  }

  return {
    leaseMs,

    async admit({ keyId, limits, reservation, nowMs }: AdmitInput): Promise<AdmitDecision> {
      checkOpen();
      assertLimiterInput(reservation, nowMs, 'reservation');
      if (!hasAnyLimit(limits)) {
        // Nothing to count: no state, and the permit is not held (its settle is a no-op).
        return { allowed: true, permit: newPermit(keyId, reservation, nowMs, null, null), snapshot: {} };
      }
      if (++admissionsSinceSweep >= Math.max(SWEEP_EVERY_ADMISSIONS, keys.size)) sweep(nowMs);

      const known = keys.get(keyId);
      if (known !== undefined) dropExpiredPermits(known, nowMs);
      const tokenBudget = budgetView(known?.budgets, limits.tokenBudget?.period ?? null, nowMs);
      const costBudget = budgetView(known?.costs, limits.costBudget?.period ?? null, nowMs);
      const admission = decideAdmission(
        { requests: known?.requests, tokens: known?.tokens, livePermits: known?.permits.size ?? 0, tokenBudget, costBudget },
        limits,
        reservation,
        nowMs,
      );
      if (!admission.allowed) return admission;

      let state = known;
      if (state === undefined) {
        evictForNewKey(nowMs);
        state = { requests: undefined, tokens: undefined, permits: new Map(), budgets: [], costs: [] };
      } else {
        keys.delete(keyId);
      }
      keys.set(keyId, state);
      // A limit set to null keeps its old bucket untouched: it is swept once full.
      if (admission.requests !== undefined) state.requests = admission.requests;
      if (admission.tokens !== undefined) state.tokens = admission.tokens;
      if (tokenBudget !== null) addToCount(state.budgets, tokenBudget, reservation.tokens);
      if (costBudget !== null) addToCount(state.costs, costBudget, reservation.costNanos);
      const permit = newPermit(keyId, reservation, nowMs, tokenBudget?.window.id ?? null, costBudget?.window.id ?? null);
      state.permits.set(permit.id, nowMs + leaseMs);
      if (journal !== undefined && (tokenBudget !== null || costBudget !== null)) {
        try {
          await journal.save(snapshot);
        } catch (error) {
          // Fail closed for budgets: a charge the journal does not hold would be
          // forgotten by a restart, handing the key its budget back.
          state.permits.delete(permit.id);
          correctCount(state.budgets, tokenBudget?.window.id ?? null, -reservation.tokens);
          correctCount(state.costs, costBudget?.window.id ?? null, -reservation.costNanos);
          throw options.journalUnavailable?.(error as Error) ?? error;
        }
      }
      return { allowed: true, permit, snapshot: admission.snapshot };
    },

    async settle({ permit, limits, charge: reported, nowMs, maxChargeMultiple = DEFAULT_MAX_CHARGE_MULTIPLE }: SettleInput): Promise<void> {
      checkOpen();
      assertLimiterInput(reported, nowMs, 'charge');
      const { reservation } = permit;
      const charge = countedCharge(reservation, reported, maxChargeMultiple);
      const state = keys.get(permit.keyId);
      const expiresAtMs = state?.permits.get(permit.id);
      if (state === undefined || expiresAtMs === undefined) return;
      state.permits.delete(permit.id);
      if (nowMs >= expiresAtMs) return;
      if (limits.tokensPerMinute !== null) {
        state.tokens = settleTokens(state.tokens, limits.tokensPerMinute, reservation.tokens, charge.tokens, nowMs);
      }
      correctCount(state.budgets, permit.budgetPeriod, charge.tokens - reservation.tokens);
      correctCount(state.costs, permit.costBudgetPeriod, charge.costNanos - reservation.costNanos);
      if (permit.budgetPeriod !== null || permit.costBudgetPeriod !== null) await persist();
    },

    async renew(permit: Permit, nowMs: number): Promise<boolean> {
      checkOpen();
      assertNow(nowMs);
      const state = keys.get(permit.keyId);
      const expiresAtMs = state?.permits.get(permit.id);
      if (state === undefined || expiresAtMs === undefined) return false;
      if (nowMs >= expiresAtMs) {
        state.permits.delete(permit.id);
        return false;
      }
      state.permits.set(permit.id, Math.max(expiresAtMs, nowMs + leaseMs));
      return true;
    },

    async budgetUsed(keyId: string, limits: KeyLimits, nowMs: number): Promise<BudgetUse> {
      checkOpen();
      assertNow(nowMs);
      const state = keys.get(keyId);
      return {
        tokens: budgetView(state?.budgets, limits.tokenBudget?.period ?? null, nowMs)?.used ?? 0,
        costNanos: budgetView(state?.costs, limits.costBudget?.period ?? null, nowMs)?.used ?? 0,
      };
    },

    async close(): Promise<void> {
      closed = true;
      keys.clear();
    },

    sweep(nowMs: number): number {
      checkOpen();
      return sweep(nowMs);
    },

    keyCount(): number {
      return keys.size;
    },
  };
}

function newPermit(keyId: string, reservation: Charge, admittedAtMs: number, budgetPeriod: string | null, costBudgetPeriod: string | null): Permit {
  return Object.freeze({
    keyId,
    id: randomUUID(),
    reservation: Object.freeze({ tokens: reservation.tokens, costNanos: reservation.costNanos }),
    admittedAtMs,
    budgetPeriod,
    costBudgetPeriod,
  });
}

/** The window of `period` at nowMs with its count in `counts`; null when the budget is not set. */
function budgetView(counts: readonly BudgetCount[] | undefined, period: BudgetPeriod | null, nowMs: number): BudgetCountView | null {
  if (period === null) return null;
  const window = budgetWindowAt(nowMs, period);
  return { window, used: counts?.find((count) => count.id === window.id)?.used ?? 0 };
}

/** Charges an admitted reservation to its window's count, creating the count if new. */
function addToCount(counts: BudgetCount[], view: BudgetCountView, reserved: number): void {
  const count = counts.find((c) => c.id === view.window.id);
  if (count !== undefined) count.used = correctBudgetCount(count.used, reserved);
  else addBudgetCount(counts, { id: view.window.id, endMs: view.window.endMs, used: correctBudgetCount(0, reserved) });
}

/** Settlement's correction of the count of the window charged at admission (gone if swept: nothing to correct). */
function correctCount(counts: BudgetCount[], windowId: string | null, delta: number): void {
  if (windowId === null) return;
  const count = counts.find((c) => c.id === windowId);
  if (count !== undefined) count.used = correctBudgetCount(count.used, delta);
}

/** Keeps the newest BUDGET_WINDOWS_KEPT windows (by end), so memory per key stays bounded. */
function addBudgetCount(counts: BudgetCount[], count: BudgetCount): void {
  counts.push(count);
  if (counts.length <= BUDGET_WINDOWS_KEPT) return;
  let oldest = 0;
  for (let i = 1; i < counts.length; i++) if ((counts[i] as BudgetCount).endMs < (counts[oldest] as BudgetCount).endMs) oldest = i;
  counts.splice(oldest, 1);
}

/** Takes back the journal's counts of windows that have not ended at nowMs. */
function seedFromJournal(keys: Map<string, KeyState>, entries: readonly JournalEntry[], nowMs: number): void {
  for (const e of liveEntries(entries, nowMs)) {
    let state = keys.get(e.keyId);
    if (state === undefined) {
      state = { requests: undefined, tokens: undefined, permits: new Map(), budgets: [], costs: [] };
      keys.set(e.keyId, state);
    }
    addBudgetCount(e.kind === 'tokens' ? state.budgets : state.costs, { id: e.windowId, endMs: windowEndMs(e.windowId) as number, used: e.used });
  }
}
