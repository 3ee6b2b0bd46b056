// The built-in limiters' exact behaviour as one table of scenarios, run for the memory
// and the Redis limiter (limiter-builtin.ts); a host's limiter is held to
// limiter-port-scenarios.ts instead. Time is always injected (nowMs), never read.
// The budget, reservation, cost and lease cases are limiter-budget-scenarios.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { NO_LIMITS } from '../limits/key-limits.ts';
import { DEFAULT_LEASE_MS } from '../limits/limiter.ts';
import { T0, allowed, at, limits, refused, scenarioRunner, type MakeLimiter } from './limiter-scenario-harness.ts';

export function runLimiterScenarios(name: string, makeLimiter: MakeLimiter): void {
  const run = scenarioRunner(makeLimiter);

  describe(`limiter scenarios: ${name}`, () => {
    test('no limits: always admitted, empty snapshot, a permit whose settle does nothing', run(async (s) => {
      for (let i = 0; i < 100; i++) {
        const decision = allowed(await s.admit('free', NO_LIMITS, 1_000_000, T0));
        assert.deepEqual(decision.snapshot, {});
        assert.equal(decision.permit.keyId, s.key('free'));
        assert.deepEqual(decision.permit.reservation, { tokens: 1_000_000, costNanos: 0 });
        assert.equal(decision.permit.admittedAtMs, T0);
        assert.equal(decision.permit.budgetPeriod, null);
        assert.equal(decision.permit.costBudgetPeriod, null);
        assert.equal(await s.renew(decision.permit, T0), false);
        await s.settle(decision.permit, NO_LIMITS, 5, T0);
      }
      assert.deepEqual(await s.used('free', NO_LIMITS, T0), { tokens: 0, costNanos: 0 });
    }));

    test('permits carry the admission and have distinct ids', run(async (s) => {
      const l = limits({ requestsPerMinute: 10, tokenBudget: { tokens: 100, period: 'month' }, costBudget: { amount: 1, period: 'day' } });
      const a = await s.permit('k', l, { tokens: 7, costNanos: 70 }, T0);
      const b = await s.permit('k', l, 8, T0 + 1);
      assert.deepEqual({ ...a, id: '' }, {
        keyId: s.key('k'), id: '', reservation: { tokens: 7, costNanos: 70 }, admittedAtMs: T0, budgetPeriod: '2026-11', costBudgetPeriod: '2026-11-22',
      });
      assert.equal(Object.isFrozen(a), true);
      assert.equal(Object.isFrozen(a.reservation), true);
      assert.equal(b.admittedAtMs, T0 + 1);
      assert.notEqual(a.id, b.id);
    }));

    test('requests: a burst of the limit, then a refusal until one request has refilled', run(async (s) => {
      const l = limits({ requestsPerMinute: 3 });
      assert.deepEqual(allowed(await s.admit('k', l, 0, T0)).snapshot, { requests: { limit: 3, remaining: 2, resetMs: 20_000 } });
      assert.deepEqual(allowed(await s.admit('k', l, 0, T0)).snapshot, { requests: { limit: 3, remaining: 1, resetMs: 40_000 } });
      assert.deepEqual(allowed(await s.admit('k', l, 0, T0)).snapshot, { requests: { limit: 3, remaining: 0, resetMs: 60_000 } });
      assert.deepEqual(await s.admit('k', l, 0, T0), {
        allowed: false, refusal: 'requests', retryAfterMs: 20_000, snapshot: { requests: { limit: 3, remaining: 0, resetMs: 60_000 } },
      });
      assert.deepEqual(await s.admit('k', l, 0, T0 + 19_999), {
        allowed: false, refusal: 'requests', retryAfterMs: 1, snapshot: { requests: { limit: 3, remaining: 0, resetMs: 40_001 } },
      });
      assert.deepEqual(allowed(await s.admit('k', l, 0, T0 + 20_000)).snapshot, { requests: { limit: 3, remaining: 0, resetMs: 60_000 } });
    }));

    test('requests: refill stops at the limit after a long idle time', run(async (s) => {
      const l = limits({ requestsPerMinute: 2 });
      await s.permit('k', l, 0, T0);
      await s.permit('k', l, 0, T0);
      const later = T0 + 10 * 86_400_000;
      assert.deepEqual(allowed(await s.admit('k', l, 0, later)).snapshot, { requests: { limit: 2, remaining: 1, resetMs: 30_000 } });
      assert.deepEqual(allowed(await s.admit('k', l, 0, later)).snapshot, { requests: { limit: 2, remaining: 0, resetMs: 60_000 } });
      assert.equal(refused(await s.admit('k', l, 0, later)).refusal, 'requests');
    }));

    test('requests: refill is exact for a limit that does not divide a minute', run(async (s) => {
      const l = limits({ requestsPerMinute: 7 });
      for (let i = 0; i < 7; i++) await s.permit('k', l, 0, T0);
      assert.equal(refused(await s.admit('k', l, 0, T0)).retryAfterMs, 8572); // ceil(60000 / 7)
      assert.equal(refused(await s.admit('k', l, 0, T0 + 8571)).retryAfterMs, 1);
      assert.deepEqual(allowed(await s.admit('k', l, 0, T0 + 8572)).snapshot, { requests: { limit: 7, remaining: 0, resetMs: 60_000 } });
    }));

    test('tokens: each request costs its reservation; a refusal waits for the missing tokens', run(async (s) => {
      const l = limits({ tokensPerMinute: 1000 });
      assert.deepEqual(allowed(await s.admit('k', l, 400, T0)).snapshot, { tokens: { limit: 1000, remaining: 600, resetMs: 24_000 } });
      assert.deepEqual(allowed(await s.admit('k', l, 400, T0)).snapshot, { tokens: { limit: 1000, remaining: 200, resetMs: 48_000 } });
      assert.deepEqual(await s.admit('k', l, 400, T0), {
        allowed: false, refusal: 'tokens', retryAfterMs: 12_000, snapshot: { tokens: { limit: 1000, remaining: 200, resetMs: 48_000 } },
      });
      assert.equal(allowed(await s.admit('k', l, 400, T0 + 12_000)).snapshot.tokens?.remaining, 0);
    }));

    test('tokens: a request bigger than the bucket passes when it is full and leaves debt', run(async (s) => {
      const l = limits({ tokensPerMinute: 1000 });
      assert.deepEqual(allowed(await s.admit('k', l, 5000, T0)).snapshot, { tokens: { limit: 1000, remaining: 0, resetMs: 300_000 } });
      // 4000 tokens of debt plus the 1 needed, at 1000 per minute.
      assert.equal(refused(await s.admit('k', l, 1, T0)).retryAfterMs, 240_060);
      // At +240060 the bucket holds 1 token; a big request needs a full bucket (1000).
      assert.equal(refused(await s.admit('k', l, 5000, T0 + 240_060)).retryAfterMs, 59_940);
      assert.equal(refused(await s.admit('k', l, 5000, T0 + 299_999)).retryAfterMs, 1);
      allowed(await s.admit('k', l, 5000, T0 + 300_000));
    }));

    test('settlement gives back what the reply did not use', run(async (s) => {
      const l = limits({ tokensPerMinute: 1000 });
      const permit = await s.permit('k', l, 800, T0);
      await s.settle(permit, l, 100, T0);
      assert.deepEqual(allowed(await s.admit('k', l, 0, T0)).snapshot, { tokens: { limit: 1000, remaining: 900, resetMs: 6000 } });
    }));

    test('settlement gives back no more than the capacity', run(async (s) => {
      const l = limits({ tokensPerMinute: 1000 });
      const permit = await s.permit('k', l, 500, T0);
      await s.settle(permit, l, 0, T0 + 60_000); // already full again by then
      assert.deepEqual(allowed(await s.admit('k', l, 1000, T0 + 60_000)).snapshot, { tokens: { limit: 1000, remaining: 0, resetMs: 60_000 } });
      assert.equal(refused(await s.admit('k', l, 1, T0 + 60_000)).refusal, 'tokens');
    }));

    test('settlement above the reservation charges the difference, into debt', run(async (s) => {
      const l = limits({ tokensPerMinute: 1000 });
      const permit = await s.permit('k', l, 100, T0);
      await s.settle(permit, l, 1500, T0, 15); // 900 - 1400 = -500, at a ceiling of 15 times the reservation
      assert.deepEqual(await s.admit('k', l, 10, T0), {
        allowed: false, refusal: 'tokens', retryAfterMs: 30_600, snapshot: { tokens: { limit: 1000, remaining: 0, resetMs: 90_000 } },
      });
      assert.equal(refused(await s.admit('k', l, 10, T0 + 30_599)).retryAfterMs, 1);
      allowed(await s.admit('k', l, 10, T0 + 30_600));
    }));

    test('concurrency: unsettled permits hold slots; settling frees one', run(async (s) => {
      const l = limits({ concurrentRequests: 2 });
      const first = await s.permit('k', l, 0, T0);
      await s.permit('k', l, 0, T0);
      assert.deepEqual(await s.admit('k', l, 0, T0), { allowed: false, refusal: 'concurrency', retryAfterMs: 1000, snapshot: {} });
      await s.settle(first, l, 0, T0 + 5);
      await s.permit('k', l, 0, T0 + 5);
      assert.equal(refused(await s.admit('k', l, 0, T0 + 5)).refusal, 'concurrency');
    }));

    test('concurrency: a lease expires; settling the expired permit later changes nothing', run(async (s) => {
      const l = limits({ concurrentRequests: 1, tokensPerMinute: 1000 });
      const stale = await s.permit('k', l, 600, T0);
      assert.equal(refused(await s.admit('k', l, 0, T0 + DEFAULT_LEASE_MS - 1)).refusal, 'concurrency');
      const fresh = await s.permit('k', l, 600, T0 + DEFAULT_LEASE_MS);
      await s.settle(stale, l, 0, T0 + DEFAULT_LEASE_MS);
      // Neither the slot of `fresh` nor 600 tokens came back.
      assert.deepEqual(await s.admit('k', l, 0, T0 + DEFAULT_LEASE_MS), {
        allowed: false, refusal: 'concurrency', retryAfterMs: 1000, snapshot: { tokens: { limit: 1000, remaining: 400, resetMs: 36_000 } },
      });
      await s.settle(fresh, l, 600, T0 + DEFAULT_LEASE_MS);
      allowed(await s.admit('k', l, 0, T0 + DEFAULT_LEASE_MS));

      // Settled after its lease with nothing else in between: the reservation stays charged.
      const b = limits({ tokenBudget: { tokens: 10_000, period: 'day' } });
      const slow = await s.permit('b', b, 600, T0);
      await s.settle(slow, b, 0, T0 + DEFAULT_LEASE_MS);
      assert.equal(await s.budgetUsed('b', b, T0 + DEFAULT_LEASE_MS), 600);
      const quick = await s.permit('b', b, 600, T0 + DEFAULT_LEASE_MS);
      await s.settle(quick, b, 0, T0 + 2 * DEFAULT_LEASE_MS - 1);
      assert.equal(await s.budgetUsed('b', b, T0 + DEFAULT_LEASE_MS), 600);
    }));

    test('settle is idempotent: tokens, budget and the slot are corrected once', run(async (s) => {
      const l = limits({ tokensPerMinute: 1000, concurrentRequests: 2, tokenBudget: { tokens: 10_000, period: 'day' } });
      const first = await s.permit('k', l, 500, T0);
      await s.permit('k', l, 100, T0);
      await s.settle(first, l, 100, T0);
      await s.settle(first, l, 100, T0);
      assert.equal(await s.budgetUsed('k', l, T0), 200);
      assert.deepEqual(allowed(await s.admit('k', l, 0, T0)).snapshot, { tokens: { limit: 1000, remaining: 800, resetMs: 12_000 } });
      assert.equal(refused(await s.admit('k', l, 0, T0)).refusal, 'concurrency');
    }));

    test('a refusal charges nothing: not the requests, tokens, budget or a slot', run(async (s) => {
      const l = limits({ requestsPerMinute: 10, tokensPerMinute: 100, concurrentRequests: 5, tokenBudget: { tokens: 1000, period: 'day' } });
      await s.permit('tokens', l, 100, T0);
      const snapshot = { requests: { limit: 10, remaining: 9, resetMs: 6000 }, tokens: { limit: 100, remaining: 0, resetMs: 60_000 } };
      for (let i = 0; i < 3; i++) {
        assert.deepEqual(await s.admit('tokens', l, 50, T0), { allowed: false, refusal: 'tokens', retryAfterMs: 30_000, snapshot });
      }
      assert.equal(await s.budgetUsed('tokens', l, T0), 100);

      const one = limits({ requestsPerMinute: 10, tokensPerMinute: 1000, concurrentRequests: 1, tokenBudget: { tokens: 1000, period: 'day' } });
      const held = await s.permit('slot', one, 100, T0);
      assert.equal(refused(await s.admit('slot', one, 100, T0)).refusal, 'concurrency');
      assert.equal(await s.budgetUsed('slot', one, T0), 100);
      await s.settle(held, one, 100, T0);
      assert.deepEqual(allowed(await s.admit('slot', one, 0, T0)).snapshot, {
        requests: { limit: 10, remaining: 8, resetMs: 12_000 }, tokens: { limit: 1000, remaining: 900, resetMs: 6000 },
      });

      const small = limits({ requestsPerMinute: 10, tokenBudget: { tokens: 100, period: 'day' } });
      await s.permit('budget', small, 100, T0);
      assert.equal(refused(await s.admit('budget', small, 1, T0)).refusal, 'budget');
      assert.deepEqual(refused(await s.admit('budget', small, 1, T0)).snapshot, { requests: { limit: 10, remaining: 9, resetMs: 6000 } });
      assert.equal(await s.budgetUsed('budget', small, T0), 100);
    }));

    test('budget (day): refused once spent, with the period end; settlement corrects the count', run(async (s) => {
      const l = limits({ tokenBudget: { tokens: 1000, period: 'day' } });
      const first = await s.permit('k', l, 600, T0);
      assert.equal(first.budgetPeriod, '2026-11-22');
      assert.equal(await s.budgetUsed('k', l, T0), 600);
      await s.settle(first, l, 700, T0);
      assert.equal(await s.budgetUsed('k', l, T0), 700);
      // 300 left: a reservation of 400 does not fit (and with nothing in flight, not before midnight); one of 300 does.
      assert.deepEqual(await s.admit('k', l, 400, T0), {
        allowed: false, refusal: 'budget', retryAfterMs: 43_200_000, snapshot: {},
        budget: { kind: 'tokens', limit: 1000, used: 700, requested: 400, period: 'day', resetsAt: '2026-11-23T00:00:00.000Z', spent: false, cause: 'too_little_left' },
      });
      const last = await s.permit('k', l, 300, T0);
      assert.equal(await s.budgetUsed('k', l, T0), 1000);
      await s.settle(last, l, 400, T0); // a charge above its reservation (an image beyond its bound)
      assert.equal(await s.budgetUsed('k', l, T0), 1100);
      assert.deepEqual(await s.admit('k', l, 1, T0), {
        allowed: false, refusal: 'budget', retryAfterMs: 43_200_000, snapshot: {},
        budget: { kind: 'tokens', limit: 1000, used: 1100, requested: 1, period: 'day', resetsAt: '2026-11-23T00:00:00.000Z', spent: true, cause: 'spent' },
      });
      assert.equal(refused(await s.admit('k', l, 1, at('2026-11-22T23:59:59.999Z'))).retryAfterMs, 1);
      assert.equal(await s.budgetUsed('k', l, at('2026-11-23T00:00:00.000Z')), 0);
      const next = await s.permit('k', l, 5, at('2026-11-23T00:00:00.000Z'));
      assert.equal(next.budgetPeriod, '2026-11-23');
      assert.equal(await s.budgetUsed('k', l, at('2026-11-23T00:00:00.000Z')), 5);
    }));

    test('budget (month): days do not reset it', run(async (s) => {
      const l = limits({ tokenBudget: { tokens: 1000, period: 'month' } });
      await s.permit('k', l, 600, at('2026-11-01T00:00:00.000Z'));
      await s.permit('k', l, 400, at('2026-11-30T08:00:00.000Z'));
      assert.deepEqual(refused(await s.admit('k', l, 1, at('2026-11-30T08:00:00.000Z'))).budget, {
        kind: 'tokens', limit: 1000, used: 1000, requested: 1, period: 'month', resetsAt: '2026-12-01T00:00:00.000Z', spent: true, cause: 'spent',
      });
      allowed(await s.admit('k', l, 1, at('2026-12-01T00:00:00.000Z')));
    }));

    const edges: { now: string; period: 'day' | 'month'; id: string; resetsAt: string; retryAfterMs: number; nextId: string }[] = [
      { now: '2026-11-30T23:00:00.000Z', period: 'month', id: '2026-11', resetsAt: '2026-12-01T00:00:00.000Z', retryAfterMs: 3_600_000, nextId: '2026-12' },
      { now: '2026-04-30T00:00:00.000Z', period: 'month', id: '2026-04', resetsAt: '2026-05-01T00:00:00.000Z', retryAfterMs: 86_400_000, nextId: '2026-05' },
      { now: '2026-01-31T00:00:00.000Z', period: 'month', id: '2026-01', resetsAt: '2026-02-01T00:00:00.000Z', retryAfterMs: 86_400_000, nextId: '2026-02' },
      { now: '2027-02-15T00:00:00.000Z', period: 'month', id: '2027-02', resetsAt: '2027-03-01T00:00:00.000Z', retryAfterMs: 14 * 86_400_000, nextId: '2027-03' },
      { now: '2028-02-15T00:00:00.000Z', period: 'month', id: '2028-02', resetsAt: '2028-03-01T00:00:00.000Z', retryAfterMs: 15 * 86_400_000, nextId: '2028-03' },
      { now: '2026-12-31T23:59:59.999Z', period: 'month', id: '2026-12', resetsAt: '2027-01-01T00:00:00.000Z', retryAfterMs: 1, nextId: '2027-01' },
      { now: '2026-12-31T23:59:59.999Z', period: 'day', id: '2026-12-31', resetsAt: '2027-01-01T00:00:00.000Z', retryAfterMs: 1, nextId: '2027-01-01' },
      { now: '2028-02-28T18:00:00.000Z', period: 'day', id: '2028-02-28', resetsAt: '2028-02-29T00:00:00.000Z', retryAfterMs: 21_600_000, nextId: '2028-02-29' },
      { now: '2027-02-28T18:00:00.000Z', period: 'day', id: '2027-02-28', resetsAt: '2027-03-01T00:00:00.000Z', retryAfterMs: 21_600_000, nextId: '2027-03-01' },
    ];
    test('budget periods: month lengths, leap years and the year end', run(async (s) => {
      for (const [i, edge] of edges.entries()) {
        const l = limits({ tokenBudget: { tokens: 10, period: edge.period } });
        const key = `edge${i}`;
        assert.equal((await s.permit(key, l, 10, at(edge.now))).budgetPeriod, edge.id, edge.now);
        assert.deepEqual(refused(await s.admit(key, l, 1, at(edge.now))), {
          allowed: false, refusal: 'budget', retryAfterMs: edge.retryAfterMs, snapshot: {},
          budget: { kind: 'tokens', limit: 10, used: 10, requested: 1, period: edge.period, resetsAt: edge.resetsAt, spent: true, cause: 'spent' },
        }, edge.now);
        assert.equal(await s.budgetUsed(key, l, at(edge.resetsAt)), 0);
        assert.equal((await s.permit(key, l, 10, at(edge.resetsAt))).budgetPeriod, edge.nextId, edge.now);
      }
    }));

    test('a request spanning midnight settles into the day it was admitted', run(async (s) => {
      const l = limits({ tokenBudget: { tokens: 1000, period: 'day' } });
      const late = await s.permit('k', l, 500, at('2026-11-22T23:59:59.000Z'));
      await s.permit('k', l, 200, at('2026-11-23T00:00:00.500Z'));
      await s.settle(late, l, 100, at('2026-11-23T00:00:01.000Z'));
      assert.equal(await s.budgetUsed('k', l, at('2026-11-23T00:00:01.000Z')), 200);
      assert.equal(await s.budgetUsed('k', l, at('2026-11-22T23:59:59.500Z')), 100);
    }));

    test('clock stepping back: buckets mint nothing, waits are never negative', run(async (s) => {
      const l = limits({ requestsPerMinute: 2 });
      await s.permit('k', l, 0, T0);
      await s.permit('k', l, 0, T0);
      // Refill resumes only once the clock is back at T0: 30 s of lag + 30 s per request.
      assert.deepEqual(await s.admit('k', l, 0, T0 - 30_000), {
        allowed: false, refusal: 'requests', retryAfterMs: 60_000, snapshot: { requests: { limit: 2, remaining: 0, resetMs: 90_000 } },
      });
      assert.equal(refused(await s.admit('k', l, 0, T0 + 29_999)).retryAfterMs, 1);
      allowed(await s.admit('k', l, 0, T0 + 30_000));

      const t = limits({ tokensPerMinute: 1000 });
      await s.permit('t', t, 1000, T0);
      assert.equal(refused(await s.admit('t', t, 1000, T0 - 60_000)).retryAfterMs, 120_000);
      assert.equal(refused(await s.admit('t', t, 1000, T0)).retryAfterMs, 60_000);
      allowed(await s.admit('t', t, 1000, T0 + 60_000));

      const c = limits({ concurrentRequests: 1 });
      await s.permit('c', c, 0, T0);
      assert.equal(refused(await s.admit('c', c, 0, T0 - 1000)).refusal, 'concurrency');
    }));

    test('clock stepping back over midnight counts into that day\'s existing budget', run(async (s) => {
      const l = limits({ tokenBudget: { tokens: 100, period: 'day' } });
      await s.permit('k', l, 100, at('2026-11-22T23:59:59.000Z'));
      await s.permit('k', l, 50, at('2026-11-23T00:00:00.000Z'));
      const back = refused(await s.admit('k', l, 1, at('2026-11-22T23:59:59.500Z')));
      assert.deepEqual([back.refusal, back.retryAfterMs, back.budget?.used], ['budget', 500, 100]);
      assert.equal(await s.budgetUsed('k', l, at('2026-11-23T00:00:01.000Z')), 50);
    }));

    test('several failures: budget first, else the longest wait; Retry-After covers all', run(async (s) => {
      const l = limits({ requestsPerMinute: 1, tokensPerMinute: 1000, tokenBudget: { tokens: 100, period: 'day' } });
      await s.settle(await s.permit('all', l, 100, T0), l, 1000, T0, null);
      assert.deepEqual(await s.admit('all', l, 10, T0), {
        allowed: false, refusal: 'budget', retryAfterMs: 43_200_000,
        snapshot: { requests: { limit: 1, remaining: 0, resetMs: 60_000 }, tokens: { limit: 1000, remaining: 0, resetMs: 60_000 } },
        budget: { kind: 'tokens', limit: 100, used: 1000, requested: 10, period: 'day', resetsAt: '2026-11-23T00:00:00.000Z', spent: true, cause: 'spent' },
      });

      const rt = limits({ requestsPerMinute: 1, tokensPerMinute: 1000 });
      await s.permit('rt', rt, 1000, T0);
      const both = refused(await s.admit('rt', rt, 600, T0 + 30_000)); // requests 30 s, tokens 6 s
      assert.deepEqual([both.refusal, both.retryAfterMs], ['requests', 30_000]);
      const tie = refused(await s.admit('rt', rt, 1000, T0 + 30_000)); // both 30 s
      assert.deepEqual([tie.refusal, tie.retryAfterMs], ['requests', 30_000]);

      const rc = limits({ requestsPerMinute: 1, concurrentRequests: 1 });
      const held = await s.permit('rc', rc, 0, T0);
      const slow = refused(await s.admit('rc', rc, 0, T0));
      assert.equal(await s.renew(held, T0 + 30_000), true); // still running a minute later
      assert.deepEqual([slow.refusal, slow.retryAfterMs], ['requests', 60_000]);
      const slot = refused(await s.admit('rc', rc, 0, T0 + 60_000));
      assert.deepEqual([slot.refusal, slot.retryAfterMs], ['concurrency', 1000]);
    }));

    test('changed limits: a lower limit clamps the level, a higher one keeps it', run(async (s) => {
      for (let i = 0; i < 5; i++) await s.permit('k', limits({ requestsPerMinute: 10 }), 0, T0);
      assert.deepEqual(allowed(await s.admit('k', limits({ requestsPerMinute: 2 }), 0, T0)).snapshot, {
        requests: { limit: 2, remaining: 1, resetMs: 30_000 },
      });
      assert.deepEqual(allowed(await s.admit('k', limits({ requestsPerMinute: 10 }), 0, T0)).snapshot, {
        requests: { limit: 10, remaining: 0, resetMs: 60_000 },
      });
    }));

    test('keys are independent; budgetUsed is 0 for unseen keys and keys without a budget', run(async (s) => {
      const l = limits({ requestsPerMinute: 1, tokenBudget: { tokens: 10, period: 'day' } });
      await s.permit('a', l, 5, T0);
      assert.equal(refused(await s.admit('a', l, 0, T0)).refusal, 'requests');
      allowed(await s.admit('b', l, 0, T0));
      assert.equal(await s.budgetUsed('a', l, T0), 5);
      assert.equal(await s.budgetUsed('never-seen', l, T0), 0);
      assert.equal(await s.budgetUsed('a', limits({ requestsPerMinute: 1 }), T0), 0);
    }));
  });
}
