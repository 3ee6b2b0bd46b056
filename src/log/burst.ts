// A condition logged once per burst, not once per occurrence: the first
// occurrence starts a burst (one line), later ones are only counted, and the
// burst ends once `quietMs` pass without one (one line with the count). A
// flood of refused connections or failed accepts thus costs two log lines.

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
  now?: () => number;
}

export function createBurst(options: BurstOptions): Burst {
  const now = options.now ?? (() => performance.now());
  let count = 0;
  let firstAt = 0;
  let lastAt = 0;
  let timer: NodeJS.Timeout | null = null;

  const end = (): void => {
    if (timer !== null) clearTimeout(timer);
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
    timer = setTimeout(check, options.quietMs - quietFor);
    timer.unref();
  };

  return {
    hit() {
      lastAt = now();
      count++;
      if (count > 1) return;
      firstAt = lastAt;
      options.onStart();
      timer = setTimeout(check, options.quietMs);
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
