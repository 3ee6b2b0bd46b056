// The fake upstream's server, for the gateway's own tests too: besides the public
// FakeUpstream (./fake-upstream.ts) it exposes the accepted sockets and takes an
// upgrade handler, which the transport and WebSocket tests need and a host's
// tests do not, so they stay out of the public type.
import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FakeUpstream, FakeUpstreamOptions, ReceivedRequest, UpstreamHandler } from './fake-upstream.ts';

export interface TestUpstreamOptions extends FakeUpstreamOptions {
  /** Meets a request to upgrade the connection (a WebSocket handshake) on its socket. */
  upgrade?: (req: IncomingMessage, socket: Duplex) => void;
}

export interface TestUpstream extends FakeUpstream {
  /** The connections accepted so far (for https: those that completed the handshake). */
  readonly sockets: readonly Socket[];
}

export async function startTestUpstream(handle: UpstreamHandler, options: TestUpstreamOptions = {}): Promise<TestUpstream> {
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
  const upstream: TestUpstream = {
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
