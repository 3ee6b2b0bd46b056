// The metrics listener (config `metrics`): GET /metrics and GET /healthz on a
// socket of their own, so Prometheus on another host can scrape without
// reaching the admin listener (the dashboard and admin API). Optional bearer
// authentication with one token read from metrics.tokenFile, compared in
// constant time; optional TLS (metrics.tls). Anything else is refused in the
// gateway's error envelope. docs/config.md, "Metrics listener".
//
// Its connections are held to the same guard as the API and admin listeners'
// (src/http/connection-limit.ts), with fixed small caps: scrapers are few and
// keep one connection each. Idle connections cannot lock a scraper out: one
// address holds at most MAX_CONNECTIONS_PER_ADDRESS, and with the listener
// full the connection silent longest gives its place to the new one. A
// connection that sends no complete request head within HEADERS_TIMEOUT_MS
// is closed (on TLS: no first byte, or no finished handshake, in that time).
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { ApiError } from '../errors/api-error.ts';
import { renderError } from '../errors/render.ts';
import type { ListenerTlsMaterial } from '../config/tls-files.ts';
import { guardListener } from '../http/connection-limit.ts';
import { answerPlainHttpOnTls } from '../http/plain-http-on-tls.ts';
import { serverTlsOptions } from '../http/tls-options.ts';
import type { Logger } from '../log/logger.ts';
import { systemScheduler, type Scheduler } from '../time/scheduler.ts';
import { PROMETHEUS_CONTENT_TYPE } from './registry.ts';

export interface MetricsListenerOptions {
  /** The exposition text, made per scrape. */
  expose: () => string;
  /** The bearer token scrapes must send; null: none asked. */
  token: string | null;
  tls?: ListenerTlsMaterial;
  /** Where the connection guard's lines go (listener "metrics"). */
  logger: Logger;
  /** The timers of the TLS first-byte deadline and the guard's lingers (default: the system's). */
  scheduler?: Scheduler;
  /** Each connection refused beyond a cap. */
  onConnectionRefused?: () => void;
  /** Each idle connection closed to make room for a new one. */
  onConnectionReclaimed?: () => void;
  /** The request head's (and on TLS the first byte's and the handshake's) deadline; default HEADERS_TIMEOUT_MS. */
  headersTimeoutMs?: number;
}

/** Scrapers are few; this bounds what a flood of connections can hold open. */
export const MAX_CONNECTIONS = 64;
/** A Prometheus keeps one connection per target; a few spare for a second scraper or a probe behind one NAT. */
export const MAX_CONNECTIONS_PER_ADDRESS = 4;
/** A scrape's request head is a few hundred bytes: a connection silent this long is not a scraper. */
export const HEADERS_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 10_000;
const PATHS = new Set(['/metrics', '/healthz']);

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Whether the Authorization header carries the token; digests of equal length, compared in constant time. */
export function bearerMatches(header: string | undefined, expected: Buffer): boolean {
  if (header === undefined) return false;
  const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(header);
  return match !== null && timingSafeEqual(sha256(match[1] as string), expected);
}

/** What the listener answers, as data: pure of sockets, tested by itself. */
export function metricsAnswer(method: string, url: string, authorization: string | undefined, options: { expose: () => string; tokenDigest: Buffer | null }): { status: number; headers: Record<string, string | number>; body: string } {
  const pathname = url.split('?', 1)[0] as string;
  const refuse = (error: ApiError) => {
    const rendered = renderError(error);
    return { status: rendered.status, headers: { ...rendered.headers, 'content-type': 'application/json' }, body: rendered.body };
  };
  if (!PATHS.has(pathname)) return refuse(new ApiError('unknown_url', `This listener serves GET /metrics and GET /healthz only; ${pathname} is not one of them.`));
  if (method !== 'GET' && method !== 'HEAD') return refuse(new ApiError('method_not_allowed', `${pathname} answers GET only.`, { headers: { allow: 'GET, HEAD' } }));
  if (pathname === '/healthz') return { status: 200, headers: { 'content-type': 'application/json' }, body: '{"status":"ok"}' };
  if (options.tokenDigest !== null && !bearerMatches(authorization, options.tokenDigest)) {
    const message = authorization === undefined
      ? 'The metrics listener needs its bearer token: send Authorization: Bearer <the token in metrics.tokenFile>.'
      : 'The bearer token is not the metrics listener\'s (metrics.tokenFile).';
    return refuse(new ApiError('invalid_api_key', message, { headers: { 'www-authenticate': 'Bearer realm="metrics"' } }));
  }
  return { status: 200, headers: { 'content-type': PROMETHEUS_CONTENT_TYPE }, body: options.expose() };
}

export function createMetricsListener(options: MetricsListenerOptions): http.Server {
  const tokenDigest = options.token === null ? null : sha256(options.token);
  const scheduler = options.scheduler ?? systemScheduler;
  const handle = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    if (!connections.requestStarted(socket)) {
      // The connection gave its place up while this request was arriving; its client was answered 503 then.
      socket.destroy();
      return;
    }
    res.on('close', () => connections.requestEnded(socket));
    let answer;
    try {
      answer = metricsAnswer(req.method ?? 'GET', req.url ?? '/', req.headers.authorization, { expose: options.expose, tokenDigest });
    } catch (error) {
      const rendered = renderError(error);
      answer = { status: rendered.status, headers: { 'content-type': 'application/json' }, body: rendered.body };
    }
    res.writeHead(answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(answer.body), 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : answer.body);
  };
  const headersTimeoutMs = options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  const timeouts = {
    headersTimeout: headersTimeoutMs,
    requestTimeout: Math.max(REQUEST_TIMEOUT_MS, headersTimeoutMs),
    // How often node looks for connections past the deadline: its default, 30 s, would let them stay that much longer.
    connectionsCheckingInterval: Math.min(1000, Math.ceil(headersTimeoutMs / 2)),
  };
  const server =
    options.tls === undefined
      ? http.createServer(timeouts, handle)
      : https.createServer({ ...timeouts, ...serverTlsOptions(options.tls), handshakeTimeout: headersTimeoutMs }, handle);
  if (options.tls !== undefined) {
    // Before guardListener, which wraps the 'connection' listeners this puts in front of node's TLS layer.
    answerPlainHttpOnTls(server, { logger: options.logger, name: 'metrics', firstByteTimeoutMs: headersTimeoutMs, scheduler, rawHeaders: '' });
  }
  const connections = guardListener(server, {
    name: 'metrics',
    maxConnections: MAX_CONNECTIONS,
    perAddress: MAX_CONNECTIONS_PER_ADDRESS,
    tls: options.tls !== undefined,
    logger: options.logger,
    scheduler,
    ...(options.onConnectionRefused === undefined ? {} : { onRefused: options.onConnectionRefused }),
    ...(options.onConnectionReclaimed === undefined ? {} : { onReclaimed: options.onConnectionReclaimed }),
  });
  return server;
}
