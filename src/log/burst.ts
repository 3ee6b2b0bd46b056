// A condition logged once per burst, not once per occurrence: the first
// occurrence starts a burst (one line), later ones are only counted, and the
// burst ends once `quietMs` pass without one (one line with the count). A
// flood of refused connections or failed accepts thus costs two log lines.
import { systemScheduler, type Scheduler, type Timer } from '../time/scheduler.ts';

export interface BurstSummary {
  /** Occurrences in the burst, the first included. */
  count: number;
  /** From the first occurrence to the last. */
  durationMs: number;
}

export interface Burst {
  /** One occurrence. */
  hit(): void;
  /** True from a burst's first occurrence until it is reported over. */
  readonly active: boolean;
  /** Reports a burst still on as over now (shutdown) and stops the timer. */
  close(): void;
}

interface BurstOptions {
  quietMs: number;
  onStart(): void;
  onEnd(summary: BurstSummary): void;
  /** The clock and timer of the quiet time (default: the system's). */
  scheduler?: Scheduler;
  /** The clock alone (default: the scheduler's monotonic one). */
  now?: () => number;
}

export function createBurst(options: BurstOptions): Burst {
  const scheduler = options.scheduler ?? systemScheduler;
  const now = options.now ?? (() => scheduler.monotonic());
  let count = 0;
  let firstAt = 0;
  let lastAt = 0;
  let timer: Timer | null = null;

  const end = (): void => {
    if (timer !== null) scheduler.clearTimer(timer);
    timer = null;
    const summary = { count, durationMs: Math.round(lastAt - firstAt) };
    count = 0;
    options.onEnd(summary);
  };
  const check = (): void => {
    const quietFor = now() - lastAt;
    if (quietFor >= options.quietMs) {
      end();
      return;
    }
    timer = scheduler.setTimeout(check, options.quietMs - quietFor);
    timer.unref();
  };

  return {
    hit() {
      lastAt = now();
      count++;
      if (count > 1) return;
      firstAt = lastAt;
      options.onStart();
      timer = scheduler.setTimeout(check, options.quietMs);
      timer.unref();
    },
    get active() {
      return count > 0;
    },
    close() {
      if (count > 0) end();
    },
  };
}
