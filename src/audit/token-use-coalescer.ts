// token.use records of read-only requests, counted instead of appended one by
// one (docs/audit.md, "What each door records"). A dashboard or a monitoring
// script polling with a `read` token would otherwise write one fsync'd record
// per request, thousands a day, burying the records that matter.
//
// Uses are counted per token, client address, method, route pattern and
// minute (of the wall clock: 12:34:00.000 to 12:34:59.999). A minute's counts
// are appended when it ends, through the scheduler, so a test moves time on
// and sees the record at the exact deadline. Nothing is dropped: close() at
// shutdown appends what is pending (and records any later use at once, one
// record each), and a new entry beyond maxPending first appends everything
// pending, so memory stays bounded whatever the traffic.
import type { Scheduler, Timer } from '../time/scheduler.ts';
import type { AuditActor, AuditEvent, AuditTrail } from './audit-event.ts';

export const MINUTE_MS = 60_000;
/** Entries (token, address, route, minute) held at most before they are appended early. */
export const DEFAULT_MAX_PENDING_USES = 1000;

/** One read-only request made with an admin token. */
export interface TokenRead {
  actor: AuditActor;
  /** The client address. */
  source: string;
  /** The token's id. */
  target: string;
  method: string;
  /** The route pattern (`/api/keys/:id`), never the path with its ids. */
  route: string;
  status: number;
}

export interface TokenUseCoalescer {
  /** Counts one read; its record is appended when its minute ends (or earlier, see maxPending). */
  read(use: TokenRead): void;
  /** Appends every pending count now; resolves once they (and any flush before) are appended. */
  flush(): Promise<void>;
  /** flush(), and from now on each read is appended at once as its own record (count 1): for shutdown. */
  close(): Promise<void>;
  /** Entries waiting for their minute to end. */
  readonly pending: number;
}

export interface TokenUseCoalescerOptions {
  trail: AuditTrail;
  scheduler: Scheduler;
  /** Default DEFAULT_MAX_PENDING_USES. */
  maxPending?: number;
}

interface Pending {
  use: TokenRead;
  minute: number;
  count: number;
  firstMs: number;
  lastMs: number;
  statuses: Map<number, number>;
}

/** The token.use record of `count` reads of one route in one minute. */
function coalescedUseEvent(entry: Pending): AuditEvent {
  const { actor, source, target, method, route } = entry.use;
  const statuses: Record<string, number> = {};
  for (const [status, n] of [...entry.statuses].sort((a, b) => a[0] - b[0])) statuses[String(status)] = n;
  return {
    actor,
    source,
    action: 'token.use',
    target,
    before: null,
    after: null,
    detail: { method, route, count: entry.count, statuses, first: new Date(entry.firstMs).toISOString(), last: new Date(entry.lastMs).toISOString() },
  };
}

export function createTokenUseCoalescer(options: TokenUseCoalescerOptions): TokenUseCoalescer {
  const { trail, scheduler } = options;
  const maxPending = options.maxPending ?? DEFAULT_MAX_PENDING_USES;
  if (!Number.isInteger(maxPending) || maxPending < 1) throw new RangeError(`maxPending must be a positive integer, got ${maxPending}`);
  const pending = new Map<string, Pending>();
  let timer: Timer | undefined;
  let closed = false;
  /** Appends run one after another, in the order they were taken: the chain shows them in that order. */
  let appending: Promise<void> = Promise.resolve();

  /** Removes and returns the entries `which` selects, oldest first. */
  const take = (which: (entry: Pending) => boolean): Pending[] => {
    const taken: Pending[] = [];
    for (const [key, entry] of pending) {
      if (!which(entry)) continue;
      pending.delete(key);
      taken.push(entry);
    }
    return taken;
  };

  const append = (entries: readonly Pending[]): Promise<void> => {
    if (entries.length === 0) return appending;
    appending = appending.then(async () => {
      // record() never rejects (a failed append is logged with the whole event and counted).
      for (const entry of entries) await trail.record(coalescedUseEvent(entry));
    });
    return appending;
  };

  const minuteOf = (ms: number): number => Math.floor(ms / MINUTE_MS);

  /** One timer at a time, for the end of the current minute, while anything is pending. */
  const arm = (): void => {
    if (timer !== undefined || pending.size === 0) return;
    const now = scheduler.now();
    timer = scheduler.setTimeout(minuteEnded, (minuteOf(now) + 1) * MINUTE_MS - now);
    // Pending counts never keep a process alive: shutdown appends them (close()).
    timer.unref();
  };

  const minuteEnded = (): void => {
    timer = undefined;
    // Every minute but the current one is over (a wall clock set back makes the current one "over" too late, never lost).
    const current = minuteOf(scheduler.now());
    void append(take((entry) => entry.minute !== current));
    arm();
  };

  const flush = (): Promise<void> => {
    scheduler.clearTimer(timer);
    timer = undefined;
    return append(take(() => true));
  };

  return {
    read(use) {
      const now = scheduler.now();
      const minute = minuteOf(now);
      const one = (): Pending => ({ use, minute, count: 1, firstMs: now, lastMs: now, statuses: new Map([[use.status, 1]]) });
      if (closed) {
        void append([one()]);
        return;
      }
      const key = `${minute}\n${use.target}\n${use.source}\n${use.method}\n${use.route}`;
      const entry = pending.get(key);
      if (entry !== undefined) {
        entry.count++;
        entry.lastMs = Math.max(entry.lastMs, now);
        entry.statuses.set(use.status, (entry.statuses.get(use.status) ?? 0) + 1);
        return;
      }
      // Bounded memory: a flood of distinct tokens, addresses or routes appends early instead of growing.
      if (pending.size >= maxPending) void append(take(() => true));
      pending.set(key, one());
      arm();
    },
    flush,
    close() {
      closed = true;
      return flush();
    },
    get pending() {
      return pending.size;
    },
  };
}
