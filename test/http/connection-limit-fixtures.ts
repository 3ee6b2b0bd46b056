// What the connection-limit tests share: a shell with a `/ok` route and a
// `/hold` route that answers only when the test releases it, on port 0 (each
// file closes them in its after(): closeShells), the exact refusal bytes, and
// raw client connections (from any loopback address) that record everything
// they receive.
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import { DEFAULT_LIMITS, type ServerLimits } from '../../src/config/config.ts';
import type { ListenerTlsMaterial } from '../../src/config/tls-files.ts';
import { sendJson } from '../../src/http/respond.ts';
import { createRouter } from '../../src/http/router.ts';
import { createHttpShell, type HttpShell } from '../../src/http/server.ts';
import type { RouteHandler } from '../../src/http/request-context.ts';
import { createLogger } from '../../src/log/logger.ts';
import type { Scheduler } from '../../src/time/scheduler.ts';
import type { TrustedProxies } from '../../src/http/client-address.ts';
import { eventually } from '../support/eventually.ts';

export const REFUSAL =
  'HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: 146\r\nretry-after: 1\r\nconnection: close\r\n\r\n' +
  '{"error":{"message":"The gateway has too many open connections; retry shortly.","type":"server_error","param":null,"code":"too_many_connections"}}';
export const ADDRESS_REFUSAL =
  'HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: 200\r\nretry-after: 1\r\nconnection: close\r\n\r\n' +
  '{"error":{"message":"This client address has as many connections open as the gateway allows one address; close one or retry shortly.","type":"server_error","param":null,"code":"too_many_connections"}}';
export const OK_REQUEST = 'GET /ok HTTP/1.1\r\nHost: x\r\n\r\n';
export const HOLD_REQUEST = 'GET /hold HTTP/1.1\r\nHost: x\r\n\r\n';
/** The shells' refusal bursts end after this long without a refusal. */
export const REFUSAL_QUIET_MS = 300;

export interface Started {
  shell: HttpShell;
  port: number;
  logs: Record<string, unknown>[];
  refused: () => number;
  reclaimed: () => number;
  /** Answers every /hold request waiting now. */
  release(): void;
  /** /hold requests waiting. */
  holding(): number;
  /** The server's side of every connection it accepted (refused ones included), in order. */
  accepted: net.Socket[];
}

const shells: HttpShell[] = [];

/** Closes every shell start() made. */
export async function closeShells(): Promise<void> {
  for (const shell of shells.splice(0)) {
    shell.server.closeAllConnections();
    await new Promise<void>((resolve) => shell.server.close(() => resolve()));
  }
}

export async function start(
  limits: Partial<ServerLimits>,
  options: { tls?: ListenerTlsMaterial; scheduler?: Scheduler; trustedProxies?: TrustedProxies } = {},
): Promise<Started> {
  const router = createRouter<RouteHandler>();
  router.add('GET', '/ok', async (ctx) => sendJson(ctx.res, 200, { ok: true }));
  router.add('GET', '/who', async (ctx) => sendJson(ctx.res, 200, { client: ctx.clientAddress }));
  const held: Array<() => void> = [];
  router.add('GET', '/hold', async (ctx) => {
    await new Promise<void>((resolve) => held.push(resolve));
    sendJson(ctx.res, 200, { held: true });
  });
  const logs: Record<string, unknown>[] = [];
  let refused = 0;
  let reclaimed = 0;
  const shell = createHttpShell({
    router,
    limits: { ...DEFAULT_LIMITS, ...limits },
    logger: createLogger({ write: (l) => logs.push(JSON.parse(l) as Record<string, unknown>) }),
    onConnectionRefused: () => refused++,
    onConnectionReclaimed: () => reclaimed++,
    refusalQuietMs: REFUSAL_QUIET_MS,
    ...options,
  });
  shells.push(shell);
  const accepted: net.Socket[] = [];
  shell.server.on('connection', (socket: net.Socket) => accepted.push(socket));
  await new Promise<void>((resolve) => shell.server.listen(0, '127.0.0.1', resolve));
  return {
    shell,
    port: (shell.server.address() as AddressInfo).port,
    logs,
    refused: () => refused,
    reclaimed: () => reclaimed,
    release: () => {
      for (const answer of held.splice(0)) answer();
    },
    holding: () => held.length,
    accepted,
  };
}

/** A raw connection: everything it received, and when it closed. */
export interface Raw {
  socket: net.Socket;
  text(): string;
  /** Resolves once the received text holds `count` answers (counted by their status lines). */
  answers(count: number): Promise<string>;
  closed: Promise<string>;
}

/** `holdOpen`: the client does not close its side when the server closes its own. `from`: the client's loopback address. */
export function connect(port: number, send = '', holdOpen = false, from = '127.0.0.1'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: holdOpen, localAddress: from });
    let text = '';
    const waiting: Array<() => void> = [];
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
      for (const wake of waiting.splice(0)) wake();
    });
    // A reset after the answer is read is the server closing; what was received is what counts.
    socket.on('error', () => {});
    const closed = new Promise<string>((r) => socket.on('close', () => r(text)));
    socket.once('connect', () => {
      if (send !== '') socket.write(send);
      resolve({
        socket,
        text: () => text,
        async answers(count) {
          while ((text.match(/HTTP\/1\.1 /g) ?? []).length < count || !text.endsWith('}')) {
            if (socket.destroyed) throw new Error(`closed after ${JSON.stringify(text)}`);
            await new Promise<void>((r) => waiting.push(r));
          }
          return text;
        },
        closed,
      });
    });
    socket.once('error', reject);
  });
}

/** A connection that got its first answer and stays open (keep-alive). */
export async function served(port: number): Promise<Raw> {
  const raw = await connect(port, OK_REQUEST);
  assert.match(await raw.answers(1), /^HTTP\/1\.1 200 OK\r\n/);
  return raw;
}

/** A connection that got its first answer and stays open (keep-alive). */
export async function servedFrom(port: number, from: string): Promise<Raw> {
  const raw = await connect(port, OK_REQUEST, false, from);
  assert.match(await raw.answers(1), /^HTTP\/1\.1 200 OK\r\n/);
  return raw;
}

/** A connection with a request in flight: its /hold request is waiting in the handler. */
export async function busy(s: Started, from = '127.0.0.1'): Promise<Raw> {
  const before = s.holding();
  const raw = await connect(s.port, HOLD_REQUEST, false, from);
  await eventually(() => s.holding() === before + 1, 'the /hold request to reach its handler');
  return raw;
}
