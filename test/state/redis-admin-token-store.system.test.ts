// The admin token store in Redis against a real redis-server, as two instances
// (two clients) use it: the shared contract, then the layout.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import type { RedisClient } from '../../src/redis/client.ts';
import { createRedisAdminTokenStore, redisAdminTokenKeys } from '../../src/state/redis-admin-token-store.ts';
import { AdminTokenFileInvalidError } from '../../src/keys/admin-token-errors.ts';
import { useRedisPair } from '../support/redis-server.ts';
import { runAdminTokenStoreContract } from './admin-token-store-contract.ts';

const T0 = Date.parse('2026-11-26T12:00:00.000Z');
const input = { name: 'ci', scopes: ['keys'], expiresAt: '2026-12-26T12:00:00.000Z', createdBy: 'sso:alice' };
let clientA: RedisClient;
let clientB: RedisClient;

useRedisPair((pair) => ({ clientA, clientB } = pair));

async function dump(client: RedisClient, prefix: string): Promise<string> {
  const keys = redisAdminTokenKeys(prefix);
  const parts = [await client.command(['HGETALL', keys.records]), await client.command(['HGETALL', keys.byHash]), await client.command(['GET', keys.version])];
  return JSON.stringify(parts);
}

// Instances alternate between the two clients, as two gateways would.
runAdminTokenStoreContract('redis', async () => {
  const prefix = `t${randomUUID().slice(0, 8)}:`;
  let opened = 0;
  return {
    open: () => createRedisAdminTokenStore(opened++ % 2 === 0 ? clientA : clientB, { keyPrefix: prefix }),
    raw: () => dump(clientA, prefix),
    cleanup: async () => {
      const keys = redisAdminTokenKeys(prefix);
      await clientA.command(['DEL', keys.records, keys.byHash, keys.version]);
    },
  };
});

test('layout: one hash field per token, an index from its SHA-256 to its id, a version counter', async () => {
  const prefix = `l${randomUUID().slice(0, 8)}:`;
  const store = createRedisAdminTokenStore(clientA, { keyPrefix: prefix });
  const keys = redisAdminTokenKeys(prefix);
  assert.deepEqual(keys, { records: `${prefix}{tokens}:records`, byHash: `${prefix}{tokens}:by-hash`, version: `${prefix}{tokens}:version` });
  const { record } = await store.create(input, T0);
  assert.deepEqual(await clientA.command(['HGETALL', keys.byHash]), [record.hash, record.id]);
  assert.deepEqual(JSON.parse(String(await clientA.command(['HGET', keys.records, record.id]))), { ...record, scopes: ['keys'] });
  assert.equal(await clientA.command(['GET', keys.version]), '1');
  await store.revoke(record.id, T0 + 1);
  assert.equal(await clientA.command(['GET', keys.version]), '2');
  // Revoking keeps the index: the token is still found, and refused as revoked.
  assert.deepEqual(await clientA.command(['HGETALL', keys.byHash]), [record.hash, record.id]);
});

test('a broken record is reported, not taken as absent', async () => {
  const prefix = `b${randomUUID().slice(0, 8)}:`;
  const store = createRedisAdminTokenStore(clientA, { keyPrefix: prefix, location: 'redis://test' });
  const { token, record } = await store.create(input, T0);
  await clientA.command(['HSET', redisAdminTokenKeys(prefix).records, record.id, '{"id":1}']);
  await assert.rejects(store.findByToken(token), (error: unknown) => error instanceof AdminTokenFileInvalidError && error.message.startsWith('Admin token store redis://test is invalid: record '));
  await assert.rejects(store.list(), AdminTokenFileInvalidError);
});
