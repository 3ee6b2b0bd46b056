// The Redis usage store against a real redis-server: the shared usage store contract,
// a check against the file store (the same flushes must give the same series and
// totals), then what only Redis has.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createRedisClient, type RedisClient } from '../../src/redis/client.ts';
import { createFileUsageStore } from '../../src/state/file-usage-store.ts';
import { bucketTtlMs, createRedisUsageStore, redisUsageIdsKey, redisUsageKeys } from '../../src/state/redis-usage-store.ts';
import type { KeyUsage, PendingUsage } from '../../src/usage/usage-ledger.ts';
import { sharedRedis, type SharedRedis } from '../support/redis-server.ts';
import { tempDir } from '../support/temp-dir.ts';
import { runUsageStoreContract } from '../../src/testing/usage-store-contract.ts';

const HOUR = 3_600_000;
const NOW = Date.UTC(2026, 10, 22, 12, 30);
const u = (requests: number, promptTokens = 0, completionTokens = 0, cachedTokens = 0, errors = 0, costNanos = 0, guardBlocked = 0, guardMasked = 0, guardLogged = 0): KeyUsage => ({ requests, promptTokens, completionTokens, cachedTokens, errors, costNanos, guardBlocked, guardMasked, guardLogged });

let server: SharedRedis;
let client: RedisClient;

before(async () => {
  server = await sharedRedis();
  client = createRedisClient({ host: '127.0.0.1', port: server.port, db: server.db });
});

after(async () => {
  await client.close();
});

// The client is created in before(), after this registration runs; the store is made per case.
runUsageStoreContract('redis', () => createRedisUsageStore(client, { keyPrefix: `c${randomUUID().slice(0, 8)}:` }));

function pending(entries: [string, number, KeyUsage][]): PendingUsage {
  const out: PendingUsage = new Map();
  for (const [keyId, hourMs, usage] of entries) {
    const hours = out.get(keyId) ?? new Map<number, KeyUsage>();
    hours.set(hourMs, usage);
    out.set(keyId, hours);
  }
  return out;
}

test('series and totals match the file store for the same flushes', async () => {
  const prefix = `u${randomUUID().slice(0, 8)}:`;
  const redis = createRedisUsageStore(client, { keyPrefix: prefix });
  const dir = tempDir('usage-parity');
  const file = createFileUsageStore(dir);
  const hour = Date.UTC(2026, 10, 22, 12);
  const flushes = [
    pending([['key_a', hour, u(3, 100, 50, 10, 1, 0, 1, 0, 2)], ['key_a', hour - HOUR, u(1, 7, 8)], ['key_b', hour - 26 * HOUR, u(2, 20, 0, 0, 2, 0, 0, 3, 0)]]),
    pending([['key_a', hour, u(1, 1, 1, 1, 0)], ['key_a', hour - 3 * 24 * HOUR, u(5, 5, 5, 0, 0, 0, 0, 0, 1)]]),
  ];
  for (const flush of flushes) {
    await redis.add(flush, NOW);
    await file.add(flush, NOW);
  }
  for (const keyId of ['key_a', 'key_b', 'key_never']) {
    for (const granularity of ['hour', 'day'] as const) {
      assert.deepEqual(await redis.series(keyId, granularity, NOW), await file.series(keyId, granularity, NOW), `${keyId} ${granularity}`);
    }
  }
  assert.deepEqual(await redis.totals(), await file.totals());
  assert.deepEqual(await redis.totals(), new Map([['key_a', u(10, 113, 64, 11, 1, 0, 1, 0, 3)], ['key_b', u(2, 20, 0, 0, 2, 0, 0, 3, 0)]]));
  for (const granularity of ['hour', 'day'] as const) {
    assert.deepEqual(await redis.periodTotals(granularity, NOW), await file.periodTotals(granularity, NOW), granularity);
  }
  const series = await redis.series('key_a', 'hour', NOW);
  assert.equal(series.buckets.length, 48);
  assert.deepEqual(series.buckets.at(-1), { start: '2026-11-22T12:00:00.000Z', ...u(4, 101, 51, 11, 1, 0, 1, 0, 2) });
  // A field that is 0 is not written: the hour without findings has no guard fields.
  assert.deepEqual(await client.command(['HGETALL', redisUsageKeys(prefix, 'key_a').bucket('hour', '2026-11-22T11')]), ['requests', '1', 'promptTokens', '7', 'completionTokens', '8']);
});

