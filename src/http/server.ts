// The node:http shell: limits, request id, routing, the one error boundary,
// the access log and the shutdown drain. Handlers know nothing about sockets
// beyond `res`.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { ApiError, MethodNotAllowedError, RouteNotFoundError } from '../errors/api-error.ts';
import { renderError } from '../errors/render.ts';
import type { ServerLimits } from '../config/config.ts';
import type { ListenerTlsMaterial } from '../config/tls-files.ts';
import type { Logger } from '../log/logger.ts';
import { generateRequestId, REQUEST_ID_HEADER, requestIdFromHeader } from './request-id.ts';
import { ClientGoneAbort, ClientWriteStalledAbort, RequestContext, ShutdownAbort, ShuttingDownError, type ErrorShape, type RouteHandler } from './request-context.ts';
import { accessLogWriter, CLIENT_WRITE_STALLED, type AccessLine } from '../log/access-line.ts';
import type { Router } from './router.ts';
import { sendError } from './respond.ts';
import { clientCertificateOf, clientCertificateRefused } from './client-certificate.ts';
import { handshakeFailure, secureContextOptions, serverTlsOptions } from './tls-options.ts';
import { createWriteStallWatch } from './write-stall.ts';
import { answerPlainHttpOnTls } from './plain-http-on-tls.ts';
import { DEFAULT_MAX_CONNECTIONS, guardListener } from './connection-limit.ts';
import { defaultPerAddress } from './connection-table.ts';
import { answerClientError, httpParseError } from './client-errors.ts';
import { TimedResponse, responseClass } from './timed-response.ts';
import { answerError } from './error-boundary.ts';
import { clientAddress, NO_TRUSTED_PROXIES, type TrustedProxies } from './client-address.ts';
import { answerConnect } from './connect-method.ts';
import { systemScheduler, type Scheduler, type Timer } from '../time/scheduler.ts';

interface HttpServerOptions {
  router: Router<RouteHandler>;
  limits: ServerLimits;
  logger: Logger;
  /** Called with each access-log line's fields as it is logged (metrics). */
  onRequestDone?: (line: AccessLine) => void;
  /**
   * Serve HTTPS with this material (listen.tls or admin.tls, read by
   * loadListenerTls). With client certificates requested, each access-log
   * line has clientSubject and clientCertSha256 (null unless verified).
   */
  tls?: ListenerTlsMaterial;
  /**
   * Headers every answer of this listener carries (the admin listener's
   * security headers). They are set when node makes the response, so the
   * shell's own refusals, a handler's errors and the answers node writes
   * without a request event (400 for a missing Host, 417) all have them; the
   * raw answers to requests node cannot parse get them too. Handlers may
   * still override one.
   */
  responseHeaders?: Readonly<Record<string, string>>;
  /** Reverse proxies whose X-Forwarded-For names the client (listen.trustedProxies); default none. */
  trustedProxies?: TrustedProxies;
  /** The listener's name in log lines ("api", "admin"); default "api". */
  name?: string;
  /** Each connection refused beyond limits.maxConnections or limits.maxConnectionsPerAddress (metrics). */
  onConnectionRefused?: () => void;
  /** Each connection without a request in flight closed to make room for a new one (metrics). */
  onConnectionReclaimed?: () => void;
  /** A refusal burst ends (and its line is logged) after this long without one; default 5 s. */
  refusalQuietMs?: number;
  /** The shell's clocks and timers: write-stall sweep, drain, lingering closes, bursts, access-log times (default: the system's). */
  scheduler?: Scheduler;
  /**
   * The error shape of the paths whose door has its own (Anthropic's Messages
   * paths): chosen as the request arrives, so the shell's own refusals (a bad
   * request id, a wrong method, the drain's 503) answer in it too; null: OpenAI's.
   */
  errorShapeFor?: (path: string) => ErrorShape | null;
}

/** Counts reported when a drain ends. */
export interface DrainReport {
  /** Requests open when the drain began that finished on their own. */
  finished: number;
  /** Requests still open at the deadline, ended with an error frame or a 503. */
  endedWithError: number;
  /** Requests that arrived on an open connection during the drain, answered 503. */
  refused: number;
}

