import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NO_LIMITS, type KeyLimits } from '../../src/limits/key-limits.ts';
import { LimiterClosedError, type Charge } from '../../src/limits/limiter.ts';
import { createMemoryLimiter } from '../../src/limits/memory-limiter.ts';
import { runBuiltInLimiterScenarios } from '../../src/testing/limiter-builtin.ts';
import { runLimiterContract } from '../../src/testing/limiter-contract.ts';

runLimiterContract('memory', () => createMemoryLimiter());
runBuiltInLimiterScenarios('memory', () => createMemoryLimiter());

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const limits = (set: Partial<KeyLimits>): KeyLimits => ({ ...NO_LIMITS, ...set });
const tokens = (n: number): Charge => ({ tokens: n, costNanos: 0 });

test('keys without limits hold no state', async () => {
  const limiter = createMemoryLimiter();
  for (let i = 0; i < 10; i++) await limiter.admit({ keyId: `k${i}`, limits: NO_LIMITS, reservation: tokens(5), nowMs: T0 });
  assert.equal(limiter.keyCount(), 0);
  await limiter.close();
});

test('sweep drops keys that hold nothing a fresh key would not, and keeps the others', async () => {
  const limiter = createMemoryLimiter();
  const rpm = limits({ requestsPerMinute: 60 });
  const slot = limits({ concurrentRequests: 1 });
  const budget = limits({ tokenBudget: { tokens: 100, period: 'day' } });
  const settled = async (keyId: string, l: KeyLimits, reserved: number) => {
    const decision = await limiter.admit({ keyId, limits: l, reservation: tokens(reserved), nowMs: T0 });
    assert.ok(decision.allowed);
    await limiter.settle({ permit: decision.permit, limits: l, charge: tokens(reserved), nowMs: T0 });
  };
  await settled('refilling', rpm, 0);
  await settled('budget', budget, 10);
  const held = await limiter.admit({ keyId: 'held', limits: slot, reservation: tokens(0), nowMs: T0 });
  assert.ok(held.allowed);
  assert.equal(limiter.keyCount(), 3);

  assert.equal(limiter.sweep(T0 + 999), 0); // one request needs 1000 ms to refill
  assert.equal(limiter.sweep(T0 + 1000), 1);
  assert.equal(limiter.keyCount(), 2);
  await limiter.settle({ permit: held.permit, limits: slot, charge: tokens(0), nowMs: T0 + 1000 });
  assert.equal(limiter.sweep(T0 + 1000), 1);
  // The day's count stays a day after its end, for a clock stepping back over midnight.
  assert.equal(limiter.sweep(Date.UTC(2026, 10, 23, 23, 59, 59, 999)), 0);
  assert.equal((await limiter.budgetUsed('budget', budget, T0)).tokens, 10);
  assert.equal(limiter.sweep(Date.UTC(2026, 10, 24)), 1);
  assert.equal(limiter.keyCount(), 0);
  assert.equal((await limiter.budgetUsed('budget', budget, T0)).tokens, 0);
  await limiter.close();
});

test('sweep keeps a cost budget count a day after its window, like a token budget count', async () => {
  const limiter = createMemoryLimiter();
  const cost = limits({ costBudget: { amount: 1, period: 'day' } });
  const decision = await limiter.admit({ keyId: 'cost', limits: cost, reservation: { tokens: 5, costNanos: 700 }, nowMs: T0 });
  assert.ok(decision.allowed);
  await limiter.settle({ permit: decision.permit, limits: cost, charge: { tokens: 5, costNanos: 600 }, nowMs: T0 });
  assert.equal(limiter.sweep(Date.UTC(2026, 10, 23, 23, 59, 59, 999)), 0);
  assert.deepEqual(await limiter.budgetUsed('cost', cost, T0), { tokens: 0, costNanos: 600 });
  assert.equal(limiter.sweep(Date.UTC(2026, 10, 24)), 1);
  assert.equal(limiter.keyCount(), 0);
  await limiter.close();
});

test('a renewed permit keeps its key from the sweep; the default lease is 60 s', async () => {
  const limiter = createMemoryLimiter();
  assert.equal(limiter.leaseMs, 60_000);
  const l = limits({ concurrentRequests: 1 });
  const decision = await limiter.admit({ keyId: 'k', limits: l, reservation: tokens(0), nowMs: T0 });
  assert.ok(decision.allowed);
  assert.equal(await limiter.renew(decision.permit, T0 + 59_999), true);
  assert.equal(limiter.sweep(T0 + 60_000), 0);
  assert.equal(limiter.sweep(T0 + 119_998), 0);
  assert.equal(limiter.sweep(T0 + 119_999), 1); // expired at 59_999 + 60_000
  assert.equal(await limiter.renew(decision.permit, T0 + 120_000), false);
  await limiter.close();
});

test('an unsettled permit past its lease no longer keeps its key', async () => {
  const limiter = createMemoryLimiter({ leaseMs: 5000 });
  const l = limits({ concurrentRequests: 1 });
  await limiter.admit({ keyId: 'k', limits: l, reservation: tokens(0), nowMs: T0 });
  assert.equal((await limiter.admit({ keyId: 'k', limits: l, reservation: tokens(0), nowMs: T0 + 4999 })).allowed, false);
  assert.equal(limiter.sweep(T0 + 4999), 0);
  assert.equal(limiter.sweep(T0 + 5000), 1);
  await limiter.close();
});

