// node:http / node:https behind the transport interface (./transport.ts): about
// a third of fetch's CPU per proxied request, per-upstream TLS settings (a
// private CA, a client certificate, the server name, a minimum version) and an
// egress proxy. One transport per provider, each with its own keep-alive
// agents, so one provider's TLS settings never meet another's sockets.
//
// Keep-alive sockets and reloads: a reload builds new providers with new
// transports; the old ones are dropped, but their pooled sockets would keep the
// old TLS settings (and a file descriptor) alive for as long as the upstream
// keeps them open. The agent's `timeout` closes a socket that sat idle in the
// pool for IDLE_SOCKET_MS (node's agent destroys a free socket on its
// 'timeout'; an in-use socket's 'timeout' only emits an event nobody acts on,
// the exchange's own timers bound those). So an old agent drains by itself
// within seconds of its last request. IDLE_SOCKET_MS is below the usual
// upstream keep-alive timeouts (node's 5 s, nginx's 75 s, most load balancers'
// 60 s), so the gateway closes first and seldom races an upstream that closes
// a socket just as a request goes out on it; a `Keep-Alive: timeout=n` hint
// shorter than that is obeyed by the agent (it closes a second before).

import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import type { ClientTlsMaterial } from '../config/tls-files.ts';
import { endpointOf } from './endpoint.ts';
import { ProxyErrorCode, ProxyTunnelError } from './proxy-tunnel.ts';
import { badUpstreamResponseError } from './upstream-errors.ts';
import { ConnectObservation, type UpstreamBody, type UpstreamRequest, type UpstreamResponse, type UpstreamSend, type UpstreamTransport } from './transport.ts';

/** How long a pooled socket may sit idle before the agent closes it. */
const IDLE_SOCKET_MS = 4_000;
/** Bound on opening a proxy tunnel when the provider sets no connect timeout (undici's connect default). */
const DEFAULT_TUNNEL_TIMEOUT_MS = 10_000;

/** The egress proxy for one provider, resolved elsewhere (the proxy's own
 * module opens the CONNECT tunnel and computes the authorization). */
export interface ProxyHook {
  /** http://host:port of the proxy, no credentials. */
  url: URL;
  /** The proxy-authorization value for plain-http targets; never logged. */
  authorization: string | undefined;
  /** A socket tunnelled to host:port; rejects with an Error whose code starts with ERR_PROXY_. */
  openTunnel(host: string, port: number, signal: AbortSignal, timeoutMs: number): Promise<Socket>;
}

export interface NodeTransportOptions {
  /** TLS settings for https targets; undefined: Node's defaults. */
  tls?: ClientTlsMaterial | undefined;
  proxy?: ProxyHook | null | undefined;
  /** Bound on opening a proxy tunnel. Default 10 s. */
  connectTimeoutMs?: number | undefined;
  /** How long a pooled socket may sit idle. Default 4 s (see above). */
  idleSocketMs?: number | undefined;
}

/** The request options the agent hands on to createConnection: the request's
 * own signal, so that a tunnel opened for it stops when it is aborted. */
interface TunnelRequestOptions extends https.RequestOptions {
  tunnelSignal?: AbortSignal;
}

