// One address floods a listener's connection cap while other addresses keep
// asking: the flooder holds `held` connections that never send a byte (on a
// TLS listener: handshakes never finished) and opens a new one the moment one
// closes, as fast as the loop lets it; each other address sends requests one
// after another, each on a new connection. The result is how many of those
// requests were answered 200, and how the rest failed.
import net from 'node:net';
import tls from 'node:tls';
import { eventually } from '../support/eventually.ts';

export interface FloodOptions {
  port: number;
  /** The flooders' loopback addresses (one usually); each holds `held`. */
  flooders: string[];
  /** Connections it keeps open at once. */
  held: number;
  /** The other clients' addresses; each sends `requests` requests in turn. */
  clients: string[];
  requests: number;
  /** A TLS listener: the clients verify it with this CA. */
  tlsCa?: Buffer;
  /** True once the listener holds the flooders' connections: the others start asking then. */
  flooded: () => boolean;
  /** Runs alongside the clients while the flood goes on; the flood stops once both are done. */
  during?: () => Promise<void>;
}

export interface FloodResult {
  asked: number;
  served: number;
  /** Each failure: the status, or the error code. */
  failures: Record<string, number>;
  /** Connections the flooder opened. */
  flooderConnections: number;
}

export async function flood(options: FloodOptions): Promise<FloodResult> {
  let stopped = false;
  let flooderConnections = 0;
  const flooderSockets = new Set<net.Socket>();
  const open = (from: string): void => {
    if (stopped) return;
    flooderConnections++;
    const socket = net.connect({ port: options.port, host: '127.0.0.1', localAddress: from });
    flooderSockets.add(socket);
    socket.on('error', () => {});
    socket.resume();
    socket.on('close', () => {
      flooderSockets.delete(socket);
      // As fast as it can: the next connection on the next turn of the loop.
      setImmediate(() => open(from));
    });
  };
  for (const from of options.flooders) for (let i = 0; i < options.held; i++) open(from);
  await eventually(options.flooded, 'the flooders to hold their connections');

  const failures: Record<string, number> = {};
  let served = 0;
  // A failure alongside still stops the flooders: they would reopen forever.
  await Promise.all([
    options.during?.(),
    ...options.clients.map(async (from) => {
      for (let i = 0; i < options.requests; i++) {
        const outcome = await ask(options, from);
        if (outcome === '200') served++;
        else failures[outcome] = (failures[outcome] ?? 0) + 1;
      }
    }),
  ]).finally(() => {
    stopped = true;
    for (const socket of flooderSockets) socket.destroy();
  });
  return { asked: options.clients.length * options.requests, served, failures, flooderConnections };
}

/** One request on a new connection from `from`: "200", another status, or the error's code. */
function ask(options: FloodOptions, from: string): Promise<string> {
  return new Promise((resolve) => {
    const request = 'GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';
    const socket =
      options.tlsCa === undefined
        ? net.connect({ port: options.port, host: '127.0.0.1', localAddress: from }, () => socket.write(request))
        : tls.connect({ socket: net.connect({ port: options.port, host: '127.0.0.1', localAddress: from }), ca: options.tlsCa, servername: 'localhost' }, () => socket.write(request));
    let text = '';
    let failure = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => (failure ||= err.code ?? err.name));
    socket.on('close', () => {
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1];
      resolve(status ?? (failure || 'closed without an answer'));
    });
  });
}

/** "98 of 100 (98.0 %)". */
export function share(result: FloodResult): string {
  return `${result.served} of ${result.asked} (${((100 * result.served) / result.asked).toFixed(1)} %)`;
}
