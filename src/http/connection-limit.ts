// The caps on one listener's open client connections: limits.maxConnections
// in all and limits.maxConnectionsPerAddress from one client address. The
// bookkeeping is ./connection-table.ts; this is its socket side.
//
// node's own server.maxConnections closes a connection beyond it without a
// word: the client sees a reset or an empty reply and cannot tell a full
// gateway from a broken one. Here a connection beyond a cap is answered
// `503 too_many_connections` with `Retry-After: 1` and `connection: close` as
// soon as it opens (no request is read or parsed), and closed.
//
// With the listener full, a connection that holds no request (never sent
// one, or kept alive after its answer) is closed to make room for the new
// one, the one that has waited longest first: silent sockets cannot lock out
// a client that has something to ask, and a connection with a request in
// flight is never touched. On the wire: a kept-alive connection is closed as
// keepAliveTimeout closes it (a FIN; its client opens a new one for the next
// request); a connection that never had a request gets the 503 first, like a
// refused one (its request, should it complete, is not served). A TLS
// connection is closed without an answer.
//
// Behind a reverse proxy (a peer in listen.trustedProxies) every client comes
// from the proxy's address, and no header is there yet at accept time: the
// proxy's connections count towards the cap, not towards any address's share.
// A client counts by its address group (./address-group.ts): an IPv6 client
// by its /56, the block one customer usually holds.
//
// What a flood can do: a refused or reclaimed connection is closed within
// REFUSAL_LINGER_MS; at most a margin of them linger at once (beyond it they
// are closed at once, without an answer), so a listener holds at most
// cap + margin descriptors, whatever the rate. node's server.maxConnections,
// set above that, is a backstop only.
import type { Server } from 'node:net';
import type { Socket } from 'node:net';
import { ApiError } from '../errors/api-error.ts';
import { renderError } from '../errors/render.ts';
import { createBurst } from '../log/burst.ts';
import type { Logger } from '../log/logger.ts';
import { systemScheduler, type Scheduler } from '../time/scheduler.ts';
import { addressGroup } from './address-group.ts';
import { NO_TRUSTED_PROXIES, UNKNOWN_ADDRESS, type TrustedProxies } from './client-address.ts';
import { ConnectionAdmission, createConnectionTable, defaultPerAddress, type TrackedConnection } from './connection-table.ts';

/** limits.maxConnections left unset where nothing derived it from the descriptor limit (serve does). */
export const DEFAULT_MAX_CONNECTIONS = 16_384;

/** How long a refused connection may stay open for the client to read the answer. */
export const REFUSAL_LINGER_MS = 1000;

export interface ConnectionLimit {
  /** Client connections holding a place now, refused and reclaimed ones not included. */
  readonly open: number;
  /** New caps (a reload); connections already open stay. */
  setMax(maxConnections: number, perAddress: number): void;
  /**
   * The shell's first step for each request on `socket`: false when the
   * connection lost its place already (reclaimed while its request was still
   * arriving), and the request must not be served.
   */
  requestStarted(socket: Socket): boolean;
  /** The request's response closed. */
  requestEnded(socket: Socket): void;
}

interface ConnectionLimitOptions {
  maxConnections: number;
  perAddress: number;
  /** A TLS listener: refuse by closing, without an answer. */
  tls: boolean;
  /** Peers whose connections are not counted per address. */
  trustedProxies?: TrustedProxies;
  /** Each connection refused or dropped beyond the cap (`perAddress`: beyond its address's share). */
  onRefused(perAddress: boolean): void;
  /** Each connection closed to make room. */
  onReclaimed?: () => void;
  /** The timer of a refused connection's linger (default: the system's). */
  scheduler?: Scheduler;
}

/** The answer to a connection beyond the cap: always the same bytes. */
export const REFUSAL_RESPONSE: Buffer = refusalBytes(new ApiError('too_many_connections'));

/** The answer to a connection beyond its address's share. */
export const ADDRESS_REFUSAL_RESPONSE: Buffer = refusalBytes(
  new ApiError('too_many_connections', 'This client address has as many connections open as the gateway allows one address; close one or retry shortly.'),
);

