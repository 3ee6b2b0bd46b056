// The metrics listener (config `metrics`): GET /metrics and GET /healthz on a
// socket of their own, so Prometheus on another host can scrape without
// reaching the admin listener (the dashboard and admin API). Optional bearer
// authentication with one token read from metrics.tokenFile, compared in
// constant time; optional TLS (metrics.tls). Anything else is refused in the
// gateway's error envelope. docs/config.md, "Metrics listener".
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { ApiError } from '../errors/api-error.ts';
import { renderError } from '../errors/render.ts';
import type { ListenerTlsMaterial } from '../config/tls-files.ts';
import { serverTlsOptions } from '../http/tls-options.ts';
import { PROMETHEUS_CONTENT_TYPE } from './registry.ts';

export interface MetricsListenerOptions {
  /** The exposition text, made per scrape. */
  expose: () => string;
  /** The bearer token scrapes must send; null: none asked. */
  token: string | null;
  tls?: ListenerTlsMaterial;
}

/** Scrapers are few; this bounds what a flood of connections can hold open. */
const MAX_CONNECTIONS = 64;
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
  const handle = (req: http.IncomingMessage, res: http.ServerResponse) => {
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
  const server = options.tls === undefined ? http.createServer(handle) : https.createServer(serverTlsOptions(options.tls), handle);
  server.maxConnections = MAX_CONNECTIONS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.headersTimeout = REQUEST_TIMEOUT_MS;
  return server;
}
