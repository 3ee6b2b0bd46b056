// Time as an input. The mechanisms that wait (the upstream exchange's clocks,
// the retry back-off, the circuit breakers, the write-stall sweep, the permit
// keeper, the limiters' windows) read the time and set their timers through a
// Scheduler, never through the globals, so that a test can hand them a
// manual one and move time on by exact amounts instead of sleeping.
//
// The system scheduler is the globals themselves: a Timer is Node's Timeout,
// so production pays one indirect call per timer and no extra object.
import type { AbortSource } from './abort-source.ts';

/** What a scheduler's timer offers: Node's Timeout is one. */
export interface Timer {
  /** Starts its delay again from now, whether or not it has fired. */
  refresh(): Timer;
  /** It no longer keeps the process alive on its own. */
  unref(): Timer;
}

export interface Scheduler {
  /** Milliseconds since the epoch: for expiry, windows and timestamps. */
  now(): number;
  /** Milliseconds on a clock that never steps back (its origin is arbitrary): for measuring intervals. */
  monotonic(): number;
  /** Runs `callback` once, `ms` from now. */
  setTimeout(callback: () => void, ms: number): Timer;
  /** Runs `callback` every `ms` from now until cleared. */
  setInterval(callback: () => void, ms: number): Timer;
  /** Stops a timeout or an interval; undefined or an ended timer is a no-op. */
  clearTimer(timer: Timer | undefined): void;
}

export const systemScheduler: Scheduler = {
  now: Date.now,
  monotonic: () => performance.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  setInterval: (callback, ms) => setInterval(callback, ms),
  clearTimer: (timer) => clearTimeout(timer as NodeJS.Timeout | undefined),
};

/**
 * Waits `ms` on `scheduler`; an abort of `signal` ends the wait early with
 * `onAbort(reason)`'s error. The timer and the listener never outlive it.
 */
export function sleepOn(scheduler: Scheduler, ms: number, signal: AbortSource, onAbort: (reason: unknown) => Error): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(onAbort(signal.reason));
      return;
    }
    const abort = (): void => {
      scheduler.clearTimer(timer);
      reject(onAbort(signal.reason));
    };
    const timer = scheduler.setTimeout(() => {
      signal.removeEventListener('abort', abort);
      resolve();
    }, ms);
    signal.addEventListener('abort', abort, { once: true });
  });
}
