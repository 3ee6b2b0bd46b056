// A CONNECT tunnel through an http:// egress proxy (RFC 9110 section 9.3.6):
// one TCP connection to the proxy, one "CONNECT host:port HTTP/1.1", one
// answer read with a bounded header block. On 2xx the socket is the tunnel
// (the caller puts TLS on it); anything else fails ONCE with a typed error
// and the socket is destroyed. Nothing here retries: the dispatcher's retry
// policy decides, with its backoff. (Node 22/24's fetch with
// NODE_USE_ENV_PROXY retries a CONNECT the proxy drops without answering in a
// tight loop; ERR_PROXY_CLOSED is that case, reported instead of looped.)
//
// Messages name the proxy's host:port and the target, and what to check; they
// never hold the Proxy-Authorization or anything from the proxy URL's userinfo.

import { connect, type Socket } from 'node:net';
import type { ProxyRoute } from '../config/proxy-env.ts';
import { endpointOf } from './endpoint.ts';
import type { ProxyHook } from './node-transport.ts';

/** Largest answer header block read from a proxy before it counts as not HTTP. */
export const MAX_PROXY_HEADER_BYTES = 16 * 1024;
/** Longest reason phrase quoted from a refusal. */
const MAX_REASON_CHARS = 100;

export const ProxyErrorCode = {
  /** No TCP connection to the proxy (refused, unresolvable, unreachable); `cause` kept. */
  Unreachable: 'ERR_PROXY_UNREACHABLE',
  /** The proxy answered the CONNECT with a non-2xx status (`proxyStatus`). */
  Refused: 'ERR_PROXY_REFUSED',
  /** The proxy closed or reset the connection without a complete answer. */
  Closed: 'ERR_PROXY_CLOSED',
  /** No connection and answer within the time given. */
  Timeout: 'ERR_PROXY_TIMEOUT',
  /** The proxy's answer is not HTTP, or its header block is too large. */
  BadResponse: 'ERR_PROXY_BAD_RESPONSE',
} as const;
export type ProxyErrorCode = (typeof ProxyErrorCode)[keyof typeof ProxyErrorCode];

export class ProxyTunnelError extends Error {
  override name = 'ProxyTunnelError';
  readonly code: ProxyErrorCode;
  /** The proxy's status for ERR_PROXY_REFUSED, else undefined. */
  readonly proxyStatus: number | undefined;
  constructor(code: ProxyErrorCode, message: string, options: { cause?: unknown; proxyStatus?: number } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.proxyStatus = options.proxyStatus;
  }
}

/**
 * The node transport's proxy hook for one route: the proxy's URL, the
 * Proxy-Authorization for plain-http targets (absolute form), and
 * `openTunnel` for each new connection to an https:// target.
 */
export function proxyHook(route: ProxyRoute): ProxyHook {
  return {
    url: route.url,
    authorization: route.authorization,
    openTunnel: (host, port, signal, timeoutMs) => openTunnel(route, host, port, signal, timeoutMs),
  };
}

/**
 * The headers an absolute-form request to a plain http:// upstream carries
 * through the proxy: `proxy-authorization` when the route has credentials.
 */
export function proxyRequestHeaders(route: ProxyRoute): Record<string, string> {
  return route.authorization === undefined ? {} : { 'proxy-authorization': route.authorization };
}

