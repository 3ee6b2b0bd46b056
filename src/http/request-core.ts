// One request from its arrival to its access-log line: request id, routing,
// the header checks, the client's address and certificate, the one error
// boundary, the write-stall watch, the access log, and the drain that ends the
// requests still open at a shutdown's deadline. It works on the plain
// ServerResponse of any node:http or node:https server: the shell's own
// listener (./server.ts) and a host's server (the gateway's handle()) share
// it, and a drain covers the requests of both. What needs the server itself
// (connection caps, parser errors, timeouts, CONNECT, Expect) stays with the
// listener.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { ApiError, MethodNotAllowedError, RouteNotFoundError } from '../errors/api-error.ts';
import { renderError } from '../errors/render.ts';
import type { Logger } from '../log/logger.ts';
import { accessLogWriter, CLIENT_WRITE_STALLED, type AccessFields, type AccessLine } from '../log/access-line.ts';
import { systemScheduler, type Scheduler, type Timer } from '../time/scheduler.ts';
import { generateRequestId, REQUEST_ID_HEADER, requestIdFromHeader } from './request-id.ts';
import { ClientGoneAbort, ClientWriteStalledAbort, RequestContext, ShutdownAbort, ShuttingDownError, type ErrorShape, type RouteHandler } from './request-context.ts';
import type { Router } from './router.ts';
import { sendError } from './respond.ts';
import { clientCertificateOf, clientCertificateRefused } from './client-certificate.ts';
import { createWriteStallWatch } from './write-stall.ts';
import { answerError } from './error-boundary.ts';
import { clientAddress, NO_TRUSTED_PROXIES, type TrustedProxies } from './client-address.ts';
import { startTiming, timingOf } from './timed-response.ts';

export interface RequestCoreOptions {
  router: Router<RouteHandler>;
  logger: Logger;
  /** limits.writeStallTimeoutMs; setWriteStallTimeout changes it. */
  writeStallTimeoutMs: number;
  /** Called with each access-log line's fields as it is logged (metrics). */
  onRequestDone?: (line: AccessLine) => void;
  /** Reverse proxies whose X-Forwarded-For names the client; default none. */
  trustedProxies?: TrustedProxies;
  /** Clocks and timers: write-stall sweep, drain, lingering closes, access-log times (default: the system's). */
  scheduler?: Scheduler;
  /** The error shape of the paths whose door has its own (see HttpServerOptions.errorShapeFor). */
  errorShapeFor?: (path: string) => ErrorShape | null;
  /** The standalone listener's connection caps (./connection-limit.ts); a socket they do not track is always served. */
  slots?: RequestSlots;
}

/**
 * Whose server a request arrived on. The shell's own listener applies its
 * clientAuth: a client certificate that does not verify is refused (403). A
 * host's server owns its TLS policy: whatever it let through is served, and the
 * host's Authenticator sees whether the certificate verified.
 */
export type Arrival = 'listener' | 'host';

/** A connection cap's per-request side. */
export interface RequestSlots {
  /** False: the connection lost its place while its request arrived; the request is not served. */
  requestStarted(socket: Socket): boolean;
  requestEnded(socket: Socket): void;
}

/** Counts reported when a drain ends. */
export interface DrainReport {
  /** Requests open when the drain began that finished on their own. */
  finished: number;
  /** Requests still open at the deadline, ended with an error frame or a 503. */
  endedWithError: number;
  /** Requests that arrived during the drain, answered 503. */
  refused: number;
}

/** The server the drain closes: the standalone listener's own. A host's server is never one. */
export interface OwnServer {
  /** Stops accepting; resolves once every connection closed (server.close). */
  close(): Promise<void>;
  closeIdleConnections(): void;
  closeAllConnections(): void;
}

