// The cap on one listener's open client connections (limits.maxConnections).
// node's own server.maxConnections closes a connection beyond it without a
// word: the client sees a reset or an empty reply and cannot tell a full
// gateway from a broken one. Here a connection beyond the cap is answered
// `503 too_many_connections` with `Retry-After: 1` and `connection: close` as
// soon as it opens (no request is read or parsed), and closed; the
// connections already open are served as before.
//
// What a flood can do: every refused connection is closed within
// REFUSAL_LINGER_MS, and node's server.maxConnections, set a margin above the
// cap, drops what comes beyond that margin before any code here runs. So a
// listener holds at most cap + margin descriptors, whatever the rate.
// A TLS listener cannot answer in HTTP before a handshake, which costs CPU and
// may stall; beyond its cap it closes the connection without an answer.
import type { Server } from 'node:net';
import type { Socket } from 'node:net';
import { ApiError } from '../errors/api-error.ts';
import { renderError } from '../errors/render.ts';
import { createBurst } from '../log/burst.ts';
import type { Logger } from '../log/logger.ts';
import { systemScheduler, type Scheduler } from '../time/scheduler.ts';

/** limits.maxConnections left unset where nothing derived it from the descriptor limit (serve does). */
export const DEFAULT_MAX_CONNECTIONS = 16_384;

/** How long a refused connection may stay open for the client to read the answer. */
export const REFUSAL_LINGER_MS = 1000;

export interface ConnectionLimit {
  /** Client connections open now, refused ones not included. */
  readonly open: number;
  /** A new cap (a reload); connections already open stay. */
  setMax(maxConnections: number): void;
}

interface ConnectionLimitOptions {
  maxConnections: number;
  /** A TLS listener: refuse by closing, without an answer. */
  tls: boolean;
  /** Each connection refused or dropped beyond the cap. */
  onRefused(): void;
  /** The timer of a refused connection's linger (default: the system's). */
  scheduler?: Scheduler;
}

/** The answer to a connection beyond the cap: always the same bytes. */
export const REFUSAL_RESPONSE: Buffer = refusalBytes();

function refusalBytes(): Buffer {
  const { status, body } = renderError(new ApiError('too_many_connections'));
  return Buffer.from(
    `HTTP/1.1 ${status} Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `retry-after: 1\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** Refused connections still closing that a listener holds before node drops the next ones outright. */
function refusalMargin(maxConnections: number): number {
  return Math.min(1024, Math.max(16, Math.ceil(maxConnections / 16)));
}

/**
 * Puts the cap in front of the server's own connection handling (the HTTP or
 * TLS server's 'connection' listeners, which see only the connections under
 * the cap). Call it once, right after the server is made.
 */
export function limitConnections(server: Server, options: ConnectionLimitOptions): ConnectionLimit {
  const serve = server.listeners('connection') as Array<(this: Server, socket: Socket) => void>;
  server.removeAllListeners('connection');
  const scheduler = options.scheduler ?? systemScheduler;
  let max = options.maxConnections;
  let open = 0;
  const setMax = (next: number): void => {
    max = next;
    server.maxConnections = next + refusalMargin(next);
  };
  setMax(max);

  server.on('connection', (socket: Socket) => {
    if (open >= max) {
      options.onRefused();
      refuse(socket, options.tls, scheduler);
      return;
    }
    open++;
    socket.once('close', () => open--);
    for (const listener of serve) listener.call(server, socket);
  });
  // Beyond the margin node closed the connection itself; still a refusal to count.
  server.on('drop', () => options.onRefused());

  return {
    get open() {
      return open;
    },
    setMax,
  };
}

function refuse(socket: Socket, tls: boolean, scheduler: Scheduler): void {
  // A client gone already is nothing to report.
  socket.on('error', () => {});
  if (tls) {
    socket.destroy();
    return;
  }
  const timer = scheduler.setTimeout(() => socket.destroy(), REFUSAL_LINGER_MS);
  timer.unref();
  socket.once('close', () => scheduler.clearTimer(timer));
  // A half close, then whatever the client sends is read and dropped: closing
  // with its request unread would make the kernel send a reset, and the
  // client could lose the answer before reading it.
  socket.once('end', () => socket.destroy());
  socket.end(REFUSAL_RESPONSE);
  socket.resume();
}

interface ListenerGuardOptions {
  /** The listener's name in log lines ("api", "admin"). */
  name: string;
  maxConnections: number;
  tls: boolean;
  logger: Logger;
  /** Each connection refused beyond the cap (metrics). */
  onRefused?: () => void;
  /** A burst of refusals is reported over after this long without one; default 5 s. */
  refusalQuietMs?: number;
  /** The clock and timers of the lingers and the bursts (default: the system's). */
  scheduler?: Scheduler;
}

/**
 * The connection cap with its log lines (once per burst of refusals, with the
 * count when it ends), and a listener for the server's errors once it listens:
 * failed accepts, which would otherwise crash the process, logged once per
 * burst. (Running out of descriptors libuv does not report as one: see
 * src/ops/descriptor-watch.ts.)
 */
export function guardListener(server: Server, options: ListenerGuardOptions): ConnectionLimit {
  const { logger, name: listener } = options;
  let maxConnections = options.maxConnections;
  const scheduler = options.scheduler ?? systemScheduler;
  const refusals = createBurst({
    quietMs: options.refusalQuietMs ?? 5000,
    scheduler,
    onStart: () => logger.warn('connection limit reached: new connections are refused with 503 too_many_connections', { listener, maxConnections }),
    onEnd: ({ count, durationMs }) => logger.info('connection limit: no more refusals', { listener, refused: count, durationMs }),
  });
  const limit = limitConnections(server, {
    maxConnections,
    tls: options.tls,
    scheduler,
    onRefused: () => {
      refusals.hit();
      options.onRefused?.();
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
    acceptFailures.close();
  });
  return {
    get open() {
      return limit.open;
    },
    setMax(next) {
      maxConnections = next;
      limit.setMax(next);
    },
  };
}
