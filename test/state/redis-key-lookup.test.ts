// The Redis key store's lookup of keys its mirror does not hold, against a fake
// Redis client on a manual scheduler: how many script calls a flood of distinct
// unknown keys costs, exactly, and what a lookup that could not ask answers.
// test/state/multi-instance.system.test.ts floods a real redis-server.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateApiKey } from '../../src/keys/api-key.ts';
import type { RedisClient } from '../../src/redis/client.ts';
import { RedisUnavailableError } from '../../src/redis/errors.ts';
import type { RedisReply } from '../../src/redis/resp.ts';
import { StateUnavailableError } from '../../src/state/errors.ts';
import { createLookupBudget } from '../../src/state/lookup-budget.ts';
import { RECORD_BY_HASH_SCRIPT } from '../../src/state/redis-key-layout.ts';
import { LOOKUP_TIMEOUT_MS, MAX_LOOKUPS_IN_FLIGHT, openRedisKeyStore } from '../../src/state/redis-key-store.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';

/** A Redis holding no keys; `answer` decides each by-hash lookup's reply. */
function fakeRedis(answer: () => Promise<RedisReply>): { client: RedisClient; lookups: () => number } {
  let lookups = 0;
  const client = {
    state: 'ready',
    command: async (args: readonly unknown[]) => (args[0] === 'GET' ? '0' : null),
    evalScript: (script: unknown) => {
      if (script !== RECORD_BY_HASH_SCRIPT) return Promise.resolve(['0', []]);
      lookups++;
      return answer();
    },
    close: async () => {},
  } as unknown as RedisClient;
  return { client, lookups: () => lookups };
}

async function openStore(answer: () => Promise<RedisReply>) {
  const scheduler = new ManualScheduler();
  const redis = fakeRedis(answer);
  const store = await openRedisKeyStore(redis.client, { keyPrefix: 't:', scheduler, reloadIntervalMs: 3_600_000, onError: () => {} });
  assert.ok(store.lookup !== undefined && store.lookupCounts !== undefined);
  return { scheduler, redis, store, lookup: store.lookup.bind(store), counts: store.lookupCounts.bind(store) };
}

type Outcome = 'unknown' | 'unavailable';

/** What one lookup ended as; a rejection must be the 503 with Retry-After: 1. */
async function outcome(result: Promise<unknown>): Promise<Outcome> {
  try {
    assert.equal(await result, null);
    return 'unknown';
  } catch (error) {
    assert.ok(error instanceof StateUnavailableError, String(error));
    assert.deepEqual(
      { status: error.status, headers: error.headers, body: error.toBody() },
      {
        status: 503,
        headers: { 'retry-after': '1' },
        body: {
          error: {
            message: 'The gateway could not check this API key with its shared state store just now; retry in a second.',
            type: 'server_error',
            param: null,
            code: 'state_unavailable',
          },
        },
      },
    );
    return 'unavailable';
  }
}

function tally(outcomes: Outcome[]): Record<Outcome, number> {
  return { unknown: outcomes.filter((o) => o === 'unknown').length, unavailable: outcomes.filter((o) => o === 'unavailable').length };
}

test('the lookup budget: 5 a second per client, refilled one every 200 ms', async () => {
  const scheduler = new ManualScheduler();
  const budget = createLookupBudget({ scheduler });
  assert.deepEqual(Array.from({ length: 6 }, () => budget.take('a')), [null, null, null, null, null, 'client']);
  await scheduler.advance(199);
  assert.equal(budget.take('a'), 'client');
  await scheduler.advance(1);
  assert.deepEqual([budget.take('a'), budget.take('a')], [null, 'client']);
});

test('the lookup budget: 50 a second per instance, refilled one every 20 ms; a refusal takes nothing from the client', async () => {
  const scheduler = new ManualScheduler();
  const budget = createLookupBudget({ scheduler });
  for (let c = 0; c < 10; c++) for (let i = 0; i < 5; i++) assert.equal(budget.take(`c${c}`), null);
  assert.deepEqual(Array.from({ length: 10 }, () => budget.take('k')), Array(10).fill('instance'));
  await scheduler.advance(19);
  assert.equal(budget.take('k'), 'instance');
  await scheduler.advance(1);
  assert.deepEqual([budget.take('k'), budget.take('k')], [null, 'instance']);
  // 100 ms later the instance holds 5 again, and k its 4 (the refusals took nothing; its refill adds half a lookup).
  await scheduler.advance(100);
  assert.deepEqual(Array.from({ length: 5 }, () => budget.take('k')), [null, null, null, null, 'client']);
});

