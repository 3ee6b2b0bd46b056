// What the adapter tests (OpenAI-compatible, Anthropic) share: one fake
// upstream per test file whose handler a test replaces, reading an adapter's
// failure exactly, and a TCP server that never completes a TLS handshake.
import assert from 'node:assert/strict';
import { getEventListeners, once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, beforeEach } from 'node:test';
import { ApiError } from '../../src/errors/api-error.ts';
import { startFakeUpstream, type FakeUpstream, type ReceivedRequest, type UpstreamHandler } from '../../src/testing/fake-upstream.ts';

/** The file's fake upstream; `handle` answers its next requests. */
export interface FileUpstream {
  handle: UpstreamHandler;
  readonly baseUrl: string;
  readonly port: number;
  /** This test's requests (emptied before each test). */
  readonly received: ReceivedRequest[];
  nextArrival(): Promise<ReceivedRequest>;
  /** Resolves when the latest request's response closes (finished or cut). */
  closed(): Promise<void>;
}

/**
 * Starts the shared fake upstream before the file's tests and closes it after
 * them. `screen`, when given, sees each request first and may answer it
 * itself (true), as Anthropic refuses requests outside its constraints.
 */
export function useFakeUpstream(screen?: (res: ServerResponse, received: ReceivedRequest) => boolean): FileUpstream {
  let server: FakeUpstream | undefined;
  const started = (): FakeUpstream => {
    if (server === undefined) throw new Error('the fake upstream starts in before()');
    return server;
  };
  const view: FileUpstream = {
    handle: (_req, res) => void res.end(),
    get baseUrl() {
      return started().baseUrl;
    },
    get port() {
      return started().port;
    },
    get received() {
      return started().received;
    },
    nextArrival: () => started().nextArrival(),
    closed: () => started().closed(),
  };
  before(async () => {
    server = await startFakeUpstream((req, res, received) => (screen?.(res, received) === true ? undefined : view.handle(req, res, received)));
  });
  after(() => started().close());
  beforeEach(() => {
    started().received.length = 0;
  });
  return view;
}

/** The ApiError's rendering, for exact assertions. */
export function rendered(error: unknown): { status: number; body: unknown; headers: Record<string, string> } {
  assert.ok(error instanceof ApiError, `expected an ApiError, got ${String(error)}`);
  return { status: error.status, body: error.toBody(), headers: error.headers };
}

/** What `promise` rejects with; fails the test if it resolves. */
export async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected a rejection');
}

/** The error the client would see names no address, port or key. */
export function assertNoSecrets(error: unknown, secrets: readonly string[]): void {
  const text = JSON.stringify(error instanceof ApiError ? error.toBody() : String(error));
  for (const secret of ['127.0.0.1', ...secrets]) assert.ok(!text.includes(secret), text);
}

/** One turn of the event loop. */
export const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The abort listeners still attached to `signal`. */
export const abortListeners = (signal: AbortSignal): number => getEventListeners(signal, 'abort').length;

/** Accepts TCP connections and never says a word: a TLS handshake to it
 * hangs, which is connection setup that never completes, on 127.0.0.1. */
export async function silentTcpServer(): Promise<{ port: number; sockets: Socket[]; close(): Promise<void> }> {
  const sockets: Socket[] = [];
  const tcp = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
  });
  tcp.listen(0, '127.0.0.1');
  await once(tcp, 'listening');
  return {
    port: (tcp.address() as AddressInfo).port,
    sockets,
    async close() {
      for (const socket of sockets) socket.destroy();
      tcp.close();
      await once(tcp, 'close');
    },
  };
}
