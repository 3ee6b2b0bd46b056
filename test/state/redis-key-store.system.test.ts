// The Redis key store against a real redis-server, as two instances (two clients,
// two stores) would use it: the shared key store contract, then what only Redis has.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { hashApiKey } from '../../src/keys/api-key.ts';
import type { KeyStore } from '../../src/state/key-store-port.ts';
import { createRedisClient, type RedisClient } from '../../src/redis/client.ts';
import { parseStoredRecord, recordJson, redisKeyStoreKeys } from '../../src/state/redis-key-layout.ts';
import { openRedisKeyStore, type RedisKeyStoreOptions } from '../../src/state/redis-key-store.ts';
import { eventually } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { sharedRedis, startRedisServer } from '../support/redis-server.ts';
import { runKeyStoreContract } from '../../src/testing/key-store-contract.ts';

const NOW = new Date('2026-11-22T12:00:00.000Z');
const clock = (): Date => NOW;

let clientA: RedisClient;
let clientB: RedisClient;
const opened: KeyStore[] = [];

before(async () => {
  const redis = await sharedRedis();
  clientA = createRedisClient({ host: '127.0.0.1', port: redis.port, db: redis.db });
  clientB = createRedisClient({ host: '127.0.0.1', port: redis.port, db: redis.db });
});

after(async () => {
  for (const store of opened) await store.close();
  await clientA.close();
  await clientB.close();
});

// The clients are created in before(), after this registration runs; the storage is made per case.
// Instances alternate between the two clients, as two gateways would.
runKeyStoreContract('redis', async () => {
  const prefix = `c${randomUUID().slice(0, 8)}:`;
  let opened = 0;
  return { open: (clock) => openRedisKeyStore(opened++ % 2 === 0 ? clientA : clientB, { keyPrefix: prefix, clock, reloadIntervalMs: 3_600_000 }) };
}, { exactMessages: true });

/** Two stores (instances A and B) on one fresh prefix. The poll interval is long: tests refresh with reload(). */
async function pair(options: Partial<RedisKeyStoreOptions> = {}): Promise<{ a: KeyStore; b: KeyStore; prefix: string }> {
  const prefix = `t${randomUUID().slice(0, 8)}:`;
  const a = await openRedisKeyStore(clientA, { keyPrefix: prefix, clock, reloadIntervalMs: 3_600_000, ...options });
  const b = await openRedisKeyStore(clientB, { keyPrefix: prefix, clock, reloadIntervalMs: 3_600_000, ...options });
  opened.push(a, b);
  return { a, b, prefix };
}

test('a key created on A authenticates on A at once and on B after its refresh', async () => {
  const { a, b } = await pair();
  const { key, record } = await a.create('ci', { limits: { requestsPerMinute: 5 } });
  assert.deepEqual(a.authenticate(key), record);
  assert.equal(b.authenticate(key), null);
  await b.reload();
  assert.deepEqual(b.authenticate(key), record);
  assert.deepEqual(record.limits, { requestsPerMinute: 5, tokensPerMinute: null, concurrentRequests: null, tokenBudget: null, costBudget: null });
  assert.equal(record.createdAt, NOW.toISOString());
});

test('prepareReload reads without serving; commit swaps in, never back to an older version', async () => {
  const { a, b } = await pair();
  const first = await a.create('first');
  const prepared = await b.prepareReload();
  assert.equal(b.authenticate(first.key), null, 'read, not yet served');
  const second = await a.create('second');
  await b.reload();
  assert.equal(b.authenticate(second.key)?.name, 'second');
  // The prepared snapshot is older than what B serves now: committing it changes nothing.
  prepared.commit();
  assert.equal(b.authenticate(second.key)?.name, 'second');
  const fresh = await b.prepareReload();
  fresh.commit();
  assert.equal(b.authenticate(first.key)?.name, 'first');
});

test('the poll picks up changes by itself, every reloadIntervalMs', async () => {
  const scheduler = new ManualScheduler();
  const { a, b } = await pair({ reloadIntervalMs: 20, scheduler });
  assert.deepEqual(scheduler.pending(), [20, 20], 'one poll per store');
  const { key, record } = await a.create('polled');
  // A's own write refreshed A; B has not polled yet.
  assert.notEqual(a.authenticate(key), null);
  await scheduler.advance(19);
  assert.equal(b.authenticate(key), null);
  await scheduler.advance(1);
  await eventually(() => b.authenticate(key) !== null, 'B to see the key after its poll');
  await a.revoke(record.id);
  await scheduler.advance(20);
  await eventually(() => b.authenticate(key) === null, 'B to see the revoke after its next poll');
  await b.close();
  assert.deepEqual(scheduler.pending(), [20], 'a closed store polls no more');
});

