// Keeps the limiter's concurrency permits alive exactly as long as their
// requests: every permit held by a running request is renewed every
// leaseMs / 3, so a request longer than the lease (an alias may allow an hour)
// keeps its slot, and a permit whose instance died expires within one lease.
// One timer for every held permit, running only while there are any.
import type { Limiter, Permit } from '../limits/limiter.ts';
import type { Logger } from '../log/logger.ts';
import { systemScheduler, type Scheduler, type Timer } from '../time/scheduler.ts';

export interface PermitKeeper {
  /** Starts renewing `permit` until `release`. */
  hold(permit: Permit): void;
  /** Stops renewing (the request ended; its settle follows). */
  release(permit: Permit): void;
  /** Permits held now (for tests). */
  readonly size: number;
  /** Stops the timer; held permits are no longer renewed. */
  close(): void;
}

/** Renewals run every leaseMs / 3 on `scheduler`, with its now() as the limiter's time. */
export function createPermitKeeper(limiter: Limiter, logger: Logger, scheduler: Scheduler = systemScheduler): PermitKeeper {
  const held = new Set<Permit>();
  const everyMs = Math.max(1, Math.floor(limiter.leaseMs / 3));
  let timer: Timer | null = null;
  let renewing = false;

  async function renewAll(): Promise<void> {
    // A slow backend must not pile up rounds: one round at a time.
    if (renewing) return;
    renewing = true;
    try {
      const permits = [...held];
      const results = await Promise.allSettled(permits.map((p) => limiter.renew(p, scheduler.now())));
      let lost = 0;
      let failed = 0;
      results.forEach((r, i) => {
        const permit = permits[i] as Permit;
        if (r.status === 'rejected') failed++;
        else if (!r.value && held.has(permit)) {
          // The limiter no longer holds it (expired while the backend was away): stop trying.
          held.delete(permit);
          lost++;
        }
      });
      if (failed > 0) logger.warn('could not renew concurrency permits; they expire after the lease unless a later renewal succeeds', { permits: failed, leaseMs: limiter.leaseMs });
      if (lost > 0) logger.warn('concurrency permits expired before their requests ended; the key may briefly exceed its concurrency limit', { permits: lost });
    } finally {
      renewing = false;
      if (held.size === 0) stop();
    }
  }

  function stop(): void {
    if (timer !== null) scheduler.clearTimer(timer);
    timer = null;
  }

  return {
    hold(permit) {
      held.add(permit);
      if (timer === null) {
        timer = scheduler.setInterval(() => void renewAll(), everyMs);
        timer.unref();
      }
    },
    release(permit) {
      held.delete(permit);
      if (held.size === 0 && !renewing) stop();
    },
    get size() {
      return held.size;
    },
    close() {
      held.clear();
      stop();
    },
  };
}
