// A Scheduler (src/time/scheduler.ts) whose time moves only when the test says:
// advance(ms) fires every timer that falls due, in deadline order, each at
// its exact deadline, and lets the event loop take a turn after each one so
// that what the timer started (an abort, a socket destroyed, a promise
// settled) has happened before the next fires. Deadlines are exact: a timer
// set for 2000 ms has not fired at 1999 and has at 2000.
import type { Scheduler, Timer } from '../../src/time/scheduler.ts';

/** setTimeout's bounds: Node fires a delay below 1, above 2^31 - 1 or NaN after 1 ms. */
const MAX_DELAY_MS = 2 ** 31 - 1;

class ManualTimer implements Timer {
  readonly #scheduler: ManualScheduler;
  readonly callback: () => void;
  readonly delayMs: number;
  readonly repeat: boolean;
  /** When it fires next; undefined once it has fired (a timeout) or was cleared. */
  dueAt: number | undefined;
  /** Order among timers due at the same moment: the one set first fires first, as Node's. */
  seq: number;

  constructor(scheduler: ManualScheduler, callback: () => void, delayMs: number, repeat: boolean, dueAt: number, seq: number) {
    this.#scheduler = scheduler;
    this.callback = callback;
    this.delayMs = delayMs;
    this.repeat = repeat;
    this.dueAt = dueAt;
    this.seq = seq;
  }

  refresh(): Timer {
    this.#scheduler.rearm(this);
    return this;
  }

  unref(): Timer {
    return this;
  }
}

export interface ManualSchedulerOptions {
  /** The epoch milliseconds now() starts at (default 2026-01-01T00:00:00Z). */
  startMs?: number;
}

export class ManualScheduler implements Scheduler {
  #nowMs: number;
  readonly #originMs: number;
  #seq = 0;
  readonly #timers = new Set<ManualTimer>();

  constructor(options: ManualSchedulerOptions = {}) {
    this.#nowMs = options.startMs ?? Date.UTC(2026, 0, 1);
    this.#originMs = this.#nowMs;
    // The gateway takes the clock off its scheduler (`const clock = scheduler.now`),
    // which works for the system scheduler's functions; these must work detached too.
    this.now = this.now.bind(this);
    this.monotonic = this.monotonic.bind(this);
  }

  now(): number {
    return this.#nowMs;
  }

  monotonic(): number {
    return this.#nowMs - this.#originMs;
  }

  /** Milliseconds moved on since the start. */
  get elapsedMs(): number {
    return this.#nowMs - this.#originMs;
  }

  setTimeout(callback: () => void, ms: number): Timer {
    return this.#add(callback, ms, false);
  }

  setInterval(callback: () => void, ms: number): Timer {
    return this.#add(callback, ms, true);
  }

  clearTimer(timer: Timer | undefined): void {
    if (!(timer instanceof ManualTimer)) return;
    timer.dueAt = undefined;
    this.#timers.delete(timer);
  }

  /** @internal ManualTimer.refresh: due one delay from now again, fired or not. */
  rearm(timer: ManualTimer): void {
    timer.dueAt = this.#nowMs + timer.delayMs;
    timer.seq = this.#seq++;
    this.#timers.add(timer);
  }

  /** The deadlines of the timers pending, as milliseconds from now, soonest first. */
  pending(): number[] {
    return [...this.#timers].map((t) => (t.dueAt as number) - this.#nowMs).sort((a, b) => a - b);
  }

  /**
   * Moves time on by `ms`, firing each timer due on the way at its deadline,
   * with a turn of the event loop after each; then one more turn at the end.
   */
  async advance(ms: number): Promise<void> {
    if (!(ms >= 0) || !Number.isFinite(ms)) throw new RangeError(`advance(${ms}): a finite, non-negative number of milliseconds`);
    const target = this.#nowMs + ms;
    for (let next = this.#due(target); next !== undefined; next = this.#due(target)) {
      this.#nowMs = next.dueAt as number;
      if (next.repeat) this.rearm(next);
      else this.clearTimer(next);
      next.callback();
      await turn();
    }
    this.#nowMs = target;
    await turn();
  }

  /** Moves time to the next timer's deadline and fires it (and any due with it); returns how far time moved, or undefined when none is pending. */
  async next(): Promise<number | undefined> {
    const first = this.#due(Number.POSITIVE_INFINITY);
    if (first === undefined) return undefined;
    const step = (first.dueAt as number) - this.#nowMs;
    await this.advance(step);
    return step;
  }

  #add(callback: () => void, ms: number, repeat: boolean): ManualTimer {
    const delayMs = ms >= 1 && ms <= MAX_DELAY_MS ? ms : 1;
    const timer = new ManualTimer(this, callback, delayMs, repeat, this.#nowMs + delayMs, this.#seq++);
    this.#timers.add(timer);
    return timer;
  }

  /** The timer that fires first at or before `limit`. */
  #due(limit: number): ManualTimer | undefined {
    let first: ManualTimer | undefined;
    for (const timer of this.#timers) {
      const at = timer.dueAt as number;
      if (at > limit) continue;
      if (first === undefined || at < (first.dueAt as number) || (at === first.dueAt && timer.seq < first.seq)) first = timer;
    }
    return first;
  }
}

/** One turn of the event loop: promise jobs, then I/O callbacks already waiting. */
function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
