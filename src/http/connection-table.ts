// Which connections a listener holds, as data: how many in all and per client
// address, and, in the order they became so, the ones that could be closed
// without losing a request (reclaimable: opened or kept alive, no request in
// flight). The socket side is ./connection-limit.ts.
//
// A new connection is admitted while fewer than `max` are open and its address
// has fewer than `perAddress`. With `max` open, the oldest reclaimable one
// gives up its place to it; with none reclaimable (every connection has a
// request in flight) it is refused. An address at its share is refused
// without touching anyone else's connection. Every operation is O(1): a Map
// from address to count and an intrusive doubly linked list of reclaimable
// connections, oldest at the head.

/** One connection as the table tracks it; `socket` is the caller's. */
export interface TrackedConnection<S> {
  readonly socket: S;
  /** Counted against its address's share; null: not counted (a trusted proxy's). */
  readonly address: string | null;
  /** Requests in flight (node can hold several pipelined ones). */
  requests: number;
  /** Ever had a request: a reclaimed one is an idle keep-alive, not a fresh connection. */
  served: boolean;
  /** Its place is given back (it closed, or was reclaimed and is closing). */
  released: boolean;
  /** In the reclaimable list. */
  linked: boolean;
  older: TrackedConnection<S> | null;
  newer: TrackedConnection<S> | null;
}

export const ConnectionAdmission = {
  Admitted: 'admitted',
  /** `max` are open, each with a request in flight. */
  Full: 'full',
  /** The address has `perAddress` open. */
  AddressFull: 'address_full',
} as const;
export type ConnectionAdmission = (typeof ConnectionAdmission)[keyof typeof ConnectionAdmission];

export type AdmitResult<S> =
  | { kind: typeof ConnectionAdmission.Admitted; connection: TrackedConnection<S>; reclaimed: TrackedConnection<S> | null }
  | { kind: typeof ConnectionAdmission.Full | typeof ConnectionAdmission.AddressFull };

export interface ConnectionTable<S> {
  /** Connections holding a place (reclaimed and closed ones not). */
  readonly open: number;
  /** Of those, the ones with no request in flight. */
  readonly reclaimable: number;
  /** Open connections of `address`. */
  openFrom(address: string): number;
  /** A new connection; with `reclaimed`, that one lost its place to it and is the caller's to close. */
  admit(socket: S, address: string | null): AdmitResult<S>;
  /** A request arrived on it. False: it was reclaimed already and must not be served. */
  requestStarted(connection: TrackedConnection<S>): boolean;
  /** A request's answer ended; with none left in flight it is reclaimable again, as the newest. */
  requestEnded(connection: TrackedConnection<S>): void;
  /** Its socket closed: the place is free (once; a reclaimed one was freed already). */
  closed(connection: TrackedConnection<S>): void;
  /** New limits (a reload); connections beyond them stay until they close. */
  setLimits(max: number, perAddress: number): void;
}

export function createConnectionTable<S>(limits: { max: number; perAddress: number }): ConnectionTable<S> {
  let { max, perAddress } = limits;
  let open = 0;
  let reclaimable = 0;
  const perAddressOpen = new Map<string, number>();
  let oldest: TrackedConnection<S> | null = null;
  let newest: TrackedConnection<S> | null = null;

  const link = (c: TrackedConnection<S>): void => {
    c.linked = true;
    c.older = newest;
    c.newer = null;
    if (newest === null) oldest = c;
    else newest.newer = c;
    newest = c;
    reclaimable++;
  };
  const unlink = (c: TrackedConnection<S>): void => {
    if (!c.linked) return;
    c.linked = false;
    if (c.older === null) oldest = c.newer;
    else c.older.newer = c.newer;
    if (c.newer === null) newest = c.older;
    else c.newer.older = c.older;
    c.older = null;
    c.newer = null;
    reclaimable--;
  };
  const release = (c: TrackedConnection<S>): void => {
    if (c.released) return;
    c.released = true;
    unlink(c);
    open--;
    if (c.address === null) return;
    const left = (perAddressOpen.get(c.address) ?? 1) - 1;
    if (left === 0) perAddressOpen.delete(c.address);
    else perAddressOpen.set(c.address, left);
  };

  return {
    get open() {
      return open;
    },
    get reclaimable() {
      return reclaimable;
    },
    openFrom(address) {
      return perAddressOpen.get(address) ?? 0;
    },
    admit(socket, address) {
      const fromAddress = address === null ? 0 : (perAddressOpen.get(address) ?? 0);
      if (fromAddress >= perAddress) return { kind: ConnectionAdmission.AddressFull };
      let reclaimed: TrackedConnection<S> | null = null;
      if (open >= max) {
        // After a lowered cap more than one may be over it; one new connection takes one place only.
        if (oldest === null) return { kind: ConnectionAdmission.Full };
        reclaimed = oldest;
        release(reclaimed);
      }
      const connection: TrackedConnection<S> = { socket, address, requests: 0, served: false, released: false, linked: false, older: null, newer: null };
      open++;
      if (address !== null) perAddressOpen.set(address, fromAddress + 1);
      link(connection);
      return { kind: ConnectionAdmission.Admitted, connection, reclaimed };
    },
    requestStarted(c) {
      if (c.released) return false;
      c.requests++;
      c.served = true;
      unlink(c);
      return true;
    },
    requestEnded(c) {
      if (c.requests === 0) return;
      c.requests--;
      if (c.requests === 0 && !c.released) link(c);
    },
    closed: release,
    setLimits(nextMax, nextPerAddress) {
      max = nextMax;
      perAddress = nextPerAddress;
    },
  };
}

/**
 * limits.maxConnectionsPerAddress left unset: min(floor(cap / 4),
 * max(8, floor(cap / 64))), at least 1. A client holding every connection
 * with a request in flight (slow bodies, long streams) cannot be reclaimed,
 * so the share bounds what a few addresses can take: at a large cap 64 of
 * them together fill it, at a small one 8 connections each (a browser opens
 * 6 to a host) but never more than a quarter of the cap.
 */
export function defaultPerAddress(maxConnections: number): number {
  return Math.max(1, Math.min(Math.floor(maxConnections / 4), Math.max(8, Math.floor(maxConnections / 64))));
}
