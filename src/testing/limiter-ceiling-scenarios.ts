// The built-in limiters' scenarios, continued: settlement counts a charge at most
// maxChargeMultiple times its reservation (src/limits/charge-ceiling.ts), in
// the tokens bucket and both budgets alike. Run for the built-in limiters
// beside limiter-scenarios.ts: the Redis limiter's script must be handed the
// counted charge, not the reported one.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_MAX_CHARGE_MULTIPLE } from '../limits/charge-ceiling.ts';
import { T0, allowed, limits, scenarioRunner, type MakeLimiter } from './limiter-scenario-harness.ts';

export function runChargeCeilingScenarios(name: string, makeLimiter: MakeLimiter): void {
  const run = scenarioRunner(makeLimiter);

  describe(`limiter charge ceiling scenarios: ${name}`, () => {
    test('the default ceiling is twice the reservation, in the token budget and the tokens bucket', run(async (s) => {
      assert.equal(DEFAULT_MAX_CHARGE_MULTIPLE, 2);
      const l = limits({ tokensPerMinute: 10_000, tokenBudget: { tokens: 1000, period: 'day' } });
      const permits = [];
      for (let i = 0; i < 11; i++) permits.push(await s.permit('k', l, 88, T0));
      assert.equal(await s.budgetUsed('k', l, T0), 968);
      for (const permit of permits) await s.settle(permit, l, 1000, T0);
      assert.equal(await s.budgetUsed('k', l, T0), 11 * 176);
      // 10000 - 11 * 176 = 8064 left in the bucket; 64 more leave 8000, 2000 short of full: 12 s at 10000/min.
      assert.deepEqual(allowed(await s.admit('k', limits({ tokensPerMinute: 10_000 }), 64, T0)).snapshot.tokens, { limit: 10_000, remaining: 8000, resetMs: 12_000 });
    }));

    test('a charge within the ceiling is counted as given; one above, at the ceiling', run(async (s) => {
      const l = limits({ tokenBudget: { tokens: 1_000_000, period: 'day' } });
      await s.settle(await s.permit('k', l, 100, T0), l, 200, T0);
      assert.equal(await s.budgetUsed('k', l, T0), 200);
      await s.settle(await s.permit('k', l, 100, T0), l, 201, T0);
      assert.equal(await s.budgetUsed('k', l, T0), 400);
      await s.settle(await s.permit('k', l, 100, T0), l, 5000, T0, 4);
      assert.equal(await s.budgetUsed('k', l, T0), 800);
      await s.settle(await s.permit('k', l, 100, T0), l, 5000, T0, 1);
      assert.equal(await s.budgetUsed('k', l, T0), 900);
      await s.settle(await s.permit('k', l, 100, T0), l, 5000, T0, null);
      assert.equal(await s.budgetUsed('k', l, T0), 5900);
    }));

    test('the cost budget has its own ceiling, from the reserved cost', run(async (s) => {
      const l = limits({ tokenBudget: { tokens: 1_000_000, period: 'day' }, costBudget: { amount: 1, period: 'day' } });
      const permit = await s.permit('k', l, { tokens: 1000, costNanos: 50_000 }, T0);
      // Tokens within (1500 <= 2000), cost above (400000 > 100000): each is bounded on its own.
      await s.settle(permit, l, { tokens: 1500, costNanos: 400_000 }, T0);
      assert.deepEqual(await s.used('k', l, T0), { tokens: 1500, costNanos: 100_000 });
    }));

    test('a multiple outside 1 to 100 is refused with a RangeError before anything changes', run(async (s) => {
      const l = limits({ tokenBudget: { tokens: 1000, period: 'day' } });
      const permit = await s.permit('k', l, 100, T0);
      for (const bad of [0, 1.5, 101, Number.NaN]) {
        await assert.rejects(s.settle(permit, l, 300, T0, bad), { name: 'RangeError', message: `maxChargeMultiple must be an integer from 1 to 100; got ${bad}.` });
      }
      assert.equal(await s.budgetUsed('k', l, T0), 100, 'the permit is still held at its reservation');
      await s.settle(permit, l, 300, T0);
      assert.equal(await s.budgetUsed('k', l, T0), 200);
    }));
  });
}
