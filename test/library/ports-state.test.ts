// openLibraryState: a host's key store, usage store and limiter take the place of
// the data directory's own, and only what is not supplied is opened there; a key
// record the host's store answers is checked before a request runs on it; close()
// leaves the host's ports open. The usage store contract runs against a host-written
// store here too.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { IssuedKey, KeyRecord, KeyStore, Limiter } from '../../src/api/ports.ts';
import { checkedKeyStore } from '../../src/library/compose-state.ts';
import { createMemoryLimiter } from '../../src/limits/memory-limiter.ts';
import { createLogger } from '../../src/log/logger.ts';
import { openKeyStore } from '../../src/state/file-key-store.ts';
import { runKeyStoreContract } from '../../src/testing/key-store-contract.ts';
import { runUsageStoreContract } from '../../src/testing/usage-store-contract.ts';
import { freshPath, tempDir } from '../support/temp-dir.ts';
import { createHostKeyDatabase, openHostKeyStore } from './host-key-store.ts';
import { createHostUsageStore } from './host-usage-store.ts';
import { logged, postChat, startPortsGateway } from './ports-harness.ts';

runUsageStoreContract('a host in-memory usage store', () => createHostUsageStore());

// What the gateway puts between it and a host's key store passes every call through unchanged.
const root = tempDir('ports-state');
runKeyStoreContract('a key store as the library holds a host one (checkedKeyStore)', async () => {
  const dir = freshPath(root, 'data');
  const logger = createLogger({ write: () => {} });
  return { open: async (clock) => checkedKeyStore(openKeyStore(dir, { clock, watch: false }), logger) };
});

const NO_LIMITS = { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null, tokenBudget: null, costBudget: null } as const;

/** A host's key store that knows fixed keys; the gateway only reads it on the request path. */
function hostKeyStore(records: Record<string, unknown>): KeyStore & { closed: number } {
  const unsupported = (): never => {
    throw new Error('this host store is read-only');
  };
  const store = {
    closed: 0,
    location: 'host directory',
    create: async (): Promise<IssuedKey> => unsupported(),
    list: async () => [],
    get: async () => unsupported(),
    update: async () => unsupported(),
    rotate: async () => unsupported(),
    revoke: async () => unsupported(),
    reload: async () => {},
    prepareReload: async () => ({ commit: () => {} }),
    authenticate: (rawKey: string) => (records[rawKey] as KeyRecord | undefined) ?? null,
    touch: () => {},
    flushLastUsed: async () => {},
    close: async () => void store.closed++,
  };
  return store;
}

function record(id: string, extra: Partial<Record<keyof KeyRecord, unknown>> = {}): unknown {
  return { id, name: id, prefix: 'pcl_hostkey0', hash: '0'.repeat(64), createdAt: '2026-11-01T00:00:00.000Z', revokedAt: null, rotatedAt: null, allowedAliases: null, expiresAt: null, limits: NO_LIMITS, guard: null, ...extra };
}

describe('openLibraryState with host ports', () => {
  test("host keys, usage and limiter: used by the gateway; no keys.json or usage file made; close() leaves them open", async () => {
    const keys = hostKeyStore({ 'host-key': record('key_host', { limits: { ...NO_LIMITS, requestsPerMinute: 100 } }), 'host-bad': record('key_bad', { limits: { requestsPerMinute: 0 } }), 'host-partial': record('key_partial', { limits: undefined }) });
    const usage = createHostUsageStore();
    const inner = createMemoryLimiter();
    let admits = 0;
    const limiter: Limiter = { ...inner, leaseMs: inner.leaseMs, admit: (input) => (admits++, inner.admit(input)), settle: (input) => inner.settle(input), renew: (p, n) => inner.renew(p, n), budgetUsed: (k, l, n) => inner.budgetUsed(k, l, n), close: () => inner.close() };
    const gw = await startPortsGateway({ keys, usage, limiter });
    try {
      assert.equal((await postChat(gw, 'host-key')).status, 200);
      assert.equal(logged(gw, 'request').at(-1)?.['keyId'], 'key_host');
      await gw.gateway.flushUsage();
      assert.equal((await usage.totals()).get('key_host')?.requests, 1);
      // The key has a limit: its request was admitted by the host's limiter.
      assert.equal(gw.state.limiter, limiter);
      assert.equal(admits, 1);
      assert.equal(existsSync(path.join(gw.dataDir, 'keys.json')), false);
      assert.equal(existsSync(path.join(gw.dataDir, 'usage.json')), false);

      const bad = await postChat(gw, 'host-bad');
      assert.equal(bad.status, 500);
      const line = logged(gw, 'the authenticator returned an invalid KeyPolicy; the request failed with a 500').at(-1);
      assert.deepEqual([line?.['field'], line?.['problem']], ['limits.requestsPerMinute', 'limits.requestsPerMinute must be an integer from 1 to 1000000000 (or null for no limit); got 0']);

      // A record without its limits is not read as unlimited.
      assert.equal((await postChat(gw, 'host-partial')).status, 500);
      assert.equal(logged(gw, 'the key store returned a key record without a setting; the request failed with a 500').at(-1)?.['field'], 'limits');
    } finally {
      await gw.close();
    }
    assert.equal(keys.closed, 0);
    await limiter.close();
  });

  test('nothing supplied: the data directory keys, and close() closes them', async () => {
    const gw = await startPortsGateway();
    const { key } = await gw.state.keys.create('client');
    assert.equal((await postChat(gw, key)).status, 200);
    assert.equal(existsSync(path.join(gw.dataDir, 'keys.json')), true);
    await gw.close();
    await assert.rejects(gw.state.keys.create('after'), { name: 'KeyStoreClosedError' });
  });
});

runKeyStoreContract('a host in-memory key store', async () => {
  const db = createHostKeyDatabase();
  return { open: async (clock) => openHostKeyStore(db, clock) };
});
