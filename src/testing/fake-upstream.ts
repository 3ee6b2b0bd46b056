// A fake upstream on loopback, port 0, for every test that needs one (the
// provider adapters, the transports, the dispatcher, the gateway harness): it
// reads each request's body whole, records what arrived, hands the request to
// the test's handler and tells, as events rather than polls, when a request
// arrived and when its response closed. http, or https with the given
// server options; 127.0.0.1 unless another host is asked for.
import { once } from 'node:events';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** What the upstream received, in arrival order; `n` counts from 1. */
export interface ReceivedRequest {
  n: number;
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The body, decoded as UTF-8. */
  text: string;
}

/** Answers one request; a throw (or a rejection) cuts the connection. */
export type UpstreamHandler = (req: IncomingMessage, res: ServerResponse, received: ReceivedRequest) => void | Promise<void>;

export interface FakeUpstreamOptions {
  /** Serve https with these server options (key, cert, ...). */
  tls?: https.ServerOptions;
  /** Default 127.0.0.1; '::1' for an IPv6 literal. */
  host?: string;
  /** Meets a request to upgrade the connection (a WebSocket handshake) on its socket. */
  upgrade?: (req: IncomingMessage, socket: Duplex) => void;
}

export interface FakeUpstream {
  /** e.g. http://127.0.0.1:40123/v1 */
  readonly baseUrl: string;
  readonly port: number;
  /** Every request so far; a test may empty it (`received.length = 0`) between cases. */
  readonly received: ReceivedRequest[];
  /** Requests so far, whether or not `received` was emptied since. */
  readonly count: number;
  /** TCP connections accepted so far (for https: those that completed the handshake). */
  readonly connections: number;
  readonly sockets: readonly Socket[];
  /** Replaceable between requests. */
  handle: UpstreamHandler;
  /** Resolves when request `n` (1-based, counted from the start) has arrived whole, before the handler runs. */
  arrived(n: number): Promise<ReceivedRequest>;
  /** arrived() of the request after those so far: ask before sending it. */
  nextArrival(): Promise<ReceivedRequest>;
  /** Resolves when the response of request `n` closes (finished or cut); default the latest request. */
  closed(n?: number): Promise<void>;
  /** Ends every open connection now and keeps listening: the next request needs a new one. */
  closeConnections(): void;
  close(): Promise<void>;
}

export async function startFakeUpstream(handle: UpstreamHandler, options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const sockets: Socket[] = [];
  const arrivals: Array<Deferred<ReceivedRequest>> = [];
  const closings: Array<Promise<void>> = [];
  let count = 0;
  const arrival = (n: number): Deferred<ReceivedRequest> => (arrivals[n] ??= deferred<ReceivedRequest>());

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const n = ++count;
    closings[n] = once(res, 'close').then(() => undefined);
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const received: ReceivedRequest = { n, method: req.method ?? '', url: req.url ?? '', headers: req.headers, text: Buffer.concat(parts).toString('utf8') };
      upstream.received.push(received);
      arrival(n).resolve(received);
      let answering: void | Promise<void>;
      try {
        answering = upstream.handle(req, res, received);
      } catch {
        res.destroy();
        return;
      }
      if (answering instanceof Promise) answering.catch(() => res.destroy());
    });
  };
  const server = options.tls === undefined ? http.createServer(onRequest) : https.createServer(options.tls, onRequest);
  server.on(options.tls === undefined ? 'connection' : 'secureConnection', (socket: Socket) => void sockets.push(socket));
  // A failed handshake is what such a test is about, not an error of the fake.
  server.on('tlsClientError', () => undefined);
  if (options.upgrade !== undefined) server.on('upgrade', options.upgrade);
  const host = options.host ?? '127.0.0.1';
  server.listen(0, host);
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const upstream: FakeUpstream = {
    baseUrl: `${options.tls === undefined ? 'http' : 'https'}://${host.includes(':') ? `[${host}]` : host}:${port}/v1`,
    port,
    received: [],
    get count() {
      return count;
    },
    get connections() {
      return sockets.length;
    },
    sockets,
    handle,
    arrived: (n) => arrival(n).promise,
    nextArrival: () => arrival(count + 1).promise,
    closed(n = count) {
      const closing = closings[n];
      if (closing === undefined) throw new Error(`request ${n} never arrived`);
      return closing;
    },
    closeConnections: () => server.closeAllConnections(),
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  return upstream;
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
}

function deferred<T>(): Deferred<T> {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** A JSON answer with its content-length; a string body is sent as it is (for bodies that are not JSON). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/** The headers of an event stream, sent now; the events follow with res.write. */
export function startEventStream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  res.flushHeaders();
}