export interface HttpShell {
  readonly server: http.Server;
  /** Requests being handled now. */
  readonly inFlight: number;
  /** Client connections open now (those refused beyond limits.maxConnections not counted). */
  readonly openConnections: number;
  /** Applies the limits that can change on a running server (timeouts, maxConnections); see reload. */
  applyLimits(limits: ServerLimits): void;
  /**
   * A TLS listener: new connections get these certificates (and client CAs);
   * open connections keep the ones they began with. Whether client
   * certificates are requested stays as the server was made.
   */
  setTls(material: ListenerTlsMaterial): void;
  /**
   * Stops accepting connections and lets open requests finish. Idle keep-alive
   * connections close at once, busy ones after their answer (which says
   * `connection: close` when its headers are still to be written); a request
   * that still arrives on one is answered 503 server_shutting_down. At
   * `deadlineMs` every request still open is ended (RequestContext.onShutdown,
   * then a 503 if nothing was sent); the sockets get a bounded time to deliver
   * that, then every connection is closed. Later calls return the same promise.
   */
  drain(deadlineMs: number): Promise<DrainReport>;
  /** During a drain: end the open requests now rather than at the deadline. */
  endDrainNow(): void;
}

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

export function createHttpShell(options: HttpServerOptions): HttpShell {
  const { router, limits, logger, errorShapeFor } = options;
  const scheduler = options.scheduler ?? systemScheduler;
  const trusted = options.trustedProxies ?? NO_TRUSTED_PROXIES;
  const listenerHeaders = Object.entries(options.responseHeaders ?? {});
  for (const [name, value] of listenerHeaders) {
    // Checked once here: the raw answers below write them without node's checks.
    http.validateHeaderName(name);
    http.validateHeaderValue(name, value);
  }
  const rawListenerHeaders = listenerHeaders.map(([name, value]) => `${name}: ${value}\r\n`).join('');
  // Typed as a plain server for callers; every response it makes is a TimedResponse.
  const serverOptions = {
    ServerResponse: responseClass(listenerHeaders, scheduler),
    maxHeaderSize: limits.maxHeaderBytes,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // node checks the header and request timeouts on this interval (30 s by
    // default), so a slow client could otherwise hold a socket far longer.
    connectionsCheckingInterval: Math.min(1000, Math.ceil(limits.headersTimeoutMs / 2)),
    // node would answer a request without Host with a bare 400 that no handler
    // (and no access-log line) sees; handleRequest refuses it instead.
    requireHostHeader: false,
  };
  // An https.Server is an http.Server with TLS below it: the same events, limits and drain.
  const tls = options.tls;
  const server = (
    tls === undefined
      ? http.createServer<typeof IncomingMessage, typeof TimedResponse>(serverOptions)
      : https.createServer<typeof IncomingMessage, typeof TimedResponse>({
          ...serverOptions,
          ...serverTlsOptions(tls),
          // node's 120 s would let a client that never finishes its handshake hold a
          // connection (and a place under limits.maxConnections) that long; the
          // headers timeout starts only after the handshake.
          handshakeTimeout: limits.headersTimeoutMs,
        })
  ) as unknown as http.Server;
  // Before guardListener, which wraps the 'connection' listeners this puts in front of node's TLS layer.
  if (tls !== undefined) {
    answerPlainHttpOnTls(server, { logger, name: options.name ?? 'api', firstByteTimeoutMs: limits.headersTimeoutMs, scheduler, rawHeaders: rawListenerHeaders });
  }
  const clientAuth = tls?.requestCert === true;
  // Unset in a reloaded config, it keeps what the listener started with (serve derived it from the descriptor limit).
  const startMaxConnections = limits.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  const connections = guardListener(server, {
    name: options.name ?? 'api',
    maxConnections: startMaxConnections,
    perAddress: limits.maxConnectionsPerAddress,
    tls: tls !== undefined,
    trustedProxies: trusted,
    logger,
    scheduler,
    ...(options.onConnectionRefused === undefined ? {} : { onRefused: options.onConnectionRefused }),
    ...(options.onConnectionReclaimed === undefined ? {} : { onReclaimed: options.onConnectionReclaimed }),
    ...(options.refusalQuietMs === undefined ? {} : { refusalQuietMs: options.refusalQuietMs }),
  });
  if (tls !== undefined) {
    // Without a listener node drops these silently. Scanners and clients
    // with the wrong certificate make them: debug only, and the code only.
    server.on('tlsClientError', (err: NodeJS.ErrnoException, socket: TLSSocket) => logger.debug('TLS handshake failed', handshakeFailure(err, socket)));
  }

  const inFlight = new Set<RequestContext>();
  let state: DrainState = DrainState.Serving;
  let drained: Promise<DrainReport> | null = null;
  /** Wakes the drain before its deadline: the last request finished, or endDrainNow(). */
  let wakeDrain: () => void = () => {};
  let refused = 0;
  const stalls = createWriteStallWatch(limits.writeStallTimeoutMs, scheduler);

  /** Each connection's request being handled, so a request timeout can be answered through it. */
  const openOnSocket = new WeakMap<Socket, RequestContext>();

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    void handleRequest(req, res as TimedResponse, null);
  });
  answerConnect(server, serverOptions.ServerResponse, router, (req, res, refusal) => void handleRequest(req, res, refusal));
  // Without this listener node answers an Expect other than 100-continue with a bare 417 no handler sees.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    void handleRequest(req, res as TimedResponse, new ApiError('expectation_failed'));
  });

  /** `refusal`: an answer decided before routing (node's checks the shell took over). */
  async function handleRequest(req: IncomingMessage, res: TimedResponse, refusal: ApiError | null): Promise<void> {
    const socket = req.socket;
    if (!connections.requestStarted(socket)) {
      // The connection gave its place up while this request was arriving; its client was answered 503 then.
      socket.destroy();
      return;
    }
    const started = scheduler.monotonic();
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const ctx = new RequestContext(req, res, path, clientAddress(req, trusted));
    const shape = errorShapeFor?.(path) ?? null;
    if (shape !== null) ctx.renderError = shape.render;
    inFlight.add(ctx);
    stalls.watch(res, endStalled);
    openOnSocket.set(socket, ctx);
    res.context = ctx;
    res.openedAt = started;
    // One listener function for every response: it finds the request on the response.
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
      if (clientAuth) {
        const peer = clientCertificateOf(req.socket as TLSSocket);
        ctx.log['clientSubject'] = peer.kind === 'verified' ? peer.subject : null;
        ctx.log['clientCertSha256'] = peer.kind === 'verified' ? peer.sha256 : null;
        if (peer.kind === 'refused') {
          ctx.log['clientCertError'] = peer.reason;
          // Every request on this connection would be refused the same way: close it after the answer.
          ctx.bodyAbandoned = true;
          throw clientCertificateRefused(peer.reason);
        }
      }
      // Only a connection kept alive from before the drain can still bring a request.
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
      const route = router.match(method, path);
      if (route.kind === 'not_found') throw new RouteNotFoundError(method, path.length > 200 ? `${path.slice(0, 200)}...` : path);
      if (route.kind === 'method_not_allowed') throw new MethodNotAllowedError(method, path, route.allow);
      await route.handler(ctx);
    } catch (err) {
      answerError(ctx, err, logger, state !== DrainState.Serving, scheduler);
    }
  }

  /** A response's close, however it ended: the request's close hooks, then its access-log line. `this` is the response. */
  function onResponseClose(this: TimedResponse): void {
    const res = this;
    const ctx = res.context;
    if (ctx === null) return;
    res.context = null;
    const started = res.openedAt;
    const socket = ctx.req.socket;
    connections.requestEnded(socket);
    inFlight.delete(ctx);
    stalls.unwatch(res);
    if (openOnSocket.get(socket) === ctx) openOnSocket.delete(socket);
    if (!res.writableFinished) ctx.abort(new ClientGoneAbort());
    ctx.runCloseHooks((err) => {
      logger.error('a request close hook failed', { requestId: ctx.requestId, error: err instanceof Error ? err.name : typeof err });
    });
    if (ctx.reason instanceof ClientGoneAbort) ctx.log['clientGone'] = true;
    const path = ctx.path;
    logAccess({
      requestId: ctx.requestId,
      method: ctx.req.method ?? 'GET',
      path: path.length > 200 ? `${path.slice(0, 200)}...` : path,
      client: ctx.clientAddress,
      status: res.headersSent ? res.statusCode : null,
      ttfbMs: res.headersAt < 0 ? null : roundMs(res.headersAt - started),
      totalMs: roundMs(scheduler.monotonic() - started),
      completed: res.writableFinished,
      error: ctx.error,
      ...ctx.log,
    });
    if (state !== DrainState.Serving) {
      // The answer is out: its keep-alive connection is idle now and must go.
      setImmediate(() => server.closeIdleConnections());
      if (inFlight.size === 0) wakeDrain();
    }
  }

  /**
   * The client took no bytes for limits.writeStallTimeoutMs while the answer
   * waited for it: nothing more can reach it. The upstream work stops, the
   * socket goes, and the response's close (the access-log line, the permit)
   * follows as for a client that left.
   */
  function endStalled(res: ServerResponse): void {
    const ctx = (res as TimedResponse).context;
    if (ctx === null) return;
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

  function drain(deadlineMs: number): Promise<DrainReport> {
    if (drained !== null) return drained;
    state = DrainState.Draining;
    const atStart = new Set(inFlight);
    // Answers not yet begun tell their clients the connection ends with them.
    for (const ctx of atStart) if (!ctx.res.headersSent) ctx.res.shouldKeepAlive = false;
    const closed = new Promise<void>((resolve) => {
      // An error here only says the server was not listening; the connections are what matter.
      server.close(() => resolve());
    });
    server.closeIdleConnections();

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
      // the frames and 503s just written. Each connection closes once its answer is out (see 'close' above).
      let grace: Timer | undefined;
      await Promise.race([closed, new Promise<void>((resolve) => (grace = scheduler.setTimeout(resolve, SOCKET_CLOSE_GRACE_MS)))]);
      scheduler.clearTimer(grace);
      // What the grace did not deliver goes with the sockets: node would log those answers as completed.
      for (const ctx of inFlight) if (!ctx.res.writableFinished) ctx.log['completed'] = false;
      server.closeAllConnections();
      await closed;
      state = DrainState.Closed;
      return { finished: atStart.size - endedWithError, endedWithError, refused };
    })();
    return drained;
  }

  const logAccess = accessLogWriter(logger, options.onRequestDone);

  // Malformed HTTP, oversize headers, header and request timeouts: node's
  // parser finds these before any handler runs, or (a body too slow for
  // limits.requestTimeoutMs) while one waits for the body.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // Only the parser's refusals and its timeouts are answered. A client that
    // reset or ended its side mid-request has left (an open request logs
    // itself as clientGone); a failed TLS handshake, which https hands here
    // too, has no channel to answer on, and an HTTP answer written into it
    // would hold the socket open.
    const code = err.code ?? '';
    if (code === 'HPE_INVALID_EOF_STATE' || (!code.startsWith('HPE_') && code !== 'ERR_HTTP_REQUEST_TIMEOUT')) {
      socket.destroy();
      return;
    }
    answerClientError(socket, httpParseError(err.code, limits.maxHeaderBytes), openOnSocket.get(socket), logAccess, rawListenerHeaders, scheduler);
  });

  return {
    server,
    get inFlight() {
      return inFlight.size;
    },
    get openConnections() {
      return connections.open;
    },
    applyLimits(next) {
      const max = next.maxConnections ?? startMaxConnections;
      connections.setMax(max, next.maxConnectionsPerAddress ?? defaultPerAddress(max));
      // maxHeaderSize is fixed when the server is made; the gateway reports it as needing a restart.
      server.headersTimeout = next.headersTimeoutMs;
      server.requestTimeout = next.requestTimeoutMs;
      server.keepAliveTimeout = next.keepAliveTimeoutMs;
      stalls.setTimeout(next.writeStallTimeoutMs);
    },
    setTls(material) {
      if (!(server instanceof https.Server)) throw new Error('this listener was started without TLS; adding TLS needs a restart');
      server.setSecureContext(secureContextOptions(material));
    },
    drain,
    endDrainNow() {
      wakeDrain();
    },
  };
}

function roundMs(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