test('buckets expire when they leave retention; older pending hours count in the totals only', async () => {
  const prefix = `u${randomUUID().slice(0, 8)}:`;
  const redis = createRedisUsageStore(client, { keyPrefix: prefix });
  const old = Date.UTC(2026, 10, 14, 12); // 8 days before NOW: past the hour retention (7 days)
  const hour = Date.UTC(2026, 10, 22, 12);
  await redis.add(pending([['key_x', old, u(1)], ['key_x', hour, u(2)]]), NOW);
  const keys = redisUsageKeys(prefix, 'key_x');
  assert.equal(await client.command(['EXISTS', keys.bucket('hour', '2026-11-14T12')]), 0);
  assert.equal(await client.command(['HGET', keys.bucket('day', '2026-11-14'), 'requests']), '1');
  assert.equal(await client.command(['HGET', keys.total, 'requests']), '3');
  assert.equal(await client.command(['PTTL', keys.total]), -1);
  const hourTtl = (await client.command(['PTTL', keys.bucket('hour', '2026-11-22T12')])) as number;
  // 168 hours from 12:00, seen at 12:30: 167.5 hours (less the few ms the test took).
  assert.ok(hourTtl <= 167.5 * HOUR && hourTtl > 167.5 * HOUR - 60_000, String(hourTtl));
  assert.equal(bucketTtlMs(hour, 'hour', NOW), 167.5 * HOUR);
  assert.equal(bucketTtlMs(Date.UTC(2026, 10, 22), 'day', NOW), 400 * 24 * HOUR - 12.5 * HOUR);
  assert.deepEqual(await client.command(['SMEMBERS', redisUsageIdsKey(prefix)]), ['key_x']);
});

test('a flush that is refused adds nothing; one that ran is never reported as failed', async () => {
  const prefix = `u${randomUUID().slice(0, 8)}:`;
  const errors: Error[] = [];
  const redis = createRedisUsageStore(client, { keyPrefix: prefix, onError: (error) => errors.push(error) });
  const hour = Date.UTC(2026, 10, 22, 12);
  // key_bad's total is a string, so its HINCRBY fails inside the script, after key_ok's ran.
  const bad = redisUsageKeys(prefix, 'key_bad').total;
  await client.command(['SET', bad, 'x']);
  await redis.add(pending([['key_ok', hour, u(1)], ['key_bad', hour, u(1)]]), NOW);
  assert.equal(await client.command(['HGET', redisUsageKeys(prefix, 'key_ok').total, 'requests']), '1');
  assert.equal(errors.length, 1);
  assert.equal(errors[0]?.message, `1 of 12 usage updates failed and were dropped (HINCRBY ${bad}: WRONGTYPE Operation against a key holding the wrong kind of value).`);

  // A user whose ACL refuses scripts: the flush is refused whole, and flushing again
  // (as the gateway does after restoring its counters) still adds nothing twice.
  const user = `noscript${randomUUID().slice(0, 6)}`;
  await client.command(['ACL', 'SETUSER', user, 'on', '>pw-for-test', '~*', '+@all', '-eval', '-evalsha']);
  const limited = createRedisClient({ host: '127.0.0.1', port: server.port, db: server.db, username: user, password: 'pw-for-test' });
  try {
    const refused = createRedisUsageStore(limited, { keyPrefix: prefix });
    for (let i = 0; i < 3; i++) await assert.rejects(refused.add(pending([['key_ok', hour, u(5)]]), NOW), { name: 'RedisReplyError', code: 'NOPERM' });
    assert.equal(await client.command(['HGET', redisUsageKeys(prefix, 'key_ok').total, 'requests']), '1');
  } finally {
    await limited.close();
    await client.command(['ACL', 'DELUSER', user]);
  }

  // A closed connection: nothing is sent, nothing added.
  const closed = createRedisClient({ host: '127.0.0.1', port: server.port, db: server.db });
  await closed.close();
  const unreachable = createRedisUsageStore(closed, { keyPrefix: prefix });
  await assert.rejects(unreachable.add(pending([['key_ok', hour, u(5)]]), NOW), { name: 'RedisUnavailableError' });
  assert.equal(await client.command(['HGET', redisUsageKeys(prefix, 'key_ok').total, 'requests']), '1');
});

