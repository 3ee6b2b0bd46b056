// The limiter port's cases a host's own limiter is held to: what the Limiter doc
// comments in src/api/limits.ts state, and nothing of how the built-in limiters
// count inside (their exact refill arithmetic, burst ordering and internal
// ceilings are limiter-builtin.ts's, run for the memory and Redis limiters only).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { NO_LIMITS } from '../limits/key-limits.ts';
import { T0, allowed, at, limits, refused, scenarioRunner, type MakeLimiter } from './limiter-scenario-harness.ts';

const DAY_END = '2026-11-23T00:00:00.000Z';
const TO_DAY_END = Date.parse(DAY_END) - T0;

export function runLimiterPortScenarios(name: string, makeLimiter: MakeLimiter): void {
  const run = scenarioRunner(makeLimiter);

  describe(`limiter contract: ${name}`, () => {
    test('leaseMs is a whole number of milliseconds, at least 1000', run(async (s) => {
      assert.equal(Number.isSafeInteger(s.limiter.leaseMs) && s.limiter.leaseMs >= 1000, true, `leaseMs ${s.limiter.leaseMs}`);
    }));

    test('no limits: always admitted, empty snapshot, a permit holding nothing', run(async (s) => {
      for (let i = 0; i < 20; i++) {
        const decision = allowed(await s.admit('free', NO_LIMITS, 1_000_000, T0));
        assert.deepEqual(decision.snapshot, {});
        assert.deepEqual({ ...decision.permit, id: '' }, {
          keyId: s.key('free'), id: '', reservation: { tokens: 1_000_000, costNanos: 0 }, admittedAtMs: T0, budgetPeriod: null, costBudgetPeriod: null,
        });
        assert.equal(await s.renew(decision.permit, T0), false);
        await s.settle(decision.permit, NO_LIMITS, 5, T0);
      }
      assert.deepEqual(await s.used('free', NO_LIMITS, T0), { tokens: 0, costNanos: 0 });
    }));

    test('permits carry the admission, its budget periods, and distinct ids', run(async (s) => {
      const l = limits({ requestsPerMinute: 10, tokenBudget: { tokens: 100, period: 'month' }, costBudget: { amount: 1, period: 'day' } });
      const a = await s.permit('k', l, { tokens: 7, costNanos: 70 }, T0);
      const b = await s.permit('k', l, 8, T0 + 1);
      assert.deepEqual({ ...a, id: '' }, {
        keyId: s.key('k'), id: '', reservation: { tokens: 7, costNanos: 70 }, admittedAtMs: T0, budgetPeriod: '2026-11', costBudgetPeriod: '2026-11-22',
      });
      assert.equal(typeof a.id, 'string');
      assert.notEqual(a.id, b.id);
      assert.equal(b.admittedAtMs, T0 + 1);
    }));

    test('requests per minute: the limit at once, then refused until the bucket refills', run(async (s) => {
      const l = limits({ requestsPerMinute: 3 });
      for (const remaining of [2, 1, 0]) {
        const window = allowed(await s.admit('k', l, 0, T0)).snapshot.requests;
        assert.deepEqual([window?.limit, window?.remaining], [3, remaining]);
        assert.equal((window?.resetMs ?? 0) > 0 && (window?.resetMs ?? 0) <= 60_000, true);
      }
      const no = refused(await s.admit('k', l, 0, T0));
      assert.equal(no.refusal, 'requests');
      assert.equal(no.retryAfterMs !== null && no.retryAfterMs > 0 && no.retryAfterMs <= 60_000, true, `retryAfterMs ${no.retryAfterMs}`);
      assert.deepEqual([no.snapshot.requests?.limit, no.snapshot.requests?.remaining], [3, 0]);
      allowed(await s.admit('k', l, 0, T0 + (no.retryAfterMs ?? 0)));
      allowed(await s.admit('b', l, 0, T0)); // keys are independent
    }));

    test('tokens per minute: reservations take tokens, settlement gives back what was not used', run(async (s) => {
      const l = limits({ tokensPerMinute: 1000 });
      const permit = await s.permit('k', l, 800, T0);
      assert.equal(allowed(await s.admit('k', l, 0, T0)).snapshot.tokens?.remaining, 200);
      const no = refused(await s.admit('k', l, 400, T0));
      assert.deepEqual([no.refusal, no.snapshot.tokens?.remaining], ['tokens', 200]);
      assert.equal(no.retryAfterMs !== null && no.retryAfterMs > 0 && no.retryAfterMs <= 60_000, true, `retryAfterMs ${no.retryAfterMs}`);
      await s.settle(permit, l, 100, T0);
      assert.equal(allowed(await s.admit('k', l, 400, T0)).snapshot.tokens?.remaining, 500);
      allowed(await s.admit('k', l, 1000, T0 + 60_000));
    }));

    test('concurrency: an unsettled permit holds its slot; settle frees it, once', run(async (s) => {
      const l = limits({ concurrentRequests: 2 });
      const first = await s.permit('k', l, 0, T0);
      await s.permit('k', l, 0, T0);
      const no = refused(await s.admit('k', l, 0, T0));
      assert.equal(no.refusal, 'concurrency');
      assert.equal(no.retryAfterMs !== null && no.retryAfterMs > 0, true);
      await s.settle(first, l, 0, T0 + 5);
      await s.settle(first, l, 0, T0 + 5);
      await s.permit('k', l, 0, T0 + 5);
      assert.equal(refused(await s.admit('k', l, 0, T0 + 5)).refusal, 'concurrency');
    }));

    test('leases: renew keeps a slot past leaseMs; an unrenewed permit loses it, and settling it later changes nothing', run(async (s) => {
      const lease = s.limiter.leaseMs;
      const l = limits({ concurrentRequests: 1, tokenBudget: { tokens: 10_000, period: 'day' } });
      const held = await s.permit('k', l, 600, T0);
      assert.equal(await s.renew(held, T0 + lease - 1), true);
      assert.equal(refused(await s.admit('k', l, 0, T0 + lease + 1)).refusal, 'concurrency');
      // Not renewed again: the slot is free once the renewed lease ran out.
      const fresh = await s.permit('k', l, 600, T0 + 2 * lease);
      assert.equal(await s.renew(held, T0 + 2 * lease), false);
      await s.settle(held, l, 0, T0 + 2 * lease);
      assert.equal(refused(await s.admit('k', l, 0, T0 + 2 * lease)).refusal, 'concurrency', 'the stale settle freed the fresh slot');
      assert.equal(await s.budgetUsed('k', l, T0 + 2 * lease), 1200, 'an expired permit\'s reservation stays charged');
      await s.settle(fresh, l, 100, T0 + 2 * lease);
      assert.equal(await s.renew(fresh, T0 + 2 * lease), false, 'renew after settle');
      assert.equal(await s.budgetUsed('k', l, T0 + 2 * lease), 700);
      allowed(await s.admit('k', l, 0, T0 + 2 * lease));
    }));

    test('a refusal charges nothing: not the requests, tokens, budget or a slot', run(async (s) => {
      const l = limits({ requestsPerMinute: 10, tokensPerMinute: 1000, concurrentRequests: 1, tokenBudget: { tokens: 1000, period: 'day' } });
      const held = await s.permit('k', l, 100, T0);
      for (let i = 0; i < 3; i++) assert.equal(refused(await s.admit('k', l, 100, T0)).refusal, 'concurrency');
      assert.equal(await s.budgetUsed('k', l, T0), 100);
      await s.settle(held, l, 100, T0);
      const next = allowed(await s.admit('k', l, 0, T0)).snapshot;
      assert.deepEqual([next.requests?.remaining, next.tokens?.remaining], [8, 900]);
    }));

    test('token budget: counts reservations and charges of the UTC day; refused naming why, until the period ends', run(async (s) => {
      const l = limits({ tokenBudget: { tokens: 1000, period: 'day' } });
      const first = await s.permit('k', l, 600, T0);
      assert.equal(first.budgetPeriod, '2026-11-22');
      assert.equal(await s.budgetUsed('k', l, T0), 600);
      await s.settle(first, l, 700, T0);
      assert.equal(await s.budgetUsed('k', l, T0), 700);
      assert.deepEqual(await s.admit('k', l, 400, T0), {
        allowed: false, refusal: 'budget', retryAfterMs: TO_DAY_END, snapshot: {},
        budget: { kind: 'tokens', limit: 1000, used: 700, requested: 400, period: 'day', resetsAt: DAY_END, spent: false, cause: 'too_little_left' },
      });
      await s.settle(await s.permit('k', l, 300, T0), l, 400, T0);
      assert.equal(await s.budgetUsed('k', l, T0), 1100);
      assert.deepEqual(refused(await s.admit('k', l, 1, T0)).budget, {
        kind: 'tokens', limit: 1000, used: 1100, requested: 1, period: 'day', resetsAt: DAY_END, spent: true, cause: 'spent',
      });
      assert.deepEqual(refused(await s.admit('big', l, 5000, T0)), {
        allowed: false, refusal: 'budget', retryAfterMs: null, snapshot: {},
        budget: { kind: 'tokens', limit: 1000, used: 0, requested: 5000, period: 'day', resetsAt: DAY_END, spent: false, cause: 'exceeds_budget' },
      });
      const held = await s.permit('flight', l, 600, T0);
      const waiting = refused(await s.admit('flight', l, 500, T0));
      assert.deepEqual([waiting.budget?.cause, waiting.budget?.used], ['held_in_flight', 600]);
      assert.equal(waiting.retryAfterMs !== null && waiting.retryAfterMs > 0 && waiting.retryAfterMs <= TO_DAY_END, true);
      await s.settle(held, l, 0, T0);
      assert.equal(await s.budgetUsed('k', l, at(DAY_END)), 0);
      assert.equal((await s.permit('k', l, 5, at(DAY_END))).budgetPeriod, '2026-11-23');
      assert.equal(await s.budgetUsed('k', l, at(DAY_END)), 5);
      assert.equal(await s.budgetUsed('never-seen', l, T0), 0);
      assert.equal(await s.budgetUsed('k', limits({ requestsPerMinute: 1 }), T0), 0);
    }));

    test('a month budget runs to the first of the next UTC month; a request settles into the period it was admitted in', run(async (s) => {
      const l = limits({ tokenBudget: { tokens: 1000, period: 'month' } });
      await s.permit('k', l, 600, at('2026-11-01T00:00:00.000Z'));
      const late = await s.permit('k', l, 400, at('2026-11-30T23:59:59.000Z'));
      assert.deepEqual(refused(await s.admit('k', l, 1, at('2026-11-30T23:59:59.000Z'))).budget, {
        kind: 'tokens', limit: 1000, used: 1000, requested: 1, period: 'month', resetsAt: '2026-12-01T00:00:00.000Z', spent: true, cause: 'spent',
      });
      await s.permit('k', l, 200, at('2026-12-01T00:00:00.000Z'));
      await s.settle(late, l, 100, at('2026-12-01T00:00:01.000Z'));
      assert.equal(await s.budgetUsed('k', l, at('2026-12-01T00:00:01.000Z')), 200);
      assert.equal(await s.budgetUsed('k', l, at('2026-11-30T23:59:59.500Z')), 700);
    }));

    test('cost budget: integer nanos of the amount, reservations and charges alike', run(async (s) => {
      const l = limits({ costBudget: { amount: 0.0025, period: 'month' } });
      const permit = await s.permit('k', l, { tokens: 10, costNanos: 2_000_000 }, T0);
      assert.equal(permit.costBudgetPeriod, '2026-11');
      assert.deepEqual(await s.used('k', l, T0), { tokens: 0, costNanos: 2_000_000 });
      await s.settle(permit, l, { tokens: 10, costNanos: 2_600_000 }, T0);
      assert.deepEqual(refused(await s.admit('k', l, { tokens: 1, costNanos: 0 }, T0)).budget, {
        kind: 'cost', limit: 2_500_000, used: 2_600_000, requested: 0, period: 'month', resetsAt: '2026-12-01T00:00:00.000Z', spent: true, cause: 'spent',
      });
    }));

    test('a charge is counted at most maxChargeMultiple times the reservation (2 when absent, none when null)', run(async (s) => {
      const l = limits({ tokenBudget: { tokens: 1_000_000, period: 'day' } });
      await s.settle(await s.permit('default', l, 100, T0), l, 1000, T0);
      assert.equal(await s.budgetUsed('default', l, T0), 200);
      await s.settle(await s.permit('given', l, 100, T0), l, 1000, T0, 5);
      assert.equal(await s.budgetUsed('given', l, T0), 500);
      await s.settle(await s.permit('none', l, 100, T0), l, 1000, T0, null);
      assert.equal(await s.budgetUsed('none', l, T0), 1000);
      await s.settle(await s.permit('within', l, 100, T0), l, 150, T0);
      assert.equal(await s.budgetUsed('within', l, T0), 150);
    }));
  });
}