const TARGET_HOST = /^[A-Za-z0-9._~%!$&'()*+;=:-]+$/;

/**
 * A tunnel to host:port through the route's proxy. Resolves with the socket
 * once the proxy answers 2xx (bytes the proxy sent after its header block are
 * unshifted onto it, and it is paused); rejects once with a ProxyTunnelError,
 * or with `signal.reason` when the signal aborts first. The abort listener is
 * removed on success: the caller owns the socket from then on.
 */
export function openTunnel(route: ProxyRoute, host: string, port: number, signal: AbortSignal, timeoutMs: number): Promise<Socket> {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (!TARGET_HOST.test(bare) || !Number.isInteger(port) || port < 1 || port > 65_535) {
    return Promise.reject(new TypeError(`not a tunnel target: ${JSON.stringify(host)} port ${port}`));
  }
  if (signal.aborted) return Promise.reject(signal.reason);
  const authority = bare.includes(':') ? `[${bare}]:${port}` : `${bare}:${port}`;
  const proxy = endpointOf(route.url, 80);
  const proxyName = `${route.url.host}`;
  const where = `the egress proxy ${proxyName} (${route.source === 'config' ? 'the provider\'s "proxy" setting' : route.source})`;

  return new Promise<Socket>((resolve, reject) => {
    const socket = connect({ host: proxy.host, port: proxy.port, noDelay: true });
    let connected = false;
    let settled = false;
    let received: Buffer = Buffer.alloc(0);

    const finish = (error: unknown, tunnel?: Socket): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      socket.removeListener('connect', onConnect);
      socket.removeListener('data', onData);
      socket.removeListener('end', onEnd);
      socket.removeListener('close', onEnd);
      socket.removeListener('error', onError);
      if (tunnel === undefined) {
        // A late 'error' after destroy must not be unhandled.
        socket.on('error', () => {});
        socket.destroy();
        reject(error);
      } else {
        resolve(tunnel);
      }
    };
    const onAbort = (): void => finish(signal.reason);
    const onConnect = (): void => {
      connected = true;
      const lines = [`CONNECT ${authority} HTTP/1.1`, `Host: ${authority}`];
      if (route.authorization !== undefined) lines.push(`Proxy-Authorization: ${route.authorization}`);
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    };
    const onError = (error: Error): void => {
      if (!connected) {
        finish(new ProxyTunnelError(ProxyErrorCode.Unreachable, `Could not connect to ${where}: ${describe(error)}. Check the proxy's address and that it is running.`, { cause: error }));
      } else {
        finish(new ProxyTunnelError(ProxyErrorCode.Closed, `${capital(where)} reset the connection before answering CONNECT ${authority}: ${describe(error)}. Check the proxy's log for why it dropped the request.`, { cause: error }));
      }
    };
    const onEnd = (): void => {
      finish(new ProxyTunnelError(ProxyErrorCode.Closed, `${capital(where)} closed the connection without answering CONNECT ${authority}. Check the proxy's log for why it dropped the request (often an access rule or the destination port).`));
    };
    const onData = (chunk: Buffer): void => {
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
      const answer = readProxyAnswer(received);
      if (answer.kind === 'partial') return;
      if (answer.kind === 'bad') {
        finish(new ProxyTunnelError(ProxyErrorCode.BadResponse, `${capital(where)} did not answer CONNECT ${authority} with HTTP: ${answer.why}. Check that the address is an HTTP proxy.`));
        return;
      }
      if (answer.status < 200 || answer.status > 299) {
        finish(new ProxyTunnelError(ProxyErrorCode.Refused, `${capital(where)} refused CONNECT ${authority} with ${answer.status}${answer.reason === '' ? '' : ` ${answer.reason}`}. ${refusalAdvice(answer.status, route)}`, { proxyStatus: answer.status }));
        return;
      }
      socket.pause();
      finish(undefined, socket);
      if (answer.rest.length > 0) socket.unshift(answer.rest);
    };

    const timer = setTimeout(() => {
      const phase = connected ? `no answer to CONNECT ${authority}` : 'no TCP connection';
      finish(new ProxyTunnelError(ProxyErrorCode.Timeout, `${capital(where)}: ${phase} within ${timeoutMs} ms. Check that the proxy is reachable and not overloaded.`));
    }, timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    socket.on('connect', onConnect);
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('close', onEnd);
    socket.on('error', onError);
  });
}

function refusalAdvice(status: number, route: ProxyRoute): string {
  // 407 is the standard answer; some proxies (tinyproxy) answer wrong credentials with 401.
  if (status === 407 || status === 401) {
    return route.authorization === undefined
      ? `The proxy wants credentials: put them in ${route.source === 'config' ? 'HTTPS_PROXY (http://user:password@host:port) and set "proxy" to null' : `${route.source} as http://user:password@host:port`}.`
      : `Check the credentials in ${route.source} (http://user:password@host:port; percent-encode special characters).`;
  }
  if (status === 403) return 'Check the proxy\'s access rules (ACL): the destination host and port must be allowed for CONNECT.';
  if (status === 502 || status === 503 || status === 504 || status === 500) return 'The proxy could not reach the upstream: check the upstream\'s address and the proxy\'s own connectivity.';
  return 'Check the proxy\'s configuration and log.';
}

export type ProxyAnswer = { kind: 'partial' } | { kind: 'bad'; why: string } | { kind: 'done'; status: number; reason: string; rest: Buffer };

const HTTP_PREFIX = 'HTTP/';
const STATUS_LINE = /^HTTP\/1\.[01] (\d{3})(?: ([^\r\n]*))?$/;

/** The proxy's status line once the whole header block is in `data`. */
export function readProxyAnswer(data: Buffer): ProxyAnswer {
  const prefix = data.subarray(0, HTTP_PREFIX.length).toString('latin1');
  if (!HTTP_PREFIX.startsWith(prefix)) return { kind: 'bad', why: 'it does not start with "HTTP/"' };
  // RFC 9112 section 2.2: a bare LF may end a line; the earlier end counts.
  const crlf = data.indexOf('\r\n\r\n');
  const lf = data.indexOf('\n\n');
  const bareLf = lf !== -1 && (crlf === -1 || lf < crlf);
  const end = bareLf ? lf : crlf;
  const skip = bareLf ? 2 : 4;
  if (end === -1 || end > MAX_PROXY_HEADER_BYTES) {
    return data.length > MAX_PROXY_HEADER_BYTES ? { kind: 'bad', why: `its header block exceeds ${MAX_PROXY_HEADER_BYTES} bytes` } : { kind: 'partial' };
  }
  const lineEnd = data.indexOf('\n');
  const line = data.subarray(0, lineEnd).toString('latin1').replace(/\r$/, '');
  const match = STATUS_LINE.exec(line);
  if (match === null) return { kind: 'bad', why: 'its status line is malformed' };
  const reason = (match[2] ?? '').replace(/[^\x20-\x7e]/g, '').slice(0, MAX_REASON_CHARS);
  return { kind: 'done', status: Number(match[1]), reason, rest: data.subarray(end + skip) };
}

function describe(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code === undefined ? error.message : `${code} (${error.message})`;
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
