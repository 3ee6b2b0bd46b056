// The Redis response store against a real redis-server: the shared contract, then its
// layout (a TTL on each record, the index and the byte count kept in step) and the
// backend that opens it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createRedisClient, type RedisClient } from '../../src/redis/client.ts';
import { recordJson } from '../../src/state/response-store-port.ts';
import { createRedisResponseStore, redisResponseKeys } from '../../src/state/redis-response-store.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { sharedRedis, startRedisServer, type SharedRedis } from '../support/redis-server.ts';
import { eventually } from '../support/eventually.ts';
import { createLogger } from '../../src/log/logger.ts';
import { openRedisBackend } from '../../src/state/redis-backend.ts';
import { StateUnavailableError } from '../../src/state/errors.ts';
import { DEFAULT_TEST_LIMITS, runResponseStoreContract, turn } from './response-store-contract.ts';

let server: SharedRedis;
let client: RedisClient;

before(async () => {
  server = await sharedRedis();
  client = createRedisClient({ host: '127.0.0.1', port: server.port, db: server.db });
});

after(async () => {
  await client.close();
});

const prefix = (): string => `r${randomUUID().slice(0, 8)}:`;

runResponseStoreContract('redis', (scheduler, limits) => Promise.resolve(createRedisResponseStore(client, { keyPrefix: prefix(), scheduler, limits })));

test('a record is a hash with its owner and a TTL of what is left of it; the index and the byte count follow puts and deletes', async () => {
  const keyPrefix = prefix();
  const keys = redisResponseKeys(keyPrefix);
  const scheduler = new ManualScheduler();
  const store = createRedisResponseStore(client, { keyPrefix, scheduler, limits: DEFAULT_TEST_LIMITS });
  const record = turn(scheduler, 'resp_l1', 'key_a', 'one');
  const { json, bytes } = recordJson(record);
  await store.put(record);
  assert.equal(keys.record('resp_l1'), `${keyPrefix}{responses}:r:resp_l1`);
  assert.deepEqual(await client.command(['HMGET', keys.record('resp_l1'), 'keyId', 'record']), ['key_a', json]);
  assert.equal(await client.command(['HLEN', keys.record('resp_l1')]), 2);
  const ttl = Number(await client.command(['PTTL', keys.record('resp_l1')]));
  assert.ok(ttl > 55_000 && ttl <= 60_000, `PTTL ${ttl}`);
  assert.deepEqual(await client.command(['ZRANGE', keys.expiry, '0', '-1', 'WITHSCORES']), ['resp_l1', String(record.expiresAt)]);
  assert.equal(await client.command(['GET', keys.total]), String(bytes));
  assert.equal(await store.delete('resp_l1', 'key_a'), true);
  assert.equal(await client.command(['EXISTS', keys.record('resp_l1')]), 0);
  assert.deepEqual(await client.command(['ZRANGE', keys.expiry, '0', '-1']), []);
  assert.deepEqual(await client.command(['HGETALL', keys.bytes]), []);
  assert.equal(await client.command(['GET', keys.total]), '0');
});

test('a put after a deadline removes the expired records from the index and the count, oldest first', async () => {
  const keyPrefix = prefix();
  const keys = redisResponseKeys(keyPrefix);
  const scheduler = new ManualScheduler();
  const store = createRedisResponseStore(client, { keyPrefix, scheduler, limits: DEFAULT_TEST_LIMITS });
  await store.put(turn(scheduler, 'resp_o1', 'key_a', 'one'));
  await scheduler.advance(1);
  await store.put(turn(scheduler, 'resp_o2', 'key_a', 'two'));
  await scheduler.advance(60_000);
  const last = turn(scheduler, 'resp_o3', 'key_a', 'three');
  await store.put(last);
  assert.deepEqual(await client.command(['ZRANGE', keys.expiry, '0', '-1']), ['resp_o3']);
  assert.deepEqual(await client.command(['HKEYS', keys.bytes]), ['resp_o3']);
  assert.equal(await client.command(['GET', keys.total]), String(recordJson(last).bytes));
});

test('the Redis backend opens the store under its keyPrefix; Redis away is 503 state_unavailable, and the store works again after', async () => {
  const own = await startRedisServer();
  const keyPrefix = prefix();
  const backend = await openRedisBackend(
    { url: own.url, passwordEnv: null, passwordFile: null, keyPrefix, connectTimeoutMs: 500, commandTimeoutMs: 500, tls: null },
    { onUnavailable: 'refuse', logger: createLogger({ level: 'error', write: () => {} }), reconnect: { baseDelayMs: 10, maxDelayMs: 50 }, env: {} },
  );
  const probe = createRedisClient({ host: '127.0.0.1', port: own.port });
  try {
    const scheduler = new ManualScheduler();
    const store = await backend.openResponseStore(DEFAULT_TEST_LIMITS, scheduler, () => {});
    const record = turn(scheduler, 'resp_b1', 'key_a', 'one');
    await store.put(record);
    assert.equal(await probe.command(['HGET', `${keyPrefix}{responses}:r:resp_b1`, 'keyId']), 'key_a');

    await own.stop();
    await eventually(() => backend.health() === 'unavailable', 'the backend unavailable');
    for (const attempt of [store.get('resp_b1', 'key_a'), store.put(turn(scheduler, 'resp_b2', 'key_a', 'two')), store.delete('resp_b1', 'key_a')]) {
      await assert.rejects(attempt, (error: unknown) => {
        assert.ok(error instanceof StateUnavailableError);
        assert.deepEqual([error.status, error.code], [503, 'state_unavailable']);
        return true;
      });
    }
    await own.restart();
    await eventually(() => backend.health() === 'ok', 'the backend healthy again');
    // No persistence in tests: the restarted Redis is empty.
    assert.equal(await store.get('resp_b1', 'key_a'), null);
    await store.put(record);
    assert.deepEqual(await store.get('resp_b1', 'key_a'), record);
  } finally {
    await probe.close();
    await backend.close();
    await own.stop();
  }
});
