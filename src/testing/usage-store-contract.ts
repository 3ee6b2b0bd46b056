// The usage store port (UsageStore in src/api/limits.ts) as one set of cases, run
// against every store: the data directory's usage file, Redis, and a host's own.
// `makeStore()` gives a fresh, empty store each time.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KeyUsage, PendingUsage, UsageStore } from '../api/limits.ts';

const HOUR = 3_600_000;
const NOW = Date.UTC(2026, 10, 22, 12, 30);
const THIS_HOUR = Date.UTC(2026, 10, 22, 12);
const ZERO: KeyUsage = { requests: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0, errors: 0, costNanos: 0, guardBlocked: 0, guardMasked: 0, guardLogged: 0 };
const u = (requests: number, promptTokens = 0, completionTokens = 0, cachedTokens = 0, errors = 0, costNanos = 0, guardBlocked = 0, guardMasked = 0, guardLogged = 0): KeyUsage => ({ requests, promptTokens, completionTokens, cachedTokens, errors, costNanos, guardBlocked, guardMasked, guardLogged });

function pending(entries: [string, number, KeyUsage][]): PendingUsage {
  const out: PendingUsage = new Map();
  for (const [keyId, hourMs, usage] of entries) {
    const hours = out.get(keyId) ?? new Map<number, KeyUsage>();
    hours.set(hourMs, usage);
    out.set(keyId, hours);
  }
  return out;
}

