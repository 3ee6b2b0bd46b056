// The Redis limiter against a real redis-server: the shared scenario table, the
// atomicity of one limit shared by two clients, TTLs and the key layout.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { NO_LIMITS, type KeyLimits } from '../../src/limits/key-limits.ts';
import { LimiterClosedError, type Charge, type Limiter } from '../../src/limits/limiter.ts';
import { createRedisLimiter, redisLimiterKeys } from '../../src/limits/redis-limiter.ts';
import type { RedisClient } from '../../src/redis/client.ts';
import { useRedisPair } from '../support/redis-server.ts';
import { runBuiltInLimiterScenarios } from '../../src/testing/limiter-builtin.ts';
import { runLimiterContract } from '../../src/testing/limiter-contract.ts';

const PREFIX = 'test:';
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const limits = (set: Partial<KeyLimits>): KeyLimits => ({ ...NO_LIMITS, ...set });
const tokens = (n: number): Charge => ({ tokens: n, costNanos: 0 });

let clientA: RedisClient;
let clientB: RedisClient;

useRedisPair((pair) => ({ clientA, clientB } = pair));

// The client is created in before(), after this registration runs; the factory is called per scenario.
runLimiterContract('redis', () => createRedisLimiter(clientA, { keyPrefix: PREFIX }));
runBuiltInLimiterScenarios('redis', () => createRedisLimiter(clientA, { keyPrefix: PREFIX }));