test('hashes written before cost and the guard findings were recorded read them as 0 and gain them at the next flush', async () => {
  const prefix = `u${randomUUID().slice(0, 8)}:`;
  const redis = createRedisUsageStore(client, { keyPrefix: prefix });
  const keys = redisUsageKeys(prefix, 'key_old');
  const fields = ['requests', '4', 'promptTokens', '40', 'completionTokens', '20', 'cachedTokens', '0', 'errors', '1'];
  await client.command(['HSET', keys.total, ...fields]);
  await client.command(['HSET', keys.bucket('hour', '2026-11-22T12'), ...fields]);
  await client.command(['SADD', redisUsageIdsKey(prefix), 'key_old']);
  assert.deepEqual(await redis.totals(), new Map([['key_old', u(4, 40, 20, 0, 1, 0)]]));
  assert.deepEqual((await redis.series('key_old', 'hour', NOW)).buckets.at(-1), { start: '2026-11-22T12:00:00.000Z', ...u(4, 40, 20, 0, 1, 0) });
  await redis.add(pending([['key_old', Date.UTC(2026, 10, 22, 12), u(1, 0, 0, 0, 0, 9_007_199_254, 2, 0, 5)]]), NOW);
  assert.deepEqual(await redis.totals(), new Map([['key_old', u(5, 40, 20, 0, 1, 9_007_199_254, 2, 0, 5)]]));
  assert.equal(await client.command(['HGET', keys.bucket('hour', '2026-11-22T12'), 'costNanos']), '9007199254');
  assert.equal(await client.command(['HGET', keys.bucket('day', '2026-11-22'), 'costNanos']), '9007199254');
  assert.deepEqual(await client.command(['HMGET', keys.bucket('hour', '2026-11-22T12'), 'guardBlocked', 'guardMasked', 'guardLogged']), ['2', null, '5']);
  assert.deepEqual(await client.command(['HMGET', keys.bucket('day', '2026-11-22'), 'guardBlocked', 'guardMasked', 'guardLogged']), ['2', null, '5']);
  assert.deepEqual(await redis.periodTotals('hour', NOW), new Map([['key_old', u(5, 40, 20, 0, 1, 9_007_199_254, 2, 0, 5)]]));
});

test('stored usage that is not ours is an error naming the key, never silently zero', async () => {
  const prefix = `u${randomUUID().slice(0, 8)}:`;
  const redis = createRedisUsageStore(client, { keyPrefix: prefix });
  await client.command(['HSET', redisUsageKeys(prefix, 'key_z').total, 'requests', '-4']);
  await client.command(['SADD', redisUsageIdsKey(prefix), 'key_z']);
  await assert.rejects(redis.series('key_z', 'day', NOW), { code: 'usage_store_invalid', message: new RegExp(`${prefix}\\{key_z\\}:usage:total`) });
  await assert.rejects(redis.totals(), { code: 'usage_store_invalid' });
  await client.command(['HSET', redisUsageKeys(prefix, 'key_z').total, 'requests', '4', 'bogus', '1']);
  await assert.rejects(redis.totals(), { code: 'usage_store_invalid' });
  await client.command(['DEL', redisUsageKeys(prefix, 'key_z').total]);
  await client.command(['HSET', redisUsageKeys(prefix, 'key_z').total, 'requests', '4', 'guardLogged', '0.5']);
  await assert.rejects(redis.totals(), { code: 'usage_store_invalid', message: /guardBlocked, guardMasked, guardLogged as non-negative integers/ });
  await assert.rejects(redis.periodTotals('hour', NOW), { code: 'usage_store_invalid' });
});