/** Registers the usage store cases as node:test tests in a describe block named after `name`; `makeStore()` gives a fresh, empty store per case. */
export function runUsageStoreContract(name: string, makeStore: () => UsageStore | Promise<UsageStore>): void {
  describe(`usage store contract: ${name}`, () => {
    test('an empty store: no totals, and a series of zeros ending with the current bucket', async () => {
      const store = await makeStore();
      assert.deepEqual(await store.totals(), new Map());
      const hours = await store.series('key_never', 'hour', NOW);
      assert.equal(hours.granularity, 'hour');
      assert.equal(hours.buckets.length, 48);
      assert.deepEqual(hours.buckets.at(-1), { start: '2026-11-22T12:00:00.000Z', ...ZERO });
      assert.deepEqual(hours.buckets[0], { start: '2026-11-20T13:00:00.000Z', ...ZERO });
      assert.deepEqual(hours.totals, ZERO);
      const days = await store.series('key_never', 'day', NOW);
      assert.equal(days.buckets.length, 30);
      assert.deepEqual(days.buckets.at(-1), { start: '2026-11-22T00:00:00.000Z', ...ZERO });
    });

    test('flushes add up per key, per hour, per day and in the totals, cost included', async () => {
      const store = await makeStore();
      // Costs in nanos: 25.5 currency units, one nano, and sums past 2^32.
      await store.add(pending([['key_a', THIS_HOUR, u(3, 100, 50, 10, 1, 25_500_000_000)], ['key_a', THIS_HOUR - HOUR, u(1, 7, 8, 0, 0, 1)], ['key_b', THIS_HOUR - 26 * HOUR, u(2, 20, 0, 0, 2)]]), NOW);
      await store.add(pending([['key_a', THIS_HOUR, u(1, 1, 1, 1, 0, 4_000_000_000_000)], ['key_a', THIS_HOUR - 3 * 24 * HOUR, u(5, 5, 5, 0, 0, 150)]]), NOW);
      assert.deepEqual(await store.totals(), new Map([['key_a', u(10, 113, 64, 11, 1, 4_025_500_000_151)], ['key_b', u(2, 20, 0, 0, 2)]]));

      const hours = await store.series('key_a', 'hour', NOW);
      assert.deepEqual(hours.buckets.at(-1), { start: '2026-11-22T12:00:00.000Z', ...u(4, 101, 51, 11, 1, 4_025_500_000_000) });
      assert.deepEqual(hours.buckets.at(-2), { start: '2026-11-22T11:00:00.000Z', ...u(1, 7, 8, 0, 0, 1) });
      assert.deepEqual(hours.buckets.at(-3), { start: '2026-11-22T10:00:00.000Z', ...ZERO });
      assert.deepEqual(hours.totals, u(10, 113, 64, 11, 1, 4_025_500_000_151));

      const days = await store.series('key_a', 'day', NOW);
      assert.deepEqual(days.buckets.at(-1), { start: '2026-11-22T00:00:00.000Z', ...u(5, 108, 59, 11, 1, 4_025_500_000_001) });
      assert.deepEqual(days.buckets.at(-4), { start: '2026-11-19T00:00:00.000Z', ...u(5, 5, 5, 0, 0, 150) });
      const b = await store.series('key_b', 'day', NOW);
      assert.deepEqual(b.buckets.at(-2), { start: '2026-11-21T00:00:00.000Z', ...u(2, 20, 0, 0, 2) });
    });

    test("the guard's findings by action add up like the other counters", async () => {
      const store = await makeStore();
      await store.add(pending([['key_g', THIS_HOUR, u(2, 0, 0, 0, 1, 0, 1, 3, 0)], ['key_g', THIS_HOUR - 30 * HOUR, u(1, 0, 0, 0, 0, 0, 0, 0, 2)]]), NOW);
      await store.add(pending([['key_g', THIS_HOUR, u(1, 0, 0, 0, 0, 0, 0, 1, 4)]]), NOW);
      assert.deepEqual(await store.totals(), new Map([['key_g', u(4, 0, 0, 0, 1, 0, 1, 4, 6)]]));
      const hours = await store.series('key_g', 'hour', NOW);
      assert.deepEqual(hours.buckets.at(-1), { start: '2026-11-22T12:00:00.000Z', ...u(3, 0, 0, 0, 1, 0, 1, 4, 4) });
      assert.deepEqual(hours.buckets.at(-31), { start: '2026-11-21T06:00:00.000Z', ...u(1, 0, 0, 0, 0, 0, 0, 0, 2) });
      const days = await store.series('key_g', 'day', NOW);
      assert.deepEqual(days.buckets.at(-1), { start: '2026-11-22T00:00:00.000Z', ...u(3, 0, 0, 0, 1, 0, 1, 4, 4) });
      assert.deepEqual(days.buckets.at(-2), { start: '2026-11-21T00:00:00.000Z', ...u(1, 0, 0, 0, 0, 0, 0, 0, 2) });
    });

    test('period totals: every key with usage, summed over the buckets its series covers, by key id', async () => {
      const store = await makeStore();
      assert.deepEqual(await store.periodTotals('hour', NOW), new Map());
      // key_b: inside the 48 hours and the 30 days; key_a: 3 days ago (30 days only) and 40 days ago (neither).
      await store.add(
        pending([
          ['key_b', THIS_HOUR - 47 * HOUR, u(2, 10, 5, 0, 1, 700, 1, 0, 0)],
          ['key_b', THIS_HOUR - 48 * HOUR, u(1, 1, 1, 0, 0, 0, 0, 2, 0)],
          ['key_a', THIS_HOUR - 3 * 24 * HOUR, u(3, 0, 0, 0, 0, 0, 0, 0, 5)],
          ['key_a', THIS_HOUR - 40 * 24 * HOUR, u(9, 0, 0, 0, 0, 0, 9, 0, 0)],
        ]),
        NOW,
      );
      assert.deepEqual([...(await store.periodTotals('hour', NOW))], [
        ['key_a', ZERO],
        ['key_b', u(2, 10, 5, 0, 1, 700, 1, 0, 0)],
      ]);
      assert.deepEqual([...(await store.periodTotals('day', NOW))], [
        ['key_a', u(3, 0, 0, 0, 0, 0, 0, 0, 5)],
        ['key_b', u(3, 11, 6, 0, 1, 700, 1, 2, 0)],
      ]);
    });
  });
}