function refusalBytes(error: ApiError): Buffer {
  const { status, body } = renderError(error);
  return Buffer.from(
    `HTTP/1.1 ${status} Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `retry-after: 1\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** Refused connections still closing that a listener holds before it closes the next ones at once. */
export function refusalMargin(maxConnections: number): number {
  return Math.min(1024, Math.max(16, Math.ceil(maxConnections / 16)));
}

const TRACKED = Symbol('portcullis.connection');
type TrackedSocket = Socket & { [TRACKED]?: TrackedConnection<Socket>; _parent?: TrackedSocket };

/** The table's entry of a socket: the accepted one itself, or the TCP socket below a TLS one. */
function trackedOf(socket: Socket): TrackedConnection<Socket> | undefined {
  const s = socket as TrackedSocket;
  return s[TRACKED] ?? s._parent?.[TRACKED];
}

/**
 * What a connection from `peer` counts against: its address group (an IPv6
 * peer's /56), or nothing for a trusted proxy.
 */
export function shareKey(peer: string | undefined, trusted: TrustedProxies): string | null {
  if (peer === undefined) return UNKNOWN_ADDRESS;
  if (!trusted.empty && trusted.has(peer)) return null;
  return addressGroup(peer);
}

/**
 * Puts the caps in front of the server's own connection handling (the HTTP or
 * TLS server's 'connection' listeners, which see only the connections
 * admitted). Call it once, right after the server is made.
 */
export function limitConnections(server: Server, options: ConnectionLimitOptions): ConnectionLimit {
  const serve = server.listeners('connection') as Array<(this: Server, socket: Socket) => void>;
  server.removeAllListeners('connection');
  const scheduler = options.scheduler ?? systemScheduler;
  const trusted = options.trustedProxies ?? NO_TRUSTED_PROXIES;
  const table = createConnectionTable<Socket>({ max: options.maxConnections, perAddress: options.perAddress });
  let margin = 0;
  /** Refused and reclaimed connections in their linger. */
  let lingering = 0;
  const setMax = (max: number, perAddress: number): void => {
    table.setLimits(max, perAddress);
    margin = refusalMargin(max);
    server.maxConnections = max + 2 * margin;
  };
  setMax(options.maxConnections, options.perAddress);

  /** Answers `response` (plain) and closes; beyond the margin, or on TLS, closes at once. */
  const turnAway = (socket: Socket, response: Buffer): void => {
    // A client gone already is nothing to report.
    socket.on('error', () => {});
    if (options.tls || lingering >= margin) {
      socket.destroy();
      return;
    }
    lingering++;
    const timer = scheduler.setTimeout(() => socket.destroy(), REFUSAL_LINGER_MS);
    timer.unref();
    socket.once('close', () => {
      lingering--;
      scheduler.clearTimer(timer);
    });
    // A half close, then whatever the client sends is read and dropped: closing
    // with its request unread would make the kernel send a reset, and the
    // client could lose the answer before reading it.
    socket.once('end', () => socket.destroy());
    socket.end(response);
    socket.resume();
  };

  const reclaim = (victim: TrackedConnection<Socket>): void => {
    options.onReclaimed?.();
    if (victim.served || options.tls) victim.socket.destroy();
    else turnAway(victim.socket, REFUSAL_RESPONSE);
  };

  server.on('connection', (socket: Socket) => {
    const admitted = table.admit(socket, shareKey(socket.remoteAddress, trusted));
    if (admitted.kind !== ConnectionAdmission.Admitted) {
      const perAddress = admitted.kind === ConnectionAdmission.AddressFull;
      options.onRefused(perAddress);
      turnAway(socket, perAddress ? ADDRESS_REFUSAL_RESPONSE : REFUSAL_RESPONSE);
      return;
    }
    const { connection, reclaimed } = admitted;
    (socket as TrackedSocket)[TRACKED] = connection;
    socket.once('close', () => table.closed(connection));
    if (reclaimed !== null) reclaim(reclaimed);
    for (const listener of serve) listener.call(server, socket);
  });
  // Beyond the backstop node closed the connection itself; still a refusal to count.
  server.on('drop', () => options.onRefused(false));

  return {
    get open() {
      return table.open;
    },
    setMax,
    requestStarted(socket) {
      const connection = trackedOf(socket);
      return connection === undefined || table.requestStarted(connection);
    },
    requestEnded(socket) {
      const connection = trackedOf(socket);
      if (connection !== undefined) table.requestEnded(connection);
    },
  };
}

interface ListenerGuardOptions {
  /** The listener's name in log lines ("api", "admin"). */
  name: string;
  maxConnections: number;
  /** limits.maxConnectionsPerAddress; null: defaultPerAddress(maxConnections). */
  perAddress: number | null;
  tls: boolean;
  trustedProxies?: TrustedProxies;
  logger: Logger;
  /** Each connection refused beyond a cap (metrics). */
  onRefused?: () => void;
  /** Each connection closed to make room for a new one (metrics). */
  onReclaimed?: () => void;
  /** A burst of refusals is reported over after this long without one; default 5 s. */
  refusalQuietMs?: number;
  /** The clock and timers of the lingers and the bursts (default: the system's). */
  scheduler?: Scheduler;
}

/**
 * The connection caps with their log lines (once per burst of refusals or
 * reclaims, with the count when it ends), and a listener for the server's
 * errors once it listens: failed accepts, which would otherwise crash the
 * process, logged once per burst. (Running out of descriptors libuv does not
 * report as one: see src/ops/descriptor-watch.ts.)
 */
export function guardListener(server: Server, options: ListenerGuardOptions): ConnectionLimit {
  const { logger, name: listener } = options;
  let maxConnections = options.maxConnections;
  let perAddress = options.perAddress ?? defaultPerAddress(maxConnections);
  const scheduler = options.scheduler ?? systemScheduler;
  const quietMs = options.refusalQuietMs ?? 5000;
  const refusals = createBurst({
    quietMs,
    scheduler,
    onStart: () => logger.warn('connection limit reached: new connections are refused with 503 too_many_connections', { listener, maxConnections }),
    onEnd: ({ count, durationMs }) => logger.info('connection limit: no more refusals', { listener, refused: count, durationMs }),
  });
  const addressRefusals = createBurst({
    quietMs,
    scheduler,
    onStart: () =>
      logger.warn('connection limit per address reached: new connections from an address at its share are refused with 503 too_many_connections', {
        listener,
        maxConnectionsPerAddress: perAddress,
      }),
    onEnd: ({ count, durationMs }) => logger.info('connection limit per address: no more refusals', { listener, refused: count, durationMs }),
  });
  const reclaims = createBurst({
    quietMs,
    scheduler,
    onStart: () =>
      logger.warn('connection limit reached: connections without a request in flight are closed, oldest first, to make room', { listener, maxConnections }),
    onEnd: ({ count, durationMs }) => logger.info('connection limit: no more connections closed to make room', { listener, reclaimed: count, durationMs }),
  });
  const limit = limitConnections(server, {
    maxConnections,
    perAddress,
    tls: options.tls,
    scheduler,
    ...(options.trustedProxies === undefined ? {} : { trustedProxies: options.trustedProxies }),
    onRefused: (atShare) => {
      (atShare ? addressRefusals : refusals).hit();
      options.onRefused?.();
    },
    onReclaimed: () => {
      reclaims.hit();
      options.onReclaimed?.();
    },
  });
  let acceptError = '';
  const acceptFailures = createBurst({
    quietMs: 5000,
    scheduler,
    onStart: () => logger.error('accepting connections fails', { listener, code: acceptError }),
    onEnd: ({ count, durationMs }) => logger.info('accepting connections works again', { listener, failedAccepts: count, durationMs }),
  });
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (err.syscall === 'accept') {
      acceptError = err.code ?? 'unknown';
      acceptFailures.hit();
    } else if (server.listenerCount('error') === 1) {
      // Not during src/ops/listen.ts's listen(), which reports its own errors.
      logger.error('listener error', { listener, code: err.code ?? 'unknown', syscall: err.syscall ?? null });
    }
  });
  server.on('close', () => {
    refusals.close();
    addressRefusals.close();
    reclaims.close();
    acceptFailures.close();
  });
  return {
    get open() {
      return limit.open;
    },
    setMax(next, nextPerAddress) {
      maxConnections = next;
      perAddress = nextPerAddress;
      limit.setMax(next, nextPerAddress);
    },
    requestStarted: limit.requestStarted,
    requestEnded: limit.requestEnded,
  };
}
