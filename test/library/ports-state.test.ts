// openLibraryState: a host's key store, usage store and limiter take the place of
// the data directory's own, and only what is not supplied is opened there; a key
// record the host's store answers is checked before a request runs on it; close()
// leaves the host's ports open. The usage store contract runs against a host-written
// store here too.
import assert from 'node:assert/strict';
import fs, { existsSync, mkdirSync, writeFileSync, type FSWatcher } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { IssuedKey, KeyRecord, KeyStore } from '../../src/api/keys.ts';
import type { Limiter } from '../../src/api/limits.ts';
import { checkedKeyStore, openLibraryState } from '../../src/library/compose-state.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
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
}, { exactMessages: true });

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

describe('openLibraryState refusing to start', () => {
  const demoConfig = (dataDir: string) =>
    parseConfig({ dataDir, providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo' } } }, null, dataDir);
  const quiet = { logger: createLogger({ write: () => {} }), env: {} };

  test('an unreadable budgets.json: rejects, and the key store opened before it is closed (its fs.watch stopped)', async () => {
    const dataDir = freshPath(root, 'broken-budgets');
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(path.join(dataDir, 'budgets.json'), '{ this is not json');
    // fs.watch as every module sees it, counting the watchers still open.
    const open = new Set<FSWatcher>();
    let made = 0;
    const realWatch = fs.watch;
    fs.watch = ((...args: Parameters<typeof fs.watch>) => {
      const watcher = realWatch(...args);
      made++;
      open.add(watcher);
      // Counted when close() is called: the 'close' event comes a tick later.
      const close = watcher.close.bind(watcher);
      watcher.close = () => (open.delete(watcher), close());
      return watcher;
    }) as typeof fs.watch;
    syncBuiltinESMExports();
    try {
      await assert.rejects(openLibraryState(demoConfig(dataDir), {}, quiet), { name: 'BudgetJournalError' });
      assert.deepEqual([made, open.size], [1, 0]);
    } finally {
      for (const watcher of open) watcher.close();
      fs.watch = realWatch;
      syncBuiltinESMExports();
    }
  });

  for (const [leaseMs, shown] of [[0, '0'], [Number.NaN, 'NaN'], [undefined, 'undefined'], [999, '999'], [1500.5, '1500.5'], ['60000', 'string']] as const) {
    test(`a host limiter with leaseMs ${shown}: a TypeError naming limiter.leaseMs, nothing opened`, async () => {
      const dataDir = freshPath(root, 'lease');
      const limiter = { ...createMemoryLimiter(), leaseMs } as unknown as Limiter;
      await assert.rejects(openLibraryState(demoConfig(dataDir), { limiter }, quiet), {
        name: 'TypeError',
        message: `the host's limiter.leaseMs must be a whole number of milliseconds, at least 1000 (the gateway renews permits every leaseMs / 3); it is ${shown}`,
      });
      assert.equal(existsSync(path.join(dataDir, 'keys.json')), false);
    });
  }

  test('a host limiter with leaseMs 1000: taken', async () => {
    const dataDir = freshPath(root, 'lease-ok');
    const limiter = { ...createMemoryLimiter(), leaseMs: 1000 } as unknown as Limiter;
    const state = await openLibraryState(demoConfig(dataDir), { limiter }, quiet);
    assert.equal(state.limiter.leaseMs, 1000);
    await state.close();
  });
});