test('revoke on A is refused on B; a second revoke is KeyAlreadyRevokedError', async () => {
  const { a, b } = await pair();
  const { key, record } = await a.create('to-revoke');
  await b.reload();
  assert.notEqual(b.authenticate(key), null);
  const revoked = await a.revoke(record.id);
  assert.equal(revoked.revokedAt, NOW.toISOString());
  assert.equal(a.authenticate(key), null);
  await b.reload();
  assert.equal(b.authenticate(key), null);
  await assert.rejects(b.revoke(record.id), { code: 'key_already_revoked' });
  await assert.rejects(b.rotate(record.id), { code: 'key_revoked' });
  await assert.rejects(b.update(record.id, { name: 'x' }), { code: 'key_revoked' });
});

test('rotate: the old secret stops working everywhere, the new one works, id and settings stay', async () => {
  const { a, b, prefix } = await pair();
  const first = await a.create('rotating', { allowedAliases: ['fast'] });
  await b.reload();
  const second = await b.rotate(first.record.id);
  assert.equal(second.record.id, first.record.id);
  assert.deepEqual(second.record.allowedAliases, ['fast']);
  assert.equal(second.record.rotatedAt, NOW.toISOString());
  assert.notEqual(second.key, first.key);
  assert.equal(b.authenticate(first.key), null);
  assert.deepEqual(b.authenticate(second.key), second.record);
  await a.reload();
  assert.equal(a.authenticate(first.key), null);
  assert.deepEqual(a.authenticate(second.key), second.record);
  // The hash index follows: the old hash is gone, the new one points at the id.
  const keys = redisKeyStoreKeys(prefix);
  assert.deepEqual(await clientA.command(['HGETALL', keys.byHash]), [hashApiKey(second.key), first.record.id]);
});

test('update: checked like the file store; concurrent updates from A and B both land', async () => {
  const { a, b, prefix } = await pair();
  const { record } = await a.create('shared');
  await assert.rejects(a.update(record.id, { limits: { tokensPerMinutes: 5 } }), { code: 'invalid_key_setting', param: 'limits.tokensPerMinutes' });
  await assert.rejects(a.update('key_0000000000000000', { name: 'x' }), { code: 'key_not_found' });
  const updates = [];
  for (let i = 0; i < 10; i++) {
    updates.push(a.update(record.id, { name: `name-${i}` }));
    updates.push(b.update(record.id, { limits: { requestsPerMinute: i + 1 } }));
  }
  await Promise.all(updates);
  const stored = await b.get(record.id);
  assert.match(stored.name, /^name-\d$/);
  assert.equal(typeof stored.limits.requestsPerMinute, 'number');

  // Two admins changing different fields of the same keys at the same moment: both changes stay.
  const many = await Promise.all(Array.from({ length: 10 }, (_, i) => a.create(`pair-${i}`)));
  await Promise.all(many.flatMap(({ record: r }) => [a.update(r.id, { name: `renamed-${r.id}` }), b.update(r.id, { limits: { concurrentRequests: 3 } })]));
  for (const { record: r } of many) {
    const after = await a.get(r.id);
    assert.deepEqual([after.name, after.limits.concurrentRequests], [`renamed-${r.id}`, 3]);
  }
  // Every write landed once: 1 + 20 (one key) + 10 creates + 20 updates.
  assert.equal(await clientA.command(['GET', redisKeyStoreKeys(prefix).version]), '51');
});

test('concurrent creates on two instances lose nothing; list is in creation order with last use', async () => {
  const { a, b, prefix } = await pair();
  const created = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).create(`k${i}`)));
  const listed = await a.list();
  assert.equal(listed.length, 40);
  assert.deepEqual(new Set(listed.map((k) => k.id)), new Set(created.map((c) => c.record.id)));
  assert.equal(await clientA.command(['GET', redisKeyStoreKeys(prefix).version]), '40');
  await b.reload();
  for (const { key, record } of created) assert.deepEqual(b.authenticate(key), record);

  const first = created[0]?.record.id as string;
  b.touch(first);
  await b.flushLastUsed();
  assert.equal((await a.get(first)).lastUsedAt, NOW.toISOString());
  assert.equal((await a.get(created[1]?.record.id as string)).lastUsedAt, null);
});

test('last-used times: the later one wins, whichever instance flushes last', async () => {
  let nowA = new Date('2026-11-22T12:00:05.000Z');
  const nowB = new Date('2026-11-22T12:00:01.000Z');
  const prefix = `t${randomUUID().slice(0, 8)}:`;
  const a = await openRedisKeyStore(clientA, { keyPrefix: prefix, clock: () => nowA, reloadIntervalMs: 3_600_000 });
  const b = await openRedisKeyStore(clientB, { keyPrefix: prefix, clock: () => nowB, reloadIntervalMs: 3_600_000 });
  opened.push(a, b);
  const { record } = await a.create('used');
  await b.reload();
  a.touch(record.id);
  await a.flushLastUsed();
  b.touch(record.id);
  await b.flushLastUsed();
  assert.equal((await b.get(record.id)).lastUsedAt, '2026-11-22T12:00:05.000Z');
  nowA = new Date('2026-11-22T12:00:09.000Z');
  a.touch(record.id);
  await a.close(); // close flushes
  assert.equal((await b.get(record.id)).lastUsedAt, '2026-11-22T12:00:09.000Z');
  // Unknown ids are not recorded.
  b.touch('key_0000000000000000');
  await b.flushLastUsed();
  assert.deepEqual(await clientA.command(['HKEYS', redisKeyStoreKeys(prefix).lastUsed]), [record.id]);
});

