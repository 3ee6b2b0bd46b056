// How many key lookups in Redis one instance may start: a token bucket for the
// instance and a smaller one per client (an address group, src/http/address-group.ts).
// Every distinct unknown key costs Redis one script call (the unknown-key cache is
// per hash, and a well-formed key is easy to make: its checksum is public), so the
// rate, not only the number in flight, has to be bounded. The per-client bucket
// keeps one flooding client from spending the instance's budget alone; the instance
// bucket bounds what many clients together cost Redis.
//
// A lookup is only needed for a key created on another instance since this one's
// last mirror refresh (reloadIntervalMs, 1 s by default), so a legitimate client
// needs very few; one refused is answered 503 with Retry-After: 1, and its retry
// finds the key in the refreshed mirror.
//
// Levels are kept in thousandths of a lookup, refilled `perSecond` thousandths per
// millisecond: integer arithmetic, exact over any number of refills.
import type { Scheduler } from '../time/scheduler.ts';

/** Lookups per second one instance may start (and its burst). */
export const LOOKUPS_PER_SECOND = 50;
/** Lookups per second one client (address group) may start (and its burst). */
export const CLIENT_LOOKUPS_PER_SECOND = 5;
/** Clients whose buckets are remembered; the least recently seen is forgotten first (it comes back full). */
export const MAX_LOOKUP_CLIENTS = 10_000;

const SCALE = 1000;

interface Bucket {
  level: number;
  atMs: number;
}

export interface LookupBudgetOptions {
  /** Its monotonic clock times the refill. */
  scheduler: Pick<Scheduler, 'monotonic'>;
  perSecond?: number;
  clientPerSecond?: number;
  maxClients?: number;
}

/** Which bucket was empty, or null when the lookup may start. */
export type LookupRefusal = 'instance' | 'client' | null;

export interface LookupBudget {
  /** Takes one lookup from the client's and the instance's bucket when both hold one; takes nothing otherwise. */
  take(client: string): LookupRefusal;
}

export function createLookupBudget(options: LookupBudgetOptions): LookupBudget {
  const { scheduler } = options;
  const perSecond = options.perSecond ?? LOOKUPS_PER_SECOND;
  const clientPerSecond = options.clientPerSecond ?? CLIENT_LOOKUPS_PER_SECOND;
  const maxClients = options.maxClients ?? MAX_LOOKUP_CLIENTS;
  const instance: Bucket = { level: perSecond * SCALE, atMs: scheduler.monotonic() };
  /** Insertion order is recency. */
  const clients = new Map<string, Bucket>();

  function refill(bucket: Bucket, rate: number, nowMs: number): void {
    const elapsed = nowMs - bucket.atMs;
    if (elapsed <= 0) return;
    bucket.level = Math.min(rate * SCALE, bucket.level + elapsed * rate);
    bucket.atMs = nowMs;
  }

  return {
    take(client) {
      const nowMs = scheduler.monotonic();
      refill(instance, perSecond, nowMs);
      let own = clients.get(client);
      if (own === undefined) {
        own = { level: clientPerSecond * SCALE, atMs: nowMs };
        if (clients.size >= maxClients) clients.delete(clients.keys().next().value as string);
      } else {
        clients.delete(client);
        refill(own, clientPerSecond, nowMs);
      }
      clients.set(client, own);
      if (own.level < SCALE) return 'client';
      if (instance.level < SCALE) return 'instance';
      own.level -= SCALE;
      instance.level -= SCALE;
      return null;
    },
  };
}
