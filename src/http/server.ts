// The node:http listener: the server and what needs it (connection caps,
// parser errors and timeouts, TLS, CONNECT, Expect, closing at a drain).
// Each request goes to the request core (./request-core.ts), which also
// serves the requests a host's server hands over. Handlers know nothing about
// sockets beyond `res`.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { ApiError } from '../errors/api-error.ts';
import type { ServerLimits } from '../config/config.ts';
import type { ListenerTlsMaterial } from '../config/tls-files.ts';
import type { Logger } from '../log/logger.ts';
import type { ErrorShape, RouteHandler } from './request-context.ts';
import type { AccessLine } from '../log/access-line.ts';
import { createRequestCore, type DrainReport, type OwnServer } from './request-core.ts';
import type { Router } from './router.ts';
import { handshakeFailure, secureContextOptions, serverTlsOptions } from './tls-options.ts';
import { answerPlainHttpOnTls } from './plain-http-on-tls.ts';
import { DEFAULT_MAX_CONNECTIONS, guardListener } from './connection-limit.ts';
import { defaultPerAddress } from './connection-table.ts';
import { answerClientError, httpParseError } from './client-errors.ts';
import { responseClass } from './listener-response.ts';
import { NO_TRUSTED_PROXIES, type TrustedProxies } from './client-address.ts';
import { answerConnect } from './connect-method.ts';
import { systemScheduler, type Scheduler } from '../time/scheduler.ts';

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

export type { DrainReport } from './request-core.ts';

export interface HttpShell {
  readonly server: http.Server;
  /**
   * Handles a request another node:http(s) server received (a host's), with
   * the same request path as the listener's own requests: `url` is the URL to
   * route; null answers 404 (a path outside what the host mounted here). A
   * drain covers these requests too (see drain). The host's server keeps its
   * own TLS policy: a client certificate it accepted unverified is served
   * (the access line has clientCertError), never refused with a 403.
   */
  handle(req: IncomingMessage, res: ServerResponse, url: string | null): void;
  /** True once drain() began. */
  readonly draining: boolean;
  /** Requests being handled now (through the listener and handle()). */
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
   * that, then every connection is closed. Requests that came through
   * handle() are refused and ended the same way; the server they came
   * through is not touched, only the connection of an answer still open
   * after that time. Later calls return the same promise.
   */
  drain(deadlineMs: number): Promise<DrainReport>;
  /** During a drain: end the open requests now rather than at the deadline. */
  endDrainNow(): void;
}

export function createHttpShell(options: HttpServerOptions): HttpShell {
  const { router, limits, logger } = options;
  const scheduler = options.scheduler ?? systemScheduler;
  const trusted = options.trustedProxies ?? NO_TRUSTED_PROXIES;
  const listenerHeaders = Object.entries(options.responseHeaders ?? {});
  for (const [name, value] of listenerHeaders) {
    // Checked once here: the raw answers below write them without node's checks.
    http.validateHeaderName(name);
    http.validateHeaderValue(name, value);
  }
  const rawListenerHeaders = listenerHeaders.map(([name, value]) => `${name}: ${value}\r\n`).join('');
  const serverOptions = {
    ServerResponse: responseClass(listenerHeaders),
    maxHeaderSize: limits.maxHeaderBytes,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // node checks the header and request timeouts on this interval (30 s by
    // default), so a slow client could otherwise hold a socket far longer.
    connectionsCheckingInterval: Math.min(1000, Math.ceil(limits.headersTimeoutMs / 2)),
    // node would answer a request without Host with a bare 400 that no handler
    // (and no access-log line) sees; the request core refuses it instead.
    requireHostHeader: false,
  };
  // An https.Server is an http.Server with TLS below it: the same events, limits and drain.
  const tls = options.tls;
  const server: http.Server =
    tls === undefined
      ? http.createServer(serverOptions)
      : https.createServer({
          ...serverOptions,
          ...serverTlsOptions(tls),
          // node's 120 s would let a client that never finishes its handshake hold a
          // connection (and a place under limits.maxConnections) that long; the
          // headers timeout starts only after the handshake.
          handshakeTimeout: limits.headersTimeoutMs,
        });
  // Before guardListener, which wraps the 'connection' listeners this puts in front of node's TLS layer.
  if (tls !== undefined) {
    answerPlainHttpOnTls(server, { logger, name: options.name ?? 'api', firstByteTimeoutMs: limits.headersTimeoutMs, scheduler, rawHeaders: rawListenerHeaders });
  }
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

  const core = createRequestCore({
    router,
    logger,
    scheduler,
    writeStallTimeoutMs: limits.writeStallTimeoutMs,
    trustedProxies: trusted,
    slots: connections,
    ...(options.errorShapeFor === undefined ? {} : { errorShapeFor: options.errorShapeFor }),
    ...(options.onRequestDone === undefined ? {} : { onRequestDone: options.onRequestDone }),
  });

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    void core.handle(req, res, req.url ?? '/', null, 'listener');
  });
  answerConnect(server, serverOptions.ServerResponse, router, (req, res, refusal) => void core.handle(req, res, req.url ?? '/', refusal, 'listener'));
  // Without this listener node answers an Expect other than 100-continue with a bare 417 no handler sees.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    void core.handle(req, res, req.url ?? '/', new ApiError('expectation_failed'), 'listener');
  });

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
    answerClientError(socket, httpParseError(err.code, limits.maxHeaderBytes), core.openOn(socket), core.logAccess, rawListenerHeaders, scheduler);
  });

  const own: OwnServer = {
    // An error here only says the server was not listening; the connections are what matter.
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    closeIdleConnections: () => server.closeIdleConnections(),
    closeAllConnections: () => server.closeAllConnections(),
  };

  return {
    server,
    handle(req, res, url) {
      // A host's server makes plain responses: they get the listener's headers here, as the listener's own get them when made.
      if (!res.headersSent) for (const [name, value] of listenerHeaders) res.setHeader(name, value);
      void core.handle(req, res, url, null, 'host');
    },
    get draining() {
      return core.draining;
    },
    get inFlight() {
      return core.inFlight;
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
      core.setWriteStallTimeout(next.writeStallTimeoutMs);
    },
    setTls(material) {
      if (!(server instanceof https.Server)) throw new Error('this listener was started without TLS; adding TLS needs a restart');
      server.setSecureContext(secureContextOptions(material));
    },
    drain: (deadlineMs) => core.drain(deadlineMs, own),
    endDrainNow: () => core.endDrainNow(),
  };
}