export function createNodeTransport(options: NodeTransportOptions = {}): UpstreamTransport {
  const idleSocketMs = options.idleSocketMs ?? IDLE_SOCKET_MS;
  const proxy = options.proxy ?? null;
  const material = options.tls;
  // Plain http through a proxy: a connection per request. A proxy may close
  // its client connection after each answer while dropping the upstream's
  // "Connection: close" (tinyproxy does), and a pooled socket would then be
  // reused just as its close arrives: every second request reset.
  const httpAgent = new http.Agent(proxy === null ? { keepAlive: true, timeout: idleSocketMs } : { keepAlive: false });
  const httpsAgent = new https.Agent({
    keepAlive: true,
    // Explicit, so that NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment never turns the checks off.
    rejectUnauthorized: true,
    timeout: idleSocketMs,
    ...(material?.ca === undefined ? {} : { ca: material.ca }),
    ...(material?.cert === undefined ? {} : { cert: material.cert }),
    ...(material?.key === undefined ? {} : { key: material.key }),
    ...(material?.servername === undefined ? {} : { servername: material.servername }),
    ...(material === undefined ? {} : { minVersion: material.minVersion }),
  });
  if (proxy !== null) {
    const tunnelTimeoutMs = options.connectTimeoutMs ?? DEFAULT_TUNNEL_TIMEOUT_MS;
    // The agent takes a callback-style createConnection; TLS then runs over
    // the tunnel with the agent's options (ca, cert, key, servername, minVersion)
    // merged into `connect` by the agent.
    httpsAgent.createConnection = (connect: TunnelRequestOptions, done?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined => {
      // The request that asked for this socket may abort the tunnel while it
      // opens, never after: the socket then outlives that request in the pool.
      const tunnel = new AbortController();
      const requestSignal = connect.tunnelSignal;
      const forward = (): void => tunnel.abort(requestSignal?.reason);
      if (requestSignal?.aborted === true) forward();
      else requestSignal?.addEventListener('abort', forward, { once: true });
      const settled = (): void => requestSignal?.removeEventListener('abort', forward);
      proxy.openTunnel(String(connect.host), Number(connect.port ?? 443), tunnel.signal, tunnelTimeoutMs).then(
        (socket) => {
          settled();
          done?.(null, tls.connect({ ...connect, socket } as tls.ConnectionOptions));
        },
        (error: unknown) => {
          settled();
          done?.(error instanceof Error ? error : new Error(String(error)), undefined as unknown as Duplex);
        },
      );
      return undefined;
    };
  }

  /** Where requests for each endpoint go, parsed once. A provider's endpoints
   * are fixed at config time (chat, Responses, a token count's), so this stays small. */
  const routes = new Map<string, Route>();

  function send(request: UpstreamRequest): UpstreamSend {
    let route = routes.get(request.url);
    if (route === undefined) {
      route = routeOf(request.url, proxy);
      routes.set(request.url, route);
    }
    const headers: Record<string, string> = { ...request.headers, ...route.headers, 'content-length': String(Buffer.byteLength(request.body)) };
    // No content coding: fetch would decode one, node:http does not, and the
    // bounded reads count decoded bytes.
    if (headers['accept-encoding'] === undefined) headers['accept-encoding'] = 'identity';
    const options: TunnelRequestOptions = { method: 'POST', host: route.host, port: route.port, path: route.path, headers };
    let req: http.ClientRequest;
    /** Only a tunnel being opened for this request needs a signal. */
    let tunnel: AbortController | undefined;
    if (route.secure) {
      if (proxy !== null) {
        tunnel = new AbortController();
        options.tunnelSignal = tunnel.signal;
      }
      req = https.request({ ...options, agent: httpsAgent });
    } else {
      req = http.request({ ...options, agent: httpAgent });
    }
    const exchange = new NodeExchange(req, request, route, tunnel);
    return { response: exchange.response, connect: ConnectObservation.Observed, abort: (reason) => exchange.abort(reason) };
  }

  return { name: 'node', send };
}

interface Route {
  url: string;
  secure: boolean;
  /** Where the TCP connection goes: the upstream, or for plain http behind a proxy, the proxy. */
  host: string;
  port: number;
  path: string;
  /** Headers a proxied plain-http request adds. */
  headers: Readonly<Record<string, string>>;
  /** A plain-http request sent to the proxy in absolute form: `host:port` of the proxy, else undefined. */
  viaProxy: string | undefined;
}

function routeOf(url: string, proxy: ProxyHook | null): Route {
  const target = new URL(url);
  const secure = target.protocol === 'https:';
  if (!secure && proxy !== null) {
    // A plain-http target through the proxy: absolute form (RFC 9112, 3.2.2),
    // the Host the upstream's, never the proxy's.
    const headers: Record<string, string> = { host: target.host };
    if (proxy.authorization !== undefined) headers['proxy-authorization'] = proxy.authorization;
    return { url, secure, ...endpointOf(proxy.url, 80), path: target.href, headers, viaProxy: proxy.url.host };
  }
  // An https target behind a proxy connects through the agent's tunnel (above).
  return { url, secure, ...endpointOf(target, secure ? 443 : 80), path: `${target.pathname}${target.search}`, headers: {}, viaProxy: undefined };
}

/**
 * One request and its response body. The body is read through 'data' events
 * with pause() and resume() and one pending read at a time, not through the
 * stream's async iterator (an async generator step per read): a chunk that
 * arrived before the read asked is handed over at once.
 */
class NodeExchange implements UpstreamBody {
  readonly response: Promise<UpstreamResponse>;
  readonly #req: http.ClientRequest;
  readonly #tunnel: AbortController | undefined;
  #res: http.IncomingMessage | undefined;
  /** Set once: the abort's reason, the body's error, or the body's end. */
  #failure: Error | undefined;
  #ended = false;
  /** A chunk that arrived with no read pending (the stream is paused then). */
  #buffered: Buffer | undefined;
  #resolveRead: ((chunk: Uint8Array | undefined) => void) | undefined;
  #rejectRead: ((error: Error) => void) | undefined;

  constructor(req: http.ClientRequest, request: UpstreamRequest, route: Route, tunnel: AbortController | undefined) {
    this.#req = req;
    this.#tunnel = tunnel;
    const { secure, viaProxy } = route;
    /** For a request in absolute form: whether the TCP connection to the proxy was made. */
    let proxyConnected = false;
    this.response = new Promise<UpstreamResponse>((resolve, reject) => {
      req.on('error', (error) => {
        // An abort's reason is what the request ends with.
        const failure = this.#failure ?? error;
        this.#fail(failure);
        // Plain http through a proxy: failing to reach the proxy is the proxy's failure, not the upstream's.
        if (viaProxy !== undefined && !proxyConnected && failure === error) {
          reject(new ProxyTunnelError(ProxyErrorCode.Unreachable, `Could not connect to the proxy ${viaProxy}: ${(error as NodeJS.ErrnoException).code ?? error.message}. Check the proxy's address and that it is running.`, { cause: error }));
          return;
        }
        reject(failure);
      });
      req.once('socket', (socket: Socket) => {
        // A pooled socket is ready; a new one is once TCP (and TLS) is up.
        const connected = (): void => {
          proxyConnected = true;
          request.onConnected();
        };
        if (req.reusedSocket || (!secure && !socket.connecting)) connected();
        else socket.once(secure ? 'secureConnect' : 'connect', connected);
      });
      req.once('response', (incoming: http.IncomingMessage) => {
        this.#res = incoming;
        if (viaProxy !== undefined && (incoming.statusCode === 407 || incoming.headers['proxy-authenticate'] !== undefined)) {
          // The proxy's own refusal of an absolute-form request (RFC 9110, 15.5.8).
          incoming.destroy();
          const status = incoming.statusCode ?? 0;
          reject(new ProxyTunnelError(ProxyErrorCode.Refused, `The proxy ${viaProxy} refused the request with ${status}: check the credentials in http_proxy.`, { proxyStatus: status }));
          return;
        }
        const coding = incoming.headers['content-encoding'];
        if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') {
          incoming.destroy();
          reject(badUpstreamResponseError(`The upstream provider answered with content-encoding ${JSON.stringify(coding.slice(0, 32))} though the gateway asked for none.`));
          return;
        }
        incoming.on('data', (chunk: Buffer) => this.#onData(chunk));
        incoming.on('end', () => this.#onEnd());
        incoming.on('error', (error) => this.#fail(this.#failure ?? error));
        // Premature close (the socket went mid-body) shows as 'aborted' + 'close' without 'end' on some lines.
        incoming.on('close', () => {
          if (!this.#ended) this.#fail(this.#failure ?? connectionLost());
        });
        resolve({ status: incoming.statusCode ?? 0, headers: headersOf(incoming), body: this });
      });
    });
    req.end(request.body);
  }

  abort(reason: Error): void {
    if (this.#failure !== undefined || this.#ended) return;
    this.#failure = reason;
    this.#tunnel?.abort(reason);
    this.#res?.destroy(reason);
    this.#req.destroy(reason);
    this.#settleRead();
  }

  read(): Promise<Uint8Array | undefined> {
    const buffered = this.#buffered;
    if (buffered !== undefined) {
      this.#buffered = undefined;
      this.#res?.resume();
      return Promise.resolve(buffered);
    }
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (this.#ended) return NO_BYTES;
    return new Promise((resolve, reject) => {
      this.#resolveRead = resolve;
      this.#rejectRead = reject;
    });
  }

  cancel(): void {
    if (this.#ended || this.#failure !== undefined) return;
    // The rest is not wanted: the socket goes, it is not drained for reuse.
    this.#failure = cancelled();
    this.#res?.destroy();
    this.#settleRead();
  }

  #onData(chunk: Buffer): void {
    const resolve = this.#resolveRead;
    if (resolve !== undefined) {
      this.#resolveRead = undefined;
      this.#rejectRead = undefined;
      resolve(chunk);
      return;
    }
    // Nobody is reading: hold this chunk and let the socket's backpressure work.
    this.#buffered = this.#buffered === undefined ? chunk : Buffer.concat([this.#buffered, chunk]);
    this.#res?.pause();
  }

  #onEnd(): void {
    this.#ended = true;
    this.#settleRead();
  }

  #fail(error: Error): void {
    if (this.#ended) return;
    this.#failure ??= error;
    this.#settleRead();
  }

  /** Hands the pending read its end or its error. */
  #settleRead(): void {
    const resolve = this.#resolveRead;
    const reject = this.#rejectRead;
    if (resolve === undefined || reject === undefined) return;
    if (this.#buffered !== undefined) return;
    this.#resolveRead = undefined;
    this.#rejectRead = undefined;
    if (this.#failure !== undefined) reject(this.#failure);
    else resolve(undefined);
  }
}

const NO_BYTES: Promise<undefined> = Promise.resolve(undefined);

function connectionLost(): Error {
  const error = new Error('The upstream connection closed before the response ended.') as NodeJS.ErrnoException;
  error.code = 'ECONNRESET';
  return error;
}

function cancelled(): Error {
  const error = new Error('The response body was cancelled.');
  error.name = 'AbortError';
  return error;
}

function headersOf(res: http.IncomingMessage): { get(name: string): string | null } {
  return {
    get(name: string): string | null {
      const value = res.headers[name];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(', ') : value;
    },
  };
}