test('records in Redis hold the hash, never the raw key, in the keys.json record format', async () => {
  const { a, prefix } = await pair();
  const { key, record } = await a.create('secret', { expiresAt: '2027-01-01T00:00:00Z' });
  const keys = redisKeyStoreKeys(prefix);
  const dump = JSON.stringify(await clientA.command(['HGETALL', keys.records])) + JSON.stringify(await clientA.command(['HGETALL', keys.byHash]));
  assert.equal(dump.includes(key), false);
  assert.equal(dump.includes(key.slice(4, 30)), false);
  const json = (await clientA.command(['HGET', keys.records, record.id])) as string;
  assert.equal(json, recordJson(record));
  assert.deepEqual(JSON.parse(json), {
    id: record.id, name: 'secret', prefix: key.slice(0, 12), hash: hashApiKey(key), createdAt: NOW.toISOString(),
    revokedAt: null, rotatedAt: null, expiresAt: '2027-01-01T00:00:00.000Z', allowedAliases: null,
    // costBudget is written only when set.
    limits: { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null, tokenBudget: null },
  });
});

test('a broken record is refused as strictly as keys.json; the mirror keeps the last good keys', async () => {
  const errors: Error[] = [];
  const { a, b, prefix } = await pair({ onError: (error) => errors.push(error) });
  const { key, record } = await a.create('good');
  await b.reload();
  const keys = redisKeyStoreKeys(prefix);
  const broken = JSON.stringify({ ...JSON.parse(recordJson(record)), limits: { requestsPerMinutes: 5 } });
  await clientA.command(['HSET', keys.records, record.id, broken]);
  await clientA.command(['INCR', keys.version]);
  await assert.rejects(b.reload(), (error: Error & { code?: string }) => {
    assert.equal(error.code, 'key_file_invalid');
    assert.match(error.message, new RegExp(`record ${record.id}: .*requestsPerMinutes`));
    return true;
  });
  assert.deepEqual(b.authenticate(key), record);
  await assert.rejects(openRedisKeyStore(clientB, { keyPrefix: prefix }), { code: 'key_file_invalid' });

  assert.throws(() => parseStoredRecord('key_AAAAAAAAAAAAAAAA', '{', 'here'), /record key_AAAAAAAAAAAAAAAA: is not valid JSON/);
  assert.throws(() => parseStoredRecord('key_AAAAAAAAAAAAAAAA', recordJson(record), 'here'), /holds/);
  assert.throws(() => parseStoredRecord(record.id, JSON.stringify({ ...JSON.parse(recordJson(record)), raw: key }), 'here'), /unknown field "raw"/);
});

test('Redis down: authenticate keeps serving the mirror, onError hears once, writes fail as KeyStoreIoError', async () => {
  const local = await startRedisServer();
  const client = createRedisClient({ host: '127.0.0.1', port: local.port, connectTimeoutMs: 500, commandTimeoutMs: 500, reconnect: { baseDelayMs: 10, maxDelayMs: 50 } });
  const errors: Error[] = [];
  const scheduler = new ManualScheduler();
  const store = await openRedisKeyStore(client, { keyPrefix: 'down:', reloadIntervalMs: 10, scheduler, onError: (error) => errors.push(error) });
  try {
    const { key, record } = await store.create('survivor');
    await local.stop();
    await eventually(() => client.state === 'reconnecting', 'the client to notice');
    // While Redis is away a poll fails at once (the client fails fast): the first is reported, the next ten are not.
    await scheduler.advance(10);
    assert.equal(errors.length, 1);
    for (let poll = 0; poll < 10; poll++) await scheduler.advance(10);
    assert.equal(errors.length, 1);
    assert.equal(errors[0]?.name, 'RedisUnavailableError');
    assert.deepEqual(store.authenticate(key), record);
    await assert.rejects(store.create('lost'), { code: 'key_store_io_error' });
    await assert.rejects(store.reload(), { code: 'key_store_io_error' });
    await local.restart();
    await eventually(() => client.state === 'ready', 'the client to reconnect');
    // A fresh Redis (no persistence) holds no keys: the next poll says so.
    assert.deepEqual(store.authenticate(key), record);
    await scheduler.advance(10);
    await eventually(() => store.authenticate(key) === null, 'the poll after the restart');
  } finally {
    await store.close();
    await client.close();
    await local.stop();
  }
});
