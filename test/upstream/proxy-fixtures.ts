// What the CONNECT tunnel tests share: a proxy route, servers on port 0, and
// the tunnel's failure.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { Server as HttpsServer } from 'node:https';
import type { Server } from 'node:net';
import type { ProxyRoute } from '../../src/config/proxy-env.ts';
import { ProxyTunnelError } from '../../src/upstream/proxy-tunnel.ts';

/** Longer than any test takes: a bound, never what a test waits for. */
export const TIMEOUT_MS = 10_000;

export function route(url: string, source = 'HTTPS_PROXY', authorization?: string): ProxyRoute {
  return { url: new URL(url), authorization, source };
}

export function portOf(server: Server | HttpsServer): number {
  const address = server.address();
  assert.ok(typeof address === 'object' && address !== null);
  return address.port;
}

export async function listen<T extends Server | HttpsServer>(server: T): Promise<T> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

/** The ProxyTunnelError `promise` rejects with; fails if it resolves or rejects with something else. */
export async function rejection(promise: Promise<unknown>): Promise<ProxyTunnelError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ProxyTunnelError, `expected a ProxyTunnelError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the tunnel to fail');
}