test('the lookup budget forgets the least recently seen client beyond its bound; it comes back full', async () => {
  const scheduler = new ManualScheduler();
  const budget = createLookupBudget({ scheduler, maxClients: 2, perSecond: 1000 });
  for (let i = 0; i < 5; i++) budget.take('a');
  assert.equal(budget.take('a'), 'client');
  budget.take('b');
  budget.take('c');
  assert.equal(budget.take('a'), null);
});

test('a flood of 2,000 distinct unknown keys from 400 clients costs Redis exactly 50 lookups a second; the rest are answered 503, not 401', async () => {
  const { scheduler, redis, lookup, counts } = await openStore(async () => null);
  // 64 concurrent clients, each sending its keys one after another.
  const flood = async (round: number): Promise<Outcome[]> => {
    const outcomes: Outcome[] = [];
    const worker = async (w: number): Promise<void> => {
      for (let i = w; i < 2000; i += 64) outcomes.push(await outcome(lookup(generateApiKey(), `198.51.${round}.${i % 400}`)));
    };
    await Promise.all(Array.from({ length: 64 }, (_, w) => worker(w)));
    return outcomes;
  };
  assert.deepEqual(tally(await flood(0)), { unknown: 50, unavailable: 1950 });
  assert.equal(redis.lookups(), 50);
  // 999 ms refill 49.95 lookups: 49 reach Redis.
  await scheduler.advance(999);
  assert.deepEqual(tally(await flood(1)), { unknown: 49, unavailable: 1951 });
  assert.equal(redis.lookups(), 99);
  await scheduler.advance(1000);
  assert.deepEqual(tally(await flood(2)), { unknown: 50, unavailable: 1950 });
  assert.equal(redis.lookups(), 149);
  assert.deepEqual(counts(), { found: 0, unknown: 149, cached_unknown: 0, shed: 5851, failed: 0 });
  assert.equal(scheduler.pending().length, 1, 'only the mirror poll: no lookup timer left behind');
});

test('one client flooding distinct keys spends its own 5 a second, not the budget of a client with a new key', async () => {
  const { redis, lookup } = await openStore(async () => null);
  const flood: Outcome[] = [];
  for (let i = 0; i < 1000; i++) flood.push(await outcome(lookup(generateApiKey(), '203.0.113.9')));
  assert.deepEqual(tally(flood), { unknown: 5, unavailable: 995 });
  assert.equal(await outcome(lookup(generateApiKey(), '192.0.2.1')), 'unknown');
  assert.equal(redis.lookups(), 6);
});

test('lookups beyond the in-flight bound are answered 503 without asking Redis', async () => {
  const { redis, lookup, counts } = await openStore(() => new Promise<RedisReply>(() => {}));
  const waiting = Array.from({ length: MAX_LOOKUPS_IN_FLIGHT }, (_, i) => outcome(lookup(generateApiKey(), `192.0.2.${i}`)));
  assert.equal(await outcome(lookup(generateApiKey(), '192.0.2.200')), 'unavailable');
  assert.equal(redis.lookups(), MAX_LOOKUPS_IN_FLIGHT);
  assert.equal(counts().shed, 1);
  void waiting;
});

test('a lookup Redis does not answer within LOOKUP_TIMEOUT_MS is answered 503 at the deadline, not before', async () => {
  const { scheduler, lookup, counts } = await openStore(() => new Promise<RedisReply>(() => {}));
  let settled: Outcome | undefined;
  void outcome(lookup(generateApiKey(), '192.0.2.1')).then((o) => (settled = o));
  await scheduler.advance(LOOKUP_TIMEOUT_MS - 1);
  assert.equal(settled, undefined);
  await scheduler.advance(1);
  assert.equal(settled, 'unavailable');
  assert.equal(counts().failed, 1);
});

test('a lookup meeting an unreachable Redis is answered 503, and every caller sharing it too', async () => {
  const { redis, lookup, counts } = await openStore(async () => {
    throw new RedisUnavailableError('closed', 'connection closed');
  });
  const key = generateApiKey();
  assert.deepEqual(await Promise.all([outcome(lookup(key, '192.0.2.1')), outcome(lookup(key, '192.0.2.2'))]), ['unavailable', 'unavailable']);
  assert.equal(redis.lookups(), 1);
  assert.equal(counts().failed, 1);
});