export interface RequestCore {
  /**
   * Handles one request on `res`, a response of any node:http(s) server.
   * `url`: the URL to route (the request's, or a host's with its base path
   * taken off); null: a URL outside what is served here (a host's path
   * outside the base path), answered 404 with the request's own path.
   * `refusal`: an answer decided before routing (node's checks the listener
   * took over: CONNECT, Expect). The access line and the error messages name
   * the path the client sent (req.originalUrl when a framework set it, else
   * req.url), whatever `url` is routed.
   */
  handle(req: IncomingMessage, res: ServerResponse, url: string | null, refusal: ApiError | null, arrival: Arrival): Promise<void>;
  /** Requests being handled now, through any server. */
  readonly inFlight: number;
  /** True once a drain began: every new request is answered 503. */
  readonly draining: boolean;
  /** The request being handled on `socket` now (a parser error answers through its response). */
  openOn(socket: Socket): RequestContext | undefined;
  /** Writes an access-log line (answers no request was made for: node's parser refusals). */
  logAccess(fields: AccessFields): void;
  setWriteStallTimeout(timeoutMs: number): void;
  /**
   * Refuses new requests (503) and lets open ones finish; at `deadlineMs`
   * ends those left (RequestContext.onShutdown, then a 503 if nothing was
   * sent), gives their sockets a bounded time to deliver that, then destroys
   * what is left: `own`'s connections, and on a host's server only the
   * connection of a response still open. `own` (the listener's server) is
   * closed at once; a host's server is never touched. Later calls return the
   * same promise.
   */
  drain(deadlineMs: number, own: OwnServer | null): Promise<DrainReport>;
  /** During a drain: end the open requests now rather than at the deadline. */
  endDrainNow(): void;
}

const OUTSIDE = { kind: 'not_found' } as const;

/** After the deadline's frames and 503s are written: how long the sockets get to deliver them. */
const SOCKET_CLOSE_GRACE_MS = 2000;

const DrainState = {
  Serving: 'serving',
  /** Not accepting; open requests run to completion. */
  Draining: 'draining',
  /** The deadline passed: open requests were ended; waiting for the sockets. */
  Ending: 'ending',
  Closed: 'closed',
} as const;
type DrainState = (typeof DrainState)[keyof typeof DrainState];

