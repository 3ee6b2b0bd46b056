// A circuit breaker per upstream target, so that a dead upstream stops costing
// every request a timeout or a refused connection. Pure state over an injected
// clock: no timers; the open -> half-open transition happens when someone looks.
//
//   closed --(failureThreshold consecutive counted failures)--> open
//   open --(openMs elapsed, next look)--> half_open
//   half_open --(the single probe succeeds)--> closed
//   half_open --(the probe fails)--> open (for another openMs)
//
// Only failures that say something about the upstream count (the dispatcher
// reports 'retry' and 'fallback' classes, never a client's 400 or a client that
// left). An attempt that ends without a verdict reports onRelease(), which
// frees the half-open probe slot for the next request.

import type { FailureCause } from './failure-cause.ts';

export const State = {
  Closed: 'closed',
  Open: 'open',
  HalfOpen: 'half_open',
} as const;
export type State = (typeof State)[keyof typeof State];

export interface CircuitBreakerOptions {
  /** Consecutive counted failures that open the breaker. Default 5. */
  failureThreshold?: number;
  /** How long it stays open before letting one probe through. Default 30000. */
  openMs?: number;
}

const DEFAULT_FAILURE_THRESHOLD = 5;
const DEFAULT_OPEN_MS = 30_000;

/** A counted failure, with when it happened (the breaker's clock). */
export interface RecordedFailure extends FailureCause {
  at: number;
}

/** What /readyz says about one breaker. Times are the breaker's clock (epoch
 * milliseconds with the default Date.now). */
export interface BreakerSnapshot {
  state: State;
  /** When it last opened; null while it never has. */
  openedAt: number | null;
  /** When an open breaker lets a probe through; null unless open. */
  probeAt: number | null;
  /** The last counted failure; null while there was none. */
  lastFailure: RecordedFailure | null;
}

export interface CircuitBreaker {
  /** True when an attempt may go out now. In half-open state it is true for
   * exactly one caller, whose attempt is the probe, until that attempt reports. */
  canAttempt(): boolean;
  /** The attempt succeeded: closes a half-open breaker, resets the count. */
  onSuccess(): void;
  /** The attempt failed in a way that counts against the upstream; `cause`
   * is kept as the last failure for /readyz. */
  onFailure(cause?: FailureCause): void;
  /** The attempt ended without a verdict (the client left, or the upstream
   * judged the client's request): a half-open probe slot is freed, nothing counted. */
  onRelease(): void;
  state(): State;
  /** Milliseconds until an open breaker lets a probe through; 0 otherwise. */
  msUntilProbe(): number;
  snapshot(): BreakerSnapshot;
}

/** `clock` returns milliseconds (Date.now or performance.now). */
export function createCircuitBreaker(options: CircuitBreakerOptions = {}, clock: () => number = Date.now): CircuitBreaker {
  const failureThreshold = positive(options.failureThreshold, DEFAULT_FAILURE_THRESHOLD, 'failureThreshold');
  const openMs = positive(options.openMs, DEFAULT_OPEN_MS, 'openMs');
  let state: State = State.Closed;
  let consecutiveFailures = 0;
  let openedAt = 0;
  let everOpened = false;
  let probeInFlight = false;
  let lastFailure: RecordedFailure | null = null;

  /** Applies the time-based transition; never takes the probe slot. */
  function current(): State {
    if (state === State.Open && clock() - openedAt >= openMs) {
      state = State.HalfOpen;
      probeInFlight = false;
    }
    return state;
  }

  /** `at`: the failure's own reading of the clock, so that /readyz shows the
   * failure that opened the breaker at the instant it opened. */
  function open(at: number): void {
    state = State.Open;
    openedAt = at;
    everOpened = true;
    probeInFlight = false;
  }

  return {
    canAttempt(): boolean {
      switch (current()) {
        case State.Closed:
          return true;
        case State.Open:
          return false;
        case State.HalfOpen:
          if (probeInFlight) return false;
          probeInFlight = true;
          return true;
      }
    },
    onSuccess(): void {
      switch (current()) {
        case State.Closed:
          consecutiveFailures = 0;
          return;
        case State.HalfOpen:
          state = State.Closed;
          consecutiveFailures = 0;
          probeInFlight = false;
          return;
        case State.Open:
          // A late answer to an attempt that started before the breaker
          // opened: it proves less than a probe, so the breaker stays open.
          return;
      }
    },
    onFailure(cause?: FailureCause): void {
      const at = clock();
      if (cause !== undefined) lastFailure = { ...cause, at };
      switch (current()) {
        case State.Closed:
          consecutiveFailures++;
          if (consecutiveFailures >= failureThreshold) open(at);
          return;
        case State.HalfOpen:
          // Any failure while half-open, the probe's or a late one, reopens.
          open(at);
          return;
        case State.Open:
          return;
      }
    },
    onRelease(): void {
      if (current() === State.HalfOpen) probeInFlight = false;
    },
    state: current,
    msUntilProbe(): number {
      return current() === State.Open ? Math.max(0, openedAt + openMs - clock()) : 0;
    },
    snapshot(): BreakerSnapshot {
      const now = current();
      return {
        state: now,
        openedAt: everOpened ? openedAt : null,
        probeAt: now === State.Open ? openedAt + openMs : null,
        lastFailure: lastFailure === null ? null : { ...lastFailure },
      };
    },
  };
}

export interface BreakerRegistry {
  /** The one breaker for `targetId` (e.g. 'local/llama-3.1-8b'): two aliases
   * that use the same provider and model share it, since they share its health. */
  get(targetId: string): CircuitBreaker;
}

export function createBreakerRegistry(options: CircuitBreakerOptions = {}, clock: () => number = Date.now): BreakerRegistry {
  const breakers = new Map<string, CircuitBreaker>();
  // Validated once, at creation, rather than on the first get().
  createCircuitBreaker(options, clock);
  return {
    get(targetId: string): CircuitBreaker {
      let breaker = breakers.get(targetId);
      if (breaker === undefined) {
        breaker = createCircuitBreaker(options, clock);
        breakers.set(targetId, breaker);
      }
      return breaker;
    },
  };
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive integer.`);
  return value;
}
