// The Redis limiter against a real redis-server: the shared scenario table, the
// atomicity of one limit shared by two clients, TTLs and the key layout.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { NO_LIMITS, type KeyLimits } from '../../src/limits/key-limits.ts';
import { LimiterClosedError, type Limiter } from '../../src/limits/limiter.ts';
import { createRedisLimiter, redisLimiterKeys } from '../../src/limits/redis-limiter.ts';
import { createRedisClient, type RedisClient } from '../../src/redis/client.ts';
import { startRedisServer, type RedisServerHandle } from '../redis/redis-server.ts';
import { runLimiterScenarios } from './limiter-scenarios.ts';

const PREFIX = 'test:';
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const limits = (set: Partial<KeyLimits>): KeyLimits => ({ ...NO_LIMITS, ...set });

let server: RedisServerHandle;
let clientA: RedisClient;
let clientB: RedisClient;

before(async () => {
  server = await startRedisServer();
  clientA = createRedisClient({ host: '127.0.0.1', port: server.port });
  clientB = createRedisClient({ host: '127.0.0.1', port: server.port });
});

after(async () => {
  await clientA.close();
  await clientB.close();
  await server.stop();
});

// The client is created in before(), after this registration runs; the factory is called per scenario.
runLimiterScenarios('redis', () => createRedisLimiter(clientA, { keyPrefix: PREFIX }));

