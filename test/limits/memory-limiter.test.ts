import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NO_LIMITS, type KeyLimits } from '../../src/limits/key-limits.ts';
import { LimiterClosedError } from '../../src/limits/limiter.ts';
import { createMemoryLimiter } from '../../src/limits/memory-limiter.ts';
import { runLimiterScenarios } from './limiter-scenarios.ts';

runLimiterScenarios('memory', () => createMemoryLimiter());

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const limits = (set: Partial<KeyLimits>): KeyLimits => ({ ...NO_LIMITS, ...set });

test('keys without limits hold no state', async () => {
  const limiter = createMemoryLimiter();
  for (let i = 0; i < 10; i++) await limiter.admit({ keyId: `k${i}`, limits: NO_LIMITS, estimatedTokens: 5, nowMs: T0 });
  assert.equal(limiter.keyCount(), 0);
  await limiter.close();
});

test('sweep drops keys that hold nothing a fresh key would not, and keeps the others', async () => {
  const limiter = createMemoryLimiter();
  const rpm = limits({ requestsPerMinute: 60 });
  const slot = limits({ concurrentRequests: 1 });
  const budget = limits({ tokenBudget: { tokens: 100, period: 'day' } });
  const settled = async (keyId: string, l: KeyLimits, estimatedTokens: number) => {
    const decision = await limiter.admit({ keyId, limits: l, estimatedTokens, nowMs: T0 });
    assert.ok(decision.allowed);
    await limiter.settle({ permit: decision.permit, limits: l, actualTokens: estimatedTokens, nowMs: T0 });
  };
  await settled('refilling', rpm, 0);
  await settled('budget', budget, 10);
  const held = await limiter.admit({ keyId: 'held', limits: slot, estimatedTokens: 0, nowMs: T0 });
  assert.ok(held.allowed);
  assert.equal(limiter.keyCount(), 3);

  assert.equal(limiter.sweep(T0 + 999), 0); // one request needs 1000 ms to refill
  assert.equal(limiter.sweep(T0 + 1000), 1);
  assert.equal(limiter.keyCount(), 2);
  await limiter.settle({ permit: held.permit, limits: slot, actualTokens: 0, nowMs: T0 + 1000 });
  assert.equal(limiter.sweep(T0 + 1000), 1);
  // The day's count stays a day after its end, for a clock stepping back over midnight.
  assert.equal(limiter.sweep(Date.UTC(2026, 10, 23, 23, 59, 59, 999)), 0);
  assert.equal(await limiter.budgetUsed('budget', budget, T0), 10);
  assert.equal(limiter.sweep(Date.UTC(2026, 10, 24)), 1);
  assert.equal(limiter.keyCount(), 0);
  assert.equal(await limiter.budgetUsed('budget', budget, T0), 0);
  await limiter.close();
});

test('an unsettled permit past its lease no longer keeps its key', async () => {
  const limiter = createMemoryLimiter({ leaseMs: 5000 });
  const l = limits({ concurrentRequests: 1 });
  await limiter.admit({ keyId: 'k', limits: l, estimatedTokens: 0, nowMs: T0 });
  assert.equal((await limiter.admit({ keyId: 'k', limits: l, estimatedTokens: 0, nowMs: T0 + 4999 })).allowed, false);
  assert.equal(limiter.sweep(T0 + 4999), 0);
  assert.equal(limiter.sweep(T0 + 5000), 1);
  await limiter.close();
});

test('maxKeys: idle keys are swept first, then the least recently admitted key is forgotten', async () => {
  const limiter = createMemoryLimiter({ maxKeys: 2 });
  const slot = limits({ concurrentRequests: 1 });
  const rpm = limits({ requestsPerMinute: 1 });
  const admit = (keyId: string, l: KeyLimits, nowMs: number) => limiter.admit({ keyId, limits: l, estimatedTokens: 0, nowMs });
  assert.equal((await admit('busy', slot, T0)).allowed, true); // never settled
  const idle = await admit('idle', rpm, T0);
  assert.ok(idle.allowed);
  await limiter.settle({ permit: idle.permit, limits: rpm, actualTokens: 0, nowMs: T0 });

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
  await limiter.admit({ keyId: 'a', limits: l, estimatedTokens: 0, nowMs: T0 });
  assert.equal((await limiter.admit({ keyId: 'a', limits: l, estimatedTokens: 0, nowMs: T0 })).allowed, false);
  assert.equal(limiter.keyCount(), 1);
  await limiter.close();
});

test('after close every call rejects with LimiterClosedError', async () => {
  const limiter = createMemoryLimiter();
  const decision = await limiter.admit({ keyId: 'k', limits: limits({ requestsPerMinute: 1 }), estimatedTokens: 0, nowMs: T0 });
  assert.ok(decision.allowed);
  await limiter.close();
  await assert.rejects(limiter.admit({ keyId: 'k', limits: NO_LIMITS, estimatedTokens: 0, nowMs: T0 }), LimiterClosedError);
  await assert.rejects(limiter.settle({ permit: decision.permit, limits: NO_LIMITS, actualTokens: 0, nowMs: T0 }), { code: 'limiter_closed' });
  await assert.rejects(limiter.budgetUsed('k', NO_LIMITS, T0), LimiterClosedError);
  assert.throws(() => limiter.sweep(T0), LimiterClosedError);
});

test('token counts and clocks it cannot account exactly are programming errors', async () => {
  const limiter = createMemoryLimiter();
  const l = limits({ tokensPerMinute: 10 });
  for (const estimatedTokens of [-1, 1.5, Number.NaN, 1_000_000_001]) {
    await assert.rejects(limiter.admit({ keyId: 'k', limits: l, estimatedTokens, nowMs: T0 }), RangeError);
  }
  await assert.rejects(limiter.admit({ keyId: 'k', limits: l, estimatedTokens: 1, nowMs: T0 + 0.5 }), RangeError);
  const decision = await limiter.admit({ keyId: 'k', limits: l, estimatedTokens: 1_000_000_000, nowMs: T0 });
  assert.ok(decision.allowed);
  await assert.rejects(limiter.settle({ permit: decision.permit, limits: l, actualTokens: -1, nowMs: T0 }), RangeError);
  assert.throws(() => createMemoryLimiter({ leaseMs: 0 }), RangeError);
  assert.throws(() => createMemoryLimiter({ maxKeys: 1.5 }), RangeError);
  await limiter.close();
});