describe('redis limiter', () => {
  const keyId = (): string => `key_${randomUUID().slice(0, 12)}`;

  test('two instances share one limit atomically: 50 parallel admits, limit 10 -> exactly 10', async () => {
    const a = createRedisLimiter(clientA, { keyPrefix: PREFIX });
    const b = createRedisLimiter(clientB, { keyPrefix: PREFIX });
    for (const l of [limits({ requestsPerMinute: 10 }), limits({ concurrentRequests: 10 }), limits({ tokensPerMinute: 1000 })]) {
      const id = keyId();
      const decisions = await Promise.all(
        Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? a : b).admit({ keyId: id, limits: l, reservation: tokens(100), nowMs: T0 })),
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
    const decision = await a.admit({ keyId: id, limits: l, reservation: tokens(10), nowMs: T0 });
    assert.ok(decision.allowed);
    await a.settle({ permit: decision.permit, limits: l, charge: tokens(150), nowMs: T0, maxChargeMultiple: 15 });
    const refused = await b.admit({ keyId: id, limits: l, reservation: tokens(1), nowMs: T0 });
    assert.deepEqual(refused, {
      allowed: false, refusal: 'budget', retryAfterMs: 43_200_000, snapshot: {},
      budget: { kind: 'tokens', limit: 100, used: 150, requested: 1, period: 'day', resetsAt: '2026-11-23T00:00:00.000Z', spent: true, cause: 'spent' },
    });
    assert.deepEqual(await b.budgetUsed(id, l, T0), { tokens: 150, costNanos: 0 });
  });

  test('two instances split one burst against one budget: admitted reservations fit it, plus at most one request', async () => {
    const a = createRedisLimiter(clientA, { keyPrefix: PREFIX });
    const b = createRedisLimiter(clientB, { keyPrefix: PREFIX });
    // Reservations of 300 to 1250 tokens (and as many micro-units of money), 40 at once, half through each instance.
    const sizes = Array.from({ length: 40 }, (_, i) => 300 + ((i * 7919) % 20) * 50);
    for (const l of [limits({ tokenBudget: { tokens: 5000, period: 'day' } }), limits({ costBudget: { amount: 0.005, period: 'month' } })]) {
      const id = keyId();
      const decisions = await Promise.all(
        sizes.map((n, i) => (i % 2 === 0 ? a : b).admit({ keyId: id, limits: l, reservation: { tokens: n, costNanos: n * 1000 }, nowMs: T0 })),
      );
      const admitted = decisions.flatMap((d) => (d.allowed ? [d.permit] : []));
      const reserved = admitted.reduce((sum, p) => sum + p.reservation.tokens, 0);
      assert.ok(admitted.length >= 4, `${admitted.length} admitted`);
      assert.ok(reserved <= 5000, `reserved ${reserved} of 5000`);
      // Nothing that was refused would have fit in the room left at its turn: every refusal saw
      // less room than its request, and the count is exactly the admitted reservations.
      const used = await a.budgetUsed(id, l, T0);
      assert.deepEqual(used, l.tokenBudget === null ? { tokens: 0, costNanos: reserved * 1000 } : { tokens: reserved, costNanos: 0 });
      const refusedSizes: number[] = [];
      for (const d of decisions) {
        if (d.allowed) continue;
        assert.equal(d.refusal, 'budget');
        const budget = d.budget!;
        assert.ok(budget.spent || budget.limit - budget.used < budget.requested, JSON.stringify(budget));
        refusedSizes.push(budget.kind === 'tokens' ? budget.requested : budget.requested / 1000);
      }
      // The room only shrank during the burst, so what is left is smaller than every refused request.
      assert.ok(refusedSizes.length > 0 && 5000 - reserved < Math.min(...refusedSizes), `${5000 - reserved} left; refused ${refusedSizes.join(',')}`);
      // Settled at the most each reservation allows, the spend is what was reserved.
      await Promise.all(admitted.map((permit, i) => (i % 2 === 0 ? b : a).settle({ permit, limits: l, charge: permit.reservation, nowMs: T0 })));
      assert.deepEqual(await b.budgetUsed(id, l, T0), used);
    }
    await a.close();
    await b.close();
  });

  test('renew moves the lease in Redis and the set\'s TTL with it; a permit renewed through one instance stays held for the other', async () => {
    const a = createRedisLimiter(clientA, { keyPrefix: PREFIX, leaseMs: 30_000 });
    const b = createRedisLimiter(clientB, { keyPrefix: PREFIX, leaseMs: 30_000 });
    const id = keyId();
    const l = limits({ concurrentRequests: 1 });
    const decision = await a.admit({ keyId: id, limits: l, reservation: tokens(0), nowMs: T0 });
    assert.ok(decision.allowed);
    const permits = redisLimiterKeys(PREFIX, id).permits;
    assert.equal(await a.renew(decision.permit, T0 + 25_000), true);
    assert.deepEqual(await clientA.command(['ZRANGE', permits, '0', '-1', 'WITHSCORES']), [decision.permit.id, String(T0 + 55_000)]);
    const ttl = (await clientA.command(['PTTL', permits])) as number;
    assert.ok(ttl > 60_000 && ttl <= 90_000, `PTTL ${ttl}`); // 55 s - 25 s + the 60 s margin
    assert.equal((await b.admit({ keyId: id, limits: l, reservation: tokens(0), nowMs: T0 + 54_999 })).allowed, false);
    assert.equal((await b.admit({ keyId: id, limits: l, reservation: tokens(0), nowMs: T0 + 55_000 })).allowed, true);
    assert.equal(await a.renew(decision.permit, T0 + 55_000), false);
    await a.close();
    await b.close();
  });

  test('a restarted instance (a new limiter on the same Redis) refuses at the same request as one that never stopped, as the in-process limiter with its journal does', async () => {
    // The figures of test/limits/budget-journal.test.ts: 14 requests fit without a restart.
    const l = limits({ tokenBudget: { tokens: 10_000, period: 'day' }, costBudget: { amount: 0.01, period: 'month' } });
    const reservation = { tokens: 900, costNanos: 900_000 };
    const charged = { tokens: 700, costNanos: 650_000 };
    const spendUntilRefused = async (limiter: Limiter, id: string, max: number): Promise<number> => {
      for (let i = 0; i < max; i++) {
        const d = await limiter.admit({ keyId: id, limits: l, reservation, nowMs: T0 });
        if (!d.allowed) return i;
        await limiter.settle({ permit: d.permit, limits: l, charge: charged, nowMs: T0 });
      }
      return max;
    };
    const straight = createRedisLimiter(clientA, { keyPrefix: PREFIX });
    assert.equal(await spendUntilRefused(straight, keyId(), 100), 14);
    const id = keyId();
    const before = createRedisLimiter(clientA, { keyPrefix: PREFIX });
    assert.equal(await spendUntilRefused(before, id, 5), 5);
    await before.close();
    const after = createRedisLimiter(clientB, { keyPrefix: PREFIX });
    assert.deepEqual(await after.budgetUsed(id, l, T0), { tokens: 3500, costNanos: 3_250_000 });
    assert.equal(await spendUntilRefused(after, id, 100), 9);
  });

  test('key layout: one hash tag per key, values exact, TTLs set on every key', async () => {
    const limiter = createRedisLimiter(clientA, { keyPrefix: PREFIX, leaseMs: 30_000 });
    const id = keyId();
    const l = limits({
      requestsPerMinute: 7, tokensPerMinute: 1_000_000_000, concurrentRequests: 3, tokenBudget: { tokens: 1_000_000_000, period: 'month' }, costBudget: { amount: 1_000_000, period: 'day' },
    });
    // The largest cost budget and charge: 1e15 nanos, written with every digit.
    const decision = await limiter.admit({ keyId: id, limits: l, reservation: { tokens: 123_456_789, costNanos: 999_999_999_999_999 }, nowMs: T0 });
    assert.ok(decision.allowed);
    const keys = redisLimiterKeys(PREFIX, id);
    assert.equal(keys.requests, `test:{${id}}:rpm`);
    assert.deepEqual(await clientA.command(['HGETALL', keys.requests]), ['level', String(6 * 60_000), 'last', String(T0)]);
    // 1e9 * 60000 - 123456789 * 60000 = 52592592660000.
    assert.deepEqual(await clientA.command(['HGETALL', keys.tokens]), ['level', '52592592660000', 'last', String(T0)]);
    assert.deepEqual(await clientA.command(['ZRANGE', keys.permits, '0', '-1', 'WITHSCORES']), [decision.permit.id, String(T0 + 30_000)]);
    assert.equal(await clientA.command(['GET', keys.budget('2026-11')]), '123456789');
    const ttl = async (key: string): Promise<number> => (await clientA.command(['PTTL', key])) as number;
    assert.equal(keys.cost('2026-11-22'), `test:{${id}}:cost:2026-11-22`);
    assert.equal(await clientA.command(['GET', keys.cost('2026-11-22')]), '999999999999999');
    // The day ends in 12 h: + 1 day kept.
    assert.ok((await ttl(keys.cost('2026-11-22'))) > 35 * 3_600_000 && (await ttl(keys.cost('2026-11-22'))) <= 36 * 3_600_000);
    // rpm: 1 request missing at 7/min = 8572 ms, + the 60 s margin.
    assert.ok((await ttl(keys.requests)) > 60_000 && (await ttl(keys.requests)) <= 68_572);
    assert.ok((await ttl(keys.permits)) > 60_000 && (await ttl(keys.permits)) <= 90_000);
    // Month window ends 2026-12-01: 8.5 days + 1 day kept.
    assert.ok((await ttl(keys.budget('2026-11'))) > 9 * 86_400_000 && (await ttl(keys.budget('2026-11'))) <= 9.5 * 86_400_000);

    // The extremes of the arithmetic, beyond any charge ceiling.
    await limiter.settle({ permit: decision.permit, limits: l, charge: { tokens: 1_000_000_000, costNanos: 1_000_000_000_000_000 }, nowMs: T0, maxChargeMultiple: null });
    assert.deepEqual(await clientA.command(['ZCARD', keys.permits]), 0);
    // 52592592660000 - (1e9 - 123456789) * 60000 = 0: the bucket is exactly empty.
    assert.deepEqual(await clientA.command(['HGETALL', keys.tokens]), ['level', '0', 'last', String(T0)]);
    assert.deepEqual(await limiter.budgetUsed(id, l, T0), { tokens: 1_000_000_000, costNanos: 1_000_000_000_000_000 });
    assert.equal(await clientA.command(['GET', keys.cost('2026-11-22')]), '1000000000000000');
    await limiter.close();
  });

  test('deep debt stays exact: the level is written with every digit, not Lua\'s %.14g', async () => {
    const limiter = createRedisLimiter(clientA, { keyPrefix: PREFIX });
    const id = keyId();
    const l = limits({ tokensPerMinute: 1 });
    const permits = [];
    for (let i = 0; i < 3; i++) {
      const decision = await limiter.admit({ keyId: id, limits: l, reservation: tokens(0), nowMs: T0 });
      assert.ok(decision.allowed);
      permits.push(decision.permit);
    }
    for (const permit of permits) await limiter.settle({ permit, limits: l, charge: tokens(987_654_321), nowMs: T0, maxChargeMultiple: null });
    // 60000 - 3 * 987654321 * 60000: 15 significant digits, one more than %.14g keeps.
    const level = -177_777_777_720_000;
    assert.equal(level, 60_000 - 3 * 987_654_321 * 60_000);
    assert.equal(await clientA.command(['HGET', redisLimiterKeys(PREFIX, id).tokens, 'level']), String(level));
    const refused = await limiter.admit({ keyId: id, limits: l, reservation: tokens(0), nowMs: T0 });
    assert.deepEqual(refused, {
      allowed: false, refusal: 'tokens', retryAfterMs: -level, snapshot: { tokens: { limit: 1, remaining: 0, resetMs: -level + 60_000 } },
    });
    await limiter.close();
  });

  test('keys without limits touch no Redis key; settle of such a permit sends nothing', async () => {
    const limiter = createRedisLimiter(clientA, { keyPrefix: 'nolimits:' });
    const decision = await limiter.admit({ keyId: 'key_free', limits: NO_LIMITS, reservation: tokens(5), nowMs: T0 });
    assert.ok(decision.allowed);
    await limiter.settle({ permit: decision.permit, limits: NO_LIMITS, charge: tokens(5), nowMs: T0 });
    assert.deepEqual(await clientA.command(['KEYS', 'nolimits:*']), []);
    await limiter.close();
  });

  test('after close every call rejects with LimiterClosedError; bad input is a RangeError', async () => {
    const limiter: Limiter = createRedisLimiter(clientA, { keyPrefix: PREFIX });
    await assert.rejects(limiter.admit({ keyId: '', limits: limits({ requestsPerMinute: 1 }), reservation: tokens(0), nowMs: T0 }), RangeError);
    await assert.rejects(limiter.admit({ keyId: 'k', limits: NO_LIMITS, reservation: tokens(1.5), nowMs: T0 }), RangeError);
    assert.throws(() => createRedisLimiter(clientA, { keyPrefix: PREFIX, leaseMs: 0 }), RangeError);
    await limiter.close();
    await assert.rejects(limiter.admit({ keyId: 'k', limits: NO_LIMITS, reservation: tokens(0), nowMs: T0 }), LimiterClosedError);
    await assert.rejects(limiter.budgetUsed('k', NO_LIMITS, T0), { code: 'limiter_closed' });
  });
});