describe('redis limiter', () => {
  const keyId = (): string => `key_${randomUUID().slice(0, 12)}`;

  test('two instances share one limit atomically: 50 parallel admits, limit 10 -> exactly 10', async () => {
    const a = createRedisLimiter(clientA, { keyPrefix: PREFIX });
    const b = createRedisLimiter(clientB, { keyPrefix: PREFIX });
    for (const l of [limits({ requestsPerMinute: 10 }), limits({ concurrentRequests: 10 }), limits({ tokensPerMinute: 1000 })]) {
      const id = keyId();
      const decisions = await Promise.all(
        Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? a : b).admit({ keyId: id, limits: l, estimatedTokens: 100, nowMs: T0 })),
      );
      assert.equal(decisions.filter((d) => d.allowed).length, 10, JSON.stringify(l));
    }
    await a.close();
    await b.close();
  });

  test('a budget spent through one instance is refused by the other', async () => {
    const a = createRedisLimiter(clientA, { keyPrefix: PREFIX });
    const b = createRedisLimiter(clientB, { keyPrefix: PREFIX });
    const id = keyId();
    const l = limits({ tokenBudget: { tokens: 100, period: 'day' } });
    const decision = await a.admit({ keyId: id, limits: l, estimatedTokens: 10, nowMs: T0 });
    assert.ok(decision.allowed);
    await a.settle({ permit: decision.permit, limits: l, actualTokens: 150, nowMs: T0 });
    const refused = await b.admit({ keyId: id, limits: l, estimatedTokens: 1, nowMs: T0 });
    assert.deepEqual(refused, {
      allowed: false, refusal: 'budget', retryAfterMs: 43_200_000, snapshot: {},
      budget: { tokens: 100, used: 150, period: 'day', resetsAt: '2026-11-23T00:00:00.000Z' },
    });
    assert.equal(await b.budgetUsed(id, l, T0), 150);
  });

  test('key layout: one hash tag per key, values exact, TTLs set on every key', async () => {
    const limiter = createRedisLimiter(clientA, { keyPrefix: PREFIX, leaseMs: 30_000 });
    const id = keyId();
    const l = limits({ requestsPerMinute: 7, tokensPerMinute: 1_000_000_000, concurrentRequests: 3, tokenBudget: { tokens: 10, period: 'month' } });
    const decision = await limiter.admit({ keyId: id, limits: l, estimatedTokens: 123_456_789, nowMs: T0 });
    assert.ok(decision.allowed);
    const keys = redisLimiterKeys(PREFIX, id);
    assert.equal(keys.requests, `test:{${id}}:rpm`);
    assert.deepEqual(await clientA.command(['HGETALL', keys.requests]), ['level', String(6 * 60_000), 'last', String(T0)]);
    // 1e9 * 60000 - 123456789 * 60000 = 52592592660000.
    assert.deepEqual(await clientA.command(['HGETALL', keys.tokens]), ['level', '52592592660000', 'last', String(T0)]);
    assert.deepEqual(await clientA.command(['ZRANGE', keys.permits, '0', '-1', 'WITHSCORES']), [decision.permit.id, String(T0 + 30_000)]);
    assert.equal(await clientA.command(['GET', keys.budget('2026-11')]), '123456789');
    const ttl = async (key: string): Promise<number> => (await clientA.command(['PTTL', key])) as number;
    // rpm: 1 request missing at 7/min = 8572 ms, + the 60 s margin.
    assert.ok((await ttl(keys.requests)) > 60_000 && (await ttl(keys.requests)) <= 68_572);
    assert.ok((await ttl(keys.permits)) > 60_000 && (await ttl(keys.permits)) <= 90_000);
    // Month window ends 2026-12-01: 8.5 days + 1 day kept.
    assert.ok((await ttl(keys.budget('2026-11'))) > 9 * 86_400_000 && (await ttl(keys.budget('2026-11'))) <= 9.5 * 86_400_000);

    await limiter.settle({ permit: decision.permit, limits: l, actualTokens: 1_000_000_000, nowMs: T0 });
    assert.deepEqual(await clientA.command(['ZCARD', keys.permits]), 0);
    // 52592592660000 - (1e9 - 123456789) * 60000 = 0: the bucket is exactly empty.
    assert.deepEqual(await clientA.command(['HGETALL', keys.tokens]), ['level', '0', 'last', String(T0)]);
    assert.equal(await limiter.budgetUsed(id, l, T0), 1_000_000_000);
    await limiter.close();
  });

  test('deep debt stays exact: the level is written with every digit, not Lua\'s %.14g', async () => {
    const limiter = createRedisLimiter(clientA, { keyPrefix: PREFIX });
    const id = keyId();
    const l = limits({ tokensPerMinute: 1 });
    const permits = [];
    for (let i = 0; i < 3; i++) {
      const decision = await limiter.admit({ keyId: id, limits: l, estimatedTokens: 0, nowMs: T0 });
      assert.ok(decision.allowed);
      permits.push(decision.permit);
    }
    for (const permit of permits) await limiter.settle({ permit, limits: l, actualTokens: 987_654_321, nowMs: T0 });
    // 60000 - 3 * 987654321 * 60000: 15 significant digits, one more than %.14g keeps.
    const level = -177_777_777_720_000;
    assert.equal(level, 60_000 - 3 * 987_654_321 * 60_000);
    assert.equal(await clientA.command(['HGET', redisLimiterKeys(PREFIX, id).tokens, 'level']), String(level));
    const refused = await limiter.admit({ keyId: id, limits: l, estimatedTokens: 0, nowMs: T0 });
    assert.deepEqual(refused, {
      allowed: false, refusal: 'tokens', retryAfterMs: -level, snapshot: { tokens: { limit: 1, remaining: 0, resetMs: -level + 60_000 } },
    });
    await limiter.close();
  });

  test('keys without limits touch no Redis key; settle of such a permit sends nothing', async () => {
    const limiter = createRedisLimiter(clientA, { keyPrefix: 'nolimits:' });
    const decision = await limiter.admit({ keyId: 'key_free', limits: NO_LIMITS, estimatedTokens: 5, nowMs: T0 });
    assert.ok(decision.allowed);
    await limiter.settle({ permit: decision.permit, limits: NO_LIMITS, actualTokens: 5, nowMs: T0 });
    assert.deepEqual(await clientA.command(['KEYS', 'nolimits:*']), []);
    await limiter.close();
  });

  test('after close every call rejects with LimiterClosedError; bad input is a RangeError', async () => {
    const limiter: Limiter = createRedisLimiter(clientA, { keyPrefix: PREFIX });
    await assert.rejects(limiter.admit({ keyId: '', limits: limits({ requestsPerMinute: 1 }), estimatedTokens: 0, nowMs: T0 }), RangeError);
    await assert.rejects(limiter.admit({ keyId: 'k', limits: NO_LIMITS, estimatedTokens: 1.5, nowMs: T0 }), RangeError);
    assert.throws(() => createRedisLimiter(clientA, { keyPrefix: PREFIX, leaseMs: 0 }), RangeError);
    await limiter.close();
    await assert.rejects(limiter.admit({ keyId: 'k', limits: NO_LIMITS, estimatedTokens: 0, nowMs: T0 }), LimiterClosedError);
    await assert.rejects(limiter.budgetUsed('k', NO_LIMITS, T0), { code: 'limiter_closed' });
  });
});
