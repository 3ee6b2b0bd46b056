// The operator's "upstream failed" warn line: which target, which address, and
// what went wrong on the wire (./failure-cause.ts). A dead upstream fails every
// request that reaches it, so the lines are rate-limited: at most one per
// target and cause (kind and detail) per interval; the failures left out are
// counted and the next line for the same target and cause carries the count
// (`suppressed`). No timer: a burst that is never followed by another failure
// of the same kind leaves its count unsaid, and /readyz and the metrics still
// show the open circuit.
import type { Logger } from '../log/logger.ts';
import type { FailureCause } from './failure-cause.ts';

/** One failed attempt, as the dispatcher reported it. */
export interface UpstreamFailure {
  requestId: string;
  /** `provider/model`. */
  targetId: string;
  attempt: number;
  /** What the dispatcher does next: `retry` or `fallback` (or `fatal`). */
  outcome: string;
  /** The catalogue code the client would see for this attempt. */
  code: string | undefined;
  cause: FailureCause;
}

export interface UpstreamFailureLog {
  note(failure: UpstreamFailure): void;
}

interface LogOptions {
  /** Default 10 s. */
  intervalMs?: number;
  /** Milliseconds; default Date.now. */
  clock?: () => number;
}

export const DEFAULT_FAILURE_LOG_INTERVAL_MS = 10_000;
/** Windows kept before the expired ones are dropped; targets times causes stays far below. */
const MAX_WINDOWS = 1024;

interface Window {
  loggedAt: number;
  suppressed: number;
}

export function createUpstreamFailureLog(logger: Logger, options: LogOptions = {}): UpstreamFailureLog {
  const intervalMs = options.intervalMs ?? DEFAULT_FAILURE_LOG_INTERVAL_MS;
  const clock = options.clock ?? Date.now;
  const windows = new Map<string, Window>();

  function forget(now: number): void {
    for (const [key, window] of windows) {
      if (now - window.loggedAt >= intervalMs && window.suppressed === 0) windows.delete(key);
    }
  }

  return {
    note(failure) {
      const { cause } = failure;
      const key = `${failure.targetId}\n${cause.kind}\n${cause.detail}`;
      const now = clock();
      const window = windows.get(key);
      if (window !== undefined && now - window.loggedAt < intervalMs) {
        window.suppressed++;
        return;
      }
      const suppressed = window?.suppressed ?? 0;
      if (window === undefined && windows.size >= MAX_WINDOWS) {
        forget(now);
        // Still full: the oldest window goes (a Map keeps insertion order), so
        // the table never passes MAX_WINDOWS; a count it held is not logged.
        if (windows.size >= MAX_WINDOWS) {
          const oldest = windows.keys().next();
          if (oldest.done !== true) windows.delete(oldest.value);
        }
      }
      // Re-inserted so the order stays oldest first.
      windows.delete(key);
      windows.set(key, { loggedAt: now, suppressed: 0 });
      logger.warn('upstream failed', {
        requestId: failure.requestId,
        target: failure.targetId,
        upstream: cause.address,
        cause: cause.kind,
        detail: cause.detail,
        code: failure.code ?? null,
        attempt: failure.attempt,
        outcome: failure.outcome,
        suppressed,
      });
    },
  };
}