export function createRequestCore(options: RequestCoreOptions): RequestCore {
  const { router, logger, errorShapeFor, slots } = options;
  const scheduler = options.scheduler ?? systemScheduler;
  const monotonic = (): number => scheduler.monotonic();
  const trusted = options.trustedProxies ?? NO_TRUSTED_PROXIES;
  const logAccess = accessLogWriter(logger, options.onRequestDone);
  const stalls = createWriteStallWatch(options.writeStallTimeoutMs, scheduler);

  const inFlight = new Set<RequestContext>();
  /** Each open response's request, until the response closes. */
  const contexts = new WeakMap<ServerResponse, RequestContext>();
  /** Each connection's request being handled, so a parser error can be answered through it. */
  const openOnSocket = new WeakMap<Socket, RequestContext>();
  let state: DrainState = DrainState.Serving;
  let drained: Promise<DrainReport> | null = null;
  let ownServer: OwnServer | null = null;
  /** Wakes the drain before its deadline: the last request finished, or endDrainNow(). */
  let wakeDrain: () => void = () => {};
  let whenIdle: Array<() => void> = [];
  let refused = 0;

  async function handle(req: IncomingMessage, res: ServerResponse, routed: string | null, refusal: ApiError | null, arrival: Arrival): Promise<void> {
    const socket = req.socket;
    if (slots !== undefined && !slots.requestStarted(socket)) {
      // The connection gave its place up while this request was arriving; its client was answered 503 then.
      socket.destroy();
      return;
    }
    startTiming(res, monotonic);
    const sent = (req as IncomingMessage & { originalUrl?: unknown }).originalUrl;
    const clientPath = pathOf(typeof sent === 'string' ? sent : (req.url ?? '/'));
    const path = routed === null ? clientPath : pathOf(routed);
    const ctx = new RequestContext(req, res, path, clientAddress(req, trusted));
    ctx.clientPath = clientPath;
    const shape = errorShapeFor?.(path) ?? null;
    if (shape !== null) ctx.renderError = shape.render;
    inFlight.add(ctx);
    stalls.watch(res, endStalled);
    openOnSocket.set(socket, ctx);
    contexts.set(res, ctx);
    // One listener function for every response: it finds the request by the response.
    res.on('close', onResponseClose);

    try {
      try {
        ctx.requestId = requestIdFromHeader(req.headers[REQUEST_ID_HEADER]);
      } catch (err) {
        ctx.requestId = generateRequestId();
        throw err;
      } finally {
        res.setHeader(REQUEST_ID_HEADER, ctx.requestId);
        if (shape?.requestIdHeader !== undefined) res.setHeader(shape.requestIdHeader, ctx.requestId);
      }
      if (refusal !== null) {
        ctx.bodyAbandoned = true;
        throw refusal;
      }
      if (req.httpVersionMajor === 1 && req.httpVersionMinor === 1 && req.headers.host === undefined) {
        ctx.bodyAbandoned = true;
        throw new ApiError('http_malformed', 'The request has no Host header, which HTTP/1.1 requires.');
      }
      if (asksForClientCertificate(socket)) {
        const peer = clientCertificateOf(socket as TLSSocket);
        ctx.log['clientSubject'] = peer.kind === 'verified' ? peer.subject : null;
        ctx.log['clientCertSha256'] = peer.kind === 'verified' ? peer.sha256 : null;
        if (peer.kind === 'unverified') {
          ctx.log['clientCertError'] = peer.reason;
          if (arrival === 'listener') {
            // Every request on this connection would be refused the same way: close it after the answer.
            ctx.bodyAbandoned = true;
            throw clientCertificateRefused(peer.reason);
          }
        }
      }
      if (state !== DrainState.Serving) {
        refused++;
        throw new ShuttingDownError();
      }
      // node hands an Upgrade it has no 'upgrade' listener for to the request handler. A WebSocket
      // one is refused at once, before routing (any other, such as h2c, is ignored: the answer is HTTP/1.1).
      if (req.headers.upgrade !== undefined && /websocket/i.test(req.headers.upgrade)) {
        ctx.bodyAbandoned = true;
        throw new ApiError('upgrade_not_supported', undefined, { headers: { upgrade: 'HTTP/1.1' } });
      }
      const method = req.method ?? 'GET';
      const route = routed === null ? OUTSIDE : router.match(method, path);
      if (route.kind === 'not_found') throw new RouteNotFoundError(method, shortPath(clientPath));
      if (route.kind === 'method_not_allowed') throw new MethodNotAllowedError(method, shortPath(clientPath), route.allow);
      await route.handler(ctx);
    } catch (err) {
      answerError(ctx, err, logger, state !== DrainState.Serving, scheduler);
    }
  }

  /** A response's close, however it ended: the request's close hooks, then its access-log line. `this` is the response. */
  function onResponseClose(this: ServerResponse): void {
    const res = this;
    const ctx = contexts.get(res);
    if (ctx === undefined) return;
    contexts.delete(res);
    const socket = ctx.req.socket;
    slots?.requestEnded(socket);
    inFlight.delete(ctx);
    stalls.unwatch(res);
    if (openOnSocket.get(socket) === ctx) openOnSocket.delete(socket);
    if (!res.writableFinished) ctx.abort(new ClientGoneAbort());
    ctx.runCloseHooks((err) => {
      logger.error('a request close hook failed', { requestId: ctx.requestId, error: err instanceof Error ? err.name : typeof err });
    });
    if (ctx.reason instanceof ClientGoneAbort) ctx.log['clientGone'] = true;
    const timing = timingOf(res);
    const started = timing?.openedAt ?? -1;
    const headersAt = timing?.headersAt ?? -1;
    logAccess({
      requestId: ctx.requestId,
      method: ctx.req.method ?? 'GET',
      path: shortPath(ctx.clientPath),
      client: ctx.clientAddress,
      status: res.headersSent ? res.statusCode : null,
      ttfbMs: headersAt < 0 ? null : roundMs(headersAt - started),
      totalMs: roundMs(monotonic() - started),
      completed: res.writableFinished,
      error: ctx.error,
      ...ctx.log,
    });
    if (state !== DrainState.Serving) {
      const own = ownServer;
      // The answer is out: its keep-alive connection is idle now and must go.
      if (own !== null) setImmediate(() => own.closeIdleConnections());
      if (inFlight.size === 0) {
        wakeDrain();
        const waiting = whenIdle;
        whenIdle = [];
        for (const resolve of waiting) resolve();
      }
    }
  }

  /**
   * The client took no bytes for limits.writeStallTimeoutMs while the answer
   * waited for it: nothing more can reach it. The upstream work stops, the
   * socket goes, and the response's close (the access-log line, the permit)
   * follows as for a client that left.
   */
  function endStalled(res: ServerResponse): void {
    const ctx = contexts.get(res);
    if (ctx === undefined) return;
    ctx.log['outcome'] = CLIENT_WRITE_STALLED;
    // The socket's buffer is dropped with it, so the response may look finished to node: it was not.
    ctx.log['completed'] = false;
    ctx.abort(new ClientWriteStalledAbort());
    res.destroy();
  }

  /** The deadline passed with `ctx` open: end it with an error the client can see. */
  function endForShutdown(ctx: RequestContext): boolean {
    const { res } = ctx;
    if (res.writableEnded || res.destroyed) return false;
    ctx.error = 'server_shutting_down';
    try {
      ctx.onShutdown?.();
    } catch (err) {
      logger.error('ending a request for shutdown failed', { requestId: ctx.requestId, error: err instanceof Error ? err.name : typeof err });
    }
    // Stops the upstream work now rather than when the upstream notices (it might not, or only late).
    ctx.abort(new ShutdownAbort());
    if (!res.headersSent) {
      const shuttingDown = new ShuttingDownError();
      sendError(res, ctx.renderError === null ? renderError(shuttingDown) : ctx.renderError(shuttingDown, ctx.requestId), true, scheduler);
    } else if (!res.writableEnded) {
      // Headers are out and no handler ended it: the answer cannot be completed
      // or repaired, only cut (the client sees a truncated response, never a clean one).
      res.destroy();
    }
    return true;
  }

  function idle(): Promise<void> {
    if (inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => whenIdle.push(resolve));
  }

  function drain(deadlineMs: number, own: OwnServer | null): Promise<DrainReport> {
    if (drained !== null) return drained;
    state = DrainState.Draining;
    ownServer = own;
    const atStart = new Set(inFlight);
    // Answers not yet begun tell their clients the connection ends with them.
    for (const ctx of atStart) if (!ctx.res.headersSent) ctx.res.shouldKeepAlive = false;
    const closed = own === null ? Promise.resolve() : own.close();
    own?.closeIdleConnections();

    drained = (async (): Promise<DrainReport> => {
      if (inFlight.size > 0) {
        await new Promise<void>((resolve) => {
          const timer = Number.isFinite(deadlineMs) ? scheduler.setTimeout(resolve, deadlineMs) : undefined;
          wakeDrain = () => {
            scheduler.clearTimer(timer);
            resolve();
          };
        });
      }
      wakeDrain = () => {};
      state = DrainState.Ending;
      let endedWithError = 0;
      for (const ctx of [...inFlight]) {
        if (endForShutdown(ctx) && atStart.has(ctx)) endedWithError++;
      }
      // No closeIdleConnections() here: node counts an ended answer as idle, delivered or not, and would cut
      // the frames and 503s just written. Each connection closes once its answer is out (onResponseClose).
      let grace: Timer | undefined;
      await Promise.race([Promise.all([closed, idle()]), new Promise<void>((resolve) => (grace = scheduler.setTimeout(resolve, SOCKET_CLOSE_GRACE_MS)))]);
      scheduler.clearTimer(grace);
      // What the grace did not deliver goes with the sockets: node would log those answers as completed.
      for (const ctx of inFlight) if (!ctx.res.writableFinished) ctx.log['completed'] = false;
      own?.closeAllConnections();
      // On a host's server only the connections of the gateway's own answers still open go.
      for (const ctx of inFlight) ctx.res.destroy();
      await Promise.all([closed, idle()]);
      state = DrainState.Closed;
      return { finished: atStart.size - endedWithError, endedWithError, refused };
    })();
    return drained;
  }

  return {
    handle,
    get inFlight() {
      return inFlight.size;
    },
    get draining() {
      return state !== DrainState.Serving;
    },
    openOn: (socket) => openOnSocket.get(socket),
    logAccess,
    setWriteStallTimeout: (timeoutMs) => stalls.setTimeout(timeoutMs),
    drain,
    endDrainNow() {
      wakeDrain();
    },
  };
}

/**
 * Whether `socket` is a TLS connection whose server asks clients for a
 * certificate (the listener's clientAuth, or a host's https server made with
 * requestCert): its requests' access lines then say who the client is, and
 * the listener refuses one that did not verify.
 */
function asksForClientCertificate(socket: Socket): boolean {
  const tls = socket as Partial<TLSSocket> & { server?: { requestCert?: unknown } };
  return tls.encrypted === true && tls.server?.requestCert === true;
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

function shortPath(path: string): string {
  return path.length > 200 ? `${path.slice(0, 200)}...` : path;
}

function roundMs(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
