// The built-in limiters' scenarios, continued: budgets that count requests in flight
// (reservations), settlement replacing a reservation, bad settlement input, cost budgets
// and leases. Run for the memory and Redis limiters beside limiter-scenarios.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BUDGET_COUNT_CEILING, DEFAULT_LEASE_MS, MAX_CHARGE_NANOS, type Charge } from '../limits/limiter.ts';
import { T0, allowed, at, limits, refused, scenarioRunner, type MakeLimiter } from './limiter-scenario-harness.ts';

const L = DEFAULT_LEASE_MS;
const DAY_END = '2026-11-23T00:00:00.000Z';
const MONTH_END = '2026-12-01T00:00:00.000Z';
const TO_DAY_END = 43_200_000;
const TO_MONTH_END = 734_400_000; // 8.5 days

export function runBudgetScenarios(name: string, makeLimiter: MakeLimiter): void {
  const run = scenarioRunner(makeLimiter);

  describe(`limiter budget scenarios: ${name}`, () => {
    test('burst: 40 parallel admits against a token budget spend at most the limit', run(async (s) => {
      const l = limits({ tokenBudget: { tokens: 5000, period: 'day' } });
      const decisions = await Promise.all(Array.from({ length: 40 }, () => s.admit('k', l, 700, T0)));
      const admitted = decisions.filter((d) => d.allowed);
      assert.equal(admitted.length, 7); // 7 * 700 = 4900; 100 left
      for (const d of decisions.filter((d) => !d.allowed)) {
        assert.deepEqual(d, {
          allowed: false, refusal: 'budget', retryAfterMs: 1000, snapshot: {},
          budget: { kind: 'tokens', limit: 5000, used: 4900, requested: 700, period: 'day', resetsAt: DAY_END, spent: false, cause: 'held_in_flight' },
        });
      }
      // Every request spends the most its reservation allows.
      for (const d of admitted) await s.settle(allowed(d).permit, l, 700, T0);
      assert.equal(await s.budgetUsed('k', l, T0), 4900);
      await s.settle(await s.permit('k', l, 100, T0), l, 100, T0);
      assert.equal(refused(await s.admit('k', l, 1, T0)).budget?.spent, true);
      assert.equal(await s.budgetUsed('k', l, T0), 5000);

      // Requests larger than the whole budget: none passes, even on the empty window.
      const big = await Promise.all(Array.from({ length: 40 }, () => s.admit('big', l, 6000, T0)));
      assert.equal(big.filter((d) => d.allowed).length, 0);
      assert.equal(await s.budgetUsed('big', l, T0), 0);
    }));

    test('burst: tokens per minute count reservations in flight the same way', run(async (s) => {
      const l = limits({ tokensPerMinute: 5000 });
      const decisions = await Promise.all(Array.from({ length: 40 }, () => s.admit('k', l, 700, T0)));
      assert.equal(decisions.filter((d) => d.allowed).length, 7);
      assert.deepEqual(decisions.find((d) => !d.allowed), {
        allowed: false, refusal: 'tokens', retryAfterMs: 7200, snapshot: { tokens: { limit: 5000, remaining: 100, resetMs: 58_800 } },
      });
    }));

    test('burst: a cost budget holds against 40 parallel admits', run(async (s) => {
      const l = limits({ costBudget: { amount: 0.01, period: 'day' } }); // 10_000_000 nanos
      const decisions = await Promise.all(Array.from({ length: 40 }, () => s.admit('k', l, { tokens: 100, costNanos: 3_000_000 }, T0)));
      assert.equal(decisions.filter((d) => d.allowed).length, 3);
      assert.deepEqual(refused(decisions[39]!).budget, {
        kind: 'cost', limit: 10_000_000, used: 9_000_000, requested: 3_000_000, period: 'day', resetsAt: DAY_END, spent: false, cause: 'held_in_flight',
      });
      assert.deepEqual(await s.used('k', l, T0), { tokens: 0, costNanos: 9_000_000 });
    }));

    test('settlement replaces the reservation in the tokens bucket and both budget windows', run(async (s) => {
      const l = limits({ tokensPerMinute: 60_000, tokenBudget: { tokens: 10_000, period: 'day' }, costBudget: { amount: 0.001, period: 'month' } });
      const a = await s.permit('k', l, { tokens: 4000, costNanos: 400_000 }, T0);
      const b = await s.permit('k', l, { tokens: 3000, costNanos: 300_000 }, T0);
      // Both in flight count.
      assert.deepEqual(await s.used('k', l, T0), { tokens: 7000, costNanos: 700_000 });
      assert.deepEqual(refused(await s.admit('k', l, { tokens: 3001, costNanos: 1 }, T0)).budget, {
        kind: 'tokens', limit: 10_000, used: 7000, requested: 3001, period: 'day', resetsAt: DAY_END, spent: false, cause: 'held_in_flight',
      });
      assert.deepEqual(refused(await s.admit('k', l, { tokens: 1, costNanos: 300_001 }, T0)).budget, {
        kind: 'cost', limit: 1_000_000, used: 700_000, requested: 300_001, period: 'month', resetsAt: MONTH_END, spent: false, cause: 'held_in_flight',
      });
      await s.settle(a, l, { tokens: 1000, costNanos: 150_000 }, T0);
      assert.deepEqual(await s.used('k', l, T0), { tokens: 4000, costNanos: 450_000 });
      // The bucket: 60000 - 4000 - 3000 + 3000 given back.
      assert.deepEqual(allowed(await s.admit('k', l, 0, T0)).snapshot, { tokens: { limit: 60_000, remaining: 56_000, resetMs: 4000 } });
      await s.settle(b, l, { tokens: 3500, costNanos: 300_000 }, T0);
      assert.deepEqual(await s.used('k', l, T0), { tokens: 4500, costNanos: 450_000 });
      allowed(await s.admit('k', l, { tokens: 5500, costNanos: 550_000 }, T0)); // exactly the room left
    }));

    test('bad settlement input is rejected before anything changes; the permit stays held', run(async (s) => {
      const l = limits({ concurrentRequests: 1, tokensPerMinute: 1000, tokenBudget: { tokens: 1000, period: 'day' }, costBudget: { amount: 1, period: 'day' } });
      const permit = await s.permit('k', l, { tokens: 500, costNanos: 5000 }, T0);
      const bad: Charge[] = [
        { tokens: -1, costNanos: 0 }, { tokens: 1.5, costNanos: 0 }, { tokens: Number.NaN, costNanos: 0 }, { tokens: 1_000_000_001, costNanos: 0 },
        { tokens: 0, costNanos: -1 }, { tokens: 0, costNanos: 0.5 }, { tokens: 0, costNanos: 1e15 + 1 }, { tokens: 0, costNanos: Number.POSITIVE_INFINITY },
        { tokens: 2e9 } as unknown as Charge, null as unknown as Charge,
      ];
      for (const charge of bad) await assert.rejects(s.limiter.settle({ permit, limits: l, charge, nowMs: T0 }), RangeError, JSON.stringify(charge));
      await assert.rejects(s.settle(permit, l, -1, T0), { name: 'RangeError', message: 'charge.tokens must be an integer from 0 to 1000000000; got -1.' });
      await assert.rejects(s.settle(permit, l, { tokens: 0, costNanos: 2e15 }, T0), {
        name: 'RangeError', message: 'charge.costNanos must be an integer from 0 to 1000000000000000; got 2000000000000000.',
      });
      await assert.rejects(s.settle(permit, l, 0, T0 + 0.5), RangeError);
      await assert.rejects(s.renew(permit, -1), RangeError);
      for (const reservation of bad) await assert.rejects(s.limiter.admit({ keyId: s.key('k'), limits: l, reservation, nowMs: T0 }), RangeError);
      // Nothing changed: the slot is held and the counts hold the reservation.
      assert.deepEqual(refused(await s.admit('k', l, 0, T0)), {
        allowed: false, refusal: 'concurrency', retryAfterMs: 1000, snapshot: { tokens: { limit: 1000, remaining: 500, resetMs: 30_000 } },
      });
      assert.deepEqual(await s.used('k', l, T0), { tokens: 500, costNanos: 5000 });
      await s.settle(permit, l, { tokens: 100, costNanos: 1000 }, T0);
      assert.deepEqual(await s.used('k', l, T0), { tokens: 100, costNanos: 1000 });
      assert.deepEqual(allowed(await s.admit('k', l, 0, T0)).snapshot, { tokens: { limit: 1000, remaining: 900, resetMs: 6000 } });
    }));

    test('cost budget: money per period in nanos; refused when spent or when the request does not fit', run(async (s) => {
      const l = limits({ costBudget: { amount: 0.0025, period: 'month' } }); // 2_500_000 nanos
      const first = await s.permit('k', l, { tokens: 10, costNanos: 1_000_000 }, T0);
      assert.deepEqual([first.budgetPeriod, first.costBudgetPeriod], [null, '2026-11']);
      await s.permit('k', l, { tokens: 10, costNanos: 1_000_000 }, T0);
      assert.deepEqual(await s.admit('k', l, { tokens: 10, costNanos: 600_000 }, T0), {
        allowed: false, refusal: 'budget', retryAfterMs: 1000, snapshot: {},
        budget: { kind: 'cost', limit: 2_500_000, used: 2_000_000, requested: 600_000, period: 'month', resetsAt: MONTH_END, spent: false, cause: 'held_in_flight' },
      });
      allowed(await s.admit('k', l, 10, T0)); // unpriced (cost 0): fits while the budget is not spent
      await s.settle(first, l, { tokens: 10, costNanos: 1_600_000 }, T0);
      assert.deepEqual(await s.admit('k', l, 10, T0), {
        allowed: false, refusal: 'budget', retryAfterMs: TO_MONTH_END, snapshot: {},
        budget: { kind: 'cost', limit: 2_500_000, used: 2_600_000, requested: 0, period: 'month', resetsAt: MONTH_END, spent: true, cause: 'spent' },
      });
      assert.deepEqual(await s.used('k', l, T0), { tokens: 0, costNanos: 2_600_000 });
      assert.deepEqual(await s.used('k', l, at(MONTH_END)), { tokens: 0, costNanos: 0 });
      allowed(await s.admit('k', l, { tokens: 1, costNanos: 2_500_000 }, at(MONTH_END)));

      // Spent exactly: even a request of cost 0 is refused.
      const tiny = limits({ costBudget: { amount: 0.000001, period: 'day' } });
      await s.permit('tiny', tiny, { tokens: 0, costNanos: 1000 }, T0);
      assert.deepEqual(refused(await s.admit('tiny', tiny, 0, T0)).budget, {
        kind: 'cost', limit: 1000, used: 1000, requested: 0, period: 'day', resetsAt: DAY_END, spent: true, cause: 'spent',
      });
    }));

    test('two budgets failing: a spent one is named before one that does not fit, else the longer wait', run(async (s) => {
      const l = limits({ tokenBudget: { tokens: 100, period: 'month' }, costBudget: { amount: 0.000001, period: 'day' } });
      await s.permit('one', l, { tokens: 50, costNanos: 1000 }, T0);
      const first = refused(await s.admit('one', l, { tokens: 60, costNanos: 1 }, T0)); // tokens do not fit, cost spent
      assert.deepEqual([first.budget?.kind, first.budget?.spent, first.retryAfterMs], ['cost', true, TO_DAY_END]);
      await s.permit('two', l, { tokens: 100, costNanos: 1000 }, T0);
      const second = refused(await s.admit('two', l, { tokens: 1, costNanos: 1 }, T0)); // both spent: the month is longer
      assert.deepEqual([second.budget?.kind, second.budget?.spent, second.retryAfterMs], ['tokens', true, TO_MONTH_END]);
    }));

    test('a reservation larger than the whole budget is never admitted, and no retry is suggested', run(async (s) => {
      const l = limits({ tokenBudget: { tokens: 1000, period: 'day' }, costBudget: { amount: 0.01, period: 'day' } });
      // The empty window, nothing in flight: still refused, with no wait.
      assert.deepEqual(await s.admit('k', l, { tokens: 5000, costNanos: 1 }, T0), {
        allowed: false, refusal: 'budget', retryAfterMs: null, snapshot: {},
        budget: { kind: 'tokens', limit: 1000, used: 0, requested: 5000, period: 'day', resetsAt: DAY_END, spent: false, cause: 'exceeds_budget' },
      });
      // The cost case of the report: 0.0617 reserved against 0.01 a day, some of it spent.
      await s.settle(await s.permit('k', l, { tokens: 10, costNanos: 6600 }, T0), l, { tokens: 10, costNanos: 6600 }, T0);
      assert.deepEqual(await s.admit('k', l, { tokens: 100, costNanos: 61_700_000 }, T0), {
        allowed: false, refusal: 'budget', retryAfterMs: null, snapshot: {},
        budget: { kind: 'cost', limit: 10_000_000, used: 6600, requested: 61_700_000, period: 'day', resetsAt: DAY_END, spent: false, cause: 'exceeds_budget' },
      });
      // Named before a spent budget: the spent one would pass tomorrow, this never.
      const spentTokens = limits({ tokenBudget: { tokens: 10, period: 'month' }, costBudget: { amount: 0.01, period: 'day' } });
      await s.settle(await s.permit('s', spentTokens, 10, T0), spentTokens, 10, T0);
      const both = refused(await s.admit('s', spentTokens, { tokens: 1, costNanos: 20_000_000 }, T0));
      assert.deepEqual([both.budget?.kind, both.budget?.cause, both.retryAfterMs], ['cost', 'exceeds_budget', null]);
      // Exactly the whole budget fits an empty window.
      allowed(await s.admit('fits', l, { tokens: 1000, costNanos: 10_000_000 }, T0));
      assert.deepEqual(await s.used('fits', l, T0), { tokens: 1000, costNanos: 10_000_000 });
    }));

    test('a reservation that does not fit what is left: a short retry while requests are in flight, else the period end', run(async (s) => {
      const l = limits({ tokenBudget: { tokens: 1000, period: 'day' } });
      const held = await s.permit('k', l, 600, T0);
      assert.deepEqual(await s.admit('k', l, 500, T0), {
        allowed: false, refusal: 'budget', retryAfterMs: 1000, snapshot: {},
        budget: { kind: 'tokens', limit: 1000, used: 600, requested: 500, period: 'day', resetsAt: DAY_END, spent: false, cause: 'held_in_flight' },
      });
      // Settled at the whole reservation: nothing in flight, and nothing comes back before midnight.
      await s.settle(held, l, 600, T0);
      assert.deepEqual(await s.admit('k', l, 500, T0), {
        allowed: false, refusal: 'budget', retryAfterMs: TO_DAY_END, snapshot: {},
        budget: { kind: 'tokens', limit: 1000, used: 600, requested: 500, period: 'day', resetsAt: DAY_END, spent: false, cause: 'too_little_left' },
      });
      allowed(await s.admit('k', l, 400, T0));
      allowed(await s.admit('k', l, 500, at(DAY_END)));
    }));

    test('a budget count stays exact: it stops at BUDGET_COUNT_CEILING, far above every budget', run(async (s) => {
      const l = limits({ costBudget: { amount: 1_000_000, period: 'day' } }); // MAX_CHARGE_NANOS
      const permits = [];
      for (let i = 0; i < 5; i++) permits.push(await s.permit('k', l, { tokens: 0, costNanos: 1 }, T0));
      // Charges far above their reservations, beyond any charge ceiling: the count's own bound.
      for (const permit of permits) await s.settle(permit, l, { tokens: 0, costNanos: MAX_CHARGE_NANOS }, T0, null);
      assert.deepEqual(await s.used('k', l, T0), { tokens: 0, costNanos: BUDGET_COUNT_CEILING });
      assert.deepEqual(refused(await s.admit('k', l, { tokens: 0, costNanos: MAX_CHARGE_NANOS }, T0)).budget, {
        kind: 'cost', limit: MAX_CHARGE_NANOS, used: BUDGET_COUNT_CEILING, requested: MAX_CHARGE_NANOS, period: 'day', resetsAt: DAY_END, spent: true, cause: 'spent',
      });
    }));

    test('renew keeps a permit alive past the lease; settlement then still corrects it', run(async (s) => {
      assert.equal(s.limiter.leaseMs, DEFAULT_LEASE_MS);
      const l = limits({ concurrentRequests: 1, tokenBudget: { tokens: 10_000, period: 'day' } });
      const permit = await s.permit('k', l, 1000, T0);
      // Renewed every lease / 3, as the gateway does, for five leases.
      for (let t = T0 + L / 3; t < T0 + 5 * L; t += L / 3) assert.equal(await s.renew(permit, t), true, `renew at +${t - T0}`);
      assert.equal(refused(await s.admit('k', l, 0, T0 + 5 * L)).refusal, 'concurrency');
      await s.settle(permit, l, 300, T0 + 5 * L);
      assert.equal(await s.budgetUsed('k', l, T0 + 5 * L), 300);
      allowed(await s.admit('k', l, 0, T0 + 5 * L));

      // A renew with an earlier clock never shortens the lease.
      const back = await s.permit('b', l, 0, T0);
      assert.equal(await s.renew(back, T0 + L - 1), true); // until T0 + 2L - 1
      assert.equal(await s.renew(back, T0), true);
      assert.equal(refused(await s.admit('b', l, 0, T0 + 2 * L - 2)).refusal, 'concurrency');
      allowed(await s.admit('b', l, 0, T0 + 2 * L - 1));
    }));

    test('an unrenewed permit expires (its instance died): the slot frees, the reservation stays charged', run(async (s) => {
      const l = limits({ concurrentRequests: 1, tokenBudget: { tokens: 10_000, period: 'day' }, costBudget: { amount: 1, period: 'day' } });
      const dead = await s.permit('k', l, { tokens: 1000, costNanos: 1000 }, T0);
      assert.equal(await s.renew(dead, T0 + L / 3), true);
      const expiry = T0 + L / 3 + L;
      assert.equal(refused(await s.admit('k', l, 0, expiry - 1)).refusal, 'concurrency');
      const next = await s.permit('k', l, 0, expiry);
      assert.equal(await s.renew(dead, expiry), false);
      await s.settle(dead, l, 0, expiry);
      assert.deepEqual(await s.used('k', l, expiry), { tokens: 1000, costNanos: 1000 });
      assert.equal(await s.renew(next, expiry + 1), true);

      // Expired and still stored (no admission since): renew says false, as does settle nothing.
      const lone = await s.permit('lone', l, 5, T0);
      assert.equal(await s.renew(lone, T0 + L), false);
      assert.equal(await s.renew(lone, T0 + 1), false);
      await s.settle(lone, l, 0, T0 + 1);
      assert.equal(await s.budgetUsed('lone', l, T0 + 1), 5);
    }));

    test('renew after settle returns false', run(async (s) => {
      const l = limits({ concurrentRequests: 2 });
      const permit = await s.permit('k', l, 10, T0);
      assert.equal(await s.renew(permit, T0 + 1), true);
      await s.settle(permit, l, 10, T0 + 2);
      assert.equal(await s.renew(permit, T0 + 3), false);
      await s.settle(permit, l, 10, T0 + 4);
      assert.equal(await s.renew(permit, T0 + 5), false);
    }));
  });
}