test('maxKeys: idle keys are swept first, then the least recently admitted key is forgotten', async () => {
  // A lease longer than the minute below, so 'busy' stays busy without renewals.
  const limiter = createMemoryLimiter({ maxKeys: 2, leaseMs: 10 * 60_000 });
  const slot = limits({ concurrentRequests: 1 });
  const rpm = limits({ requestsPerMinute: 1 });
  const admit = (keyId: string, l: KeyLimits, nowMs: number) => limiter.admit({ keyId, limits: l, reservation: tokens(0), nowMs });
  assert.equal((await admit('busy', slot, T0)).allowed, true); // never settled
  const idle = await admit('idle', rpm, T0);
  assert.ok(idle.allowed);
  await limiter.settle({ permit: idle.permit, limits: rpm, charge: tokens(0), nowMs: T0 });

  assert.equal((await admit('c', rpm, T0 + 60_000)).allowed, true); // 'idle' is full again: swept
  assert.equal(limiter.keyCount(), 2);
  assert.equal((await admit('busy', slot, T0 + 60_000)).allowed, false);

  assert.equal((await admit('d', rpm, T0 + 60_000)).allowed, true); // nothing idle: 'busy' is the oldest
  assert.equal(limiter.keyCount(), 2);
  assert.equal((await admit('c', rpm, T0 + 60_000)).allowed, false);
  assert.equal((await admit('busy', slot, T0 + 60_000)).allowed, true);
  await limiter.close();
});

test('a refusal creates no state', async () => {
  const limiter = createMemoryLimiter({ maxKeys: 1 });
  const l = limits({ requestsPerMinute: 1 });
  await limiter.admit({ keyId: 'a', limits: l, reservation: tokens(0), nowMs: T0 });
  assert.equal((await limiter.admit({ keyId: 'a', limits: l, reservation: tokens(0), nowMs: T0 })).allowed, false);
  assert.equal(limiter.keyCount(), 1);
  await limiter.close();
});

test('after close every call rejects with LimiterClosedError', async () => {
  const limiter = createMemoryLimiter();
  const decision = await limiter.admit({ keyId: 'k', limits: limits({ requestsPerMinute: 1 }), reservation: tokens(0), nowMs: T0 });
  assert.ok(decision.allowed);
  await limiter.close();
  await assert.rejects(limiter.admit({ keyId: 'k', limits: NO_LIMITS, reservation: tokens(0), nowMs: T0 }), LimiterClosedError);
  await assert.rejects(limiter.settle({ permit: decision.permit, limits: NO_LIMITS, charge: tokens(0), nowMs: T0 }), { code: 'limiter_closed' });
  await assert.rejects(limiter.renew(decision.permit, T0), LimiterClosedError);
  await assert.rejects(limiter.budgetUsed('k', NO_LIMITS, T0), LimiterClosedError);
  assert.throws(() => limiter.sweep(T0), LimiterClosedError);
});

test('token counts and clocks it cannot account exactly are programming errors', async () => {
  const limiter = createMemoryLimiter();
  const l = limits({ tokensPerMinute: 10 });
  for (const reserved of [-1, 1.5, Number.NaN, 1_000_000_001]) {
    await assert.rejects(limiter.admit({ keyId: 'k', limits: l, reservation: tokens(reserved), nowMs: T0 }), RangeError);
  }
  await assert.rejects(limiter.admit({ keyId: 'k', limits: l, reservation: tokens(1), nowMs: T0 + 0.5 }), RangeError);
  const decision = await limiter.admit({ keyId: 'k', limits: l, reservation: tokens(1_000_000_000), nowMs: T0 });
  assert.ok(decision.allowed);
  await assert.rejects(limiter.settle({ permit: decision.permit, limits: l, charge: tokens(-1), nowMs: T0 }), RangeError);
  assert.throws(() => createMemoryLimiter({ leaseMs: 0 }), RangeError);
  assert.throws(() => createMemoryLimiter({ maxKeys: 1.5 }), RangeError);
  await limiter.close();
});

test('a key keeps the counts of two budget windows per budget: a third day drops the oldest', async () => {
  const limiter = createMemoryLimiter();
  const l = limits({ tokenBudget: { tokens: 100, period: 'day' }, costBudget: { amount: 1, period: 'day' } });
  const day = (n: number) => Date.UTC(2026, 10, 22 + n, 12);
  for (let n = 0; n < 3; n++) {
    const decision = await limiter.admit({ keyId: 'k', limits: l, reservation: { tokens: 10 + n, costNanos: 20 + n }, nowMs: day(n) });
    assert.ok(decision.allowed);
  }
  assert.deepEqual(await limiter.budgetUsed('k', l, day(0)), { tokens: 0, costNanos: 0 });
  assert.deepEqual(await limiter.budgetUsed('k', l, day(1)), { tokens: 11, costNanos: 21 });
  assert.deepEqual(await limiter.budgetUsed('k', l, day(2)), { tokens: 12, costNanos: 22 });
  await limiter.close();
});
