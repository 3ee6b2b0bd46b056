// admitRequest (src/gateway/key-policy.ts) over a real in-process limiter: the 429
// a client reads for each budget refusal (tokens or money, spent or not fitting), in
// OpenAI's shape, with its Retry-After. The end-to-end path through the gateway is
// test/gateway/key-policy.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderError } from '../../src/errors/render.ts';
import { admitRequest, KeyLimitRefusal, type KeyPolicy } from '../../src/gateway/key-policy.ts';
import { NO_LIMITS, type KeyLimits } from '../../src/limits/key-limits.ts';
import type { Charge } from '../../src/limits/limiter.ts';
import { createMemoryLimiter } from '../../src/limits/memory-limiter.ts';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
let keys = 0;
const key = (limits: Partial<KeyLimits>): KeyPolicy => ({ id: `key_${++keys}`, expiresAt: null, allowedAliases: null, limits: { ...NO_LIMITS, ...limits } });

/** The rendered refusal of admitting `reservation` for `policy`: status, headers and body. */
async function refusal(limiter: ReturnType<typeof createMemoryLimiter>, policy: KeyPolicy, reservation: Charge) {
  const error = await admitRequest(limiter, policy, reservation, T0).then(
    () => assert.fail('expected a refusal'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof KeyLimitRefusal);
  assert.equal(error.refusal, 'budget');
  const rendered = renderError(error);
  return { status: rendered.status, headers: rendered.headers, body: JSON.parse(rendered.body) as unknown };
}

const quota = (message: string) => ({ error: { message, type: 'insufficient_quota', param: null, code: 'insufficient_quota' } });

test('token budget: a request that does not fit the room left is told how much is left and what to do', async () => {
  const limiter = createMemoryLimiter();
  const policy = key({ tokenBudget: { tokens: 5000, period: 'day' } });
  assert.notEqual((await admitRequest(limiter, policy, { tokens: 4100, costNanos: 0 }, T0)).permit, null);
  assert.deepEqual(await refusal(limiter, policy, { tokens: 1200, costNanos: 0 }), {
    status: 429,
    headers: { 'retry-after': '1', 'retry-after-ms': '1000' },
    body: quota(
      "This request may use up to 1200 tokens (its prompt and max_tokens); the key's token budget has 900 left this day. " +
        "Lower max_tokens, or retry when the key's requests in flight finish.",
    ),
  });
  await limiter.close();
});

test('token budget spent: the same message as before, with the reset time', async () => {
  const limiter = createMemoryLimiter();
  const policy = key({ tokenBudget: { tokens: 100, period: 'month' } });
  const admitted = await admitRequest(limiter, policy, { tokens: 110, costNanos: 0 }, T0);
  assert.ok(admitted.permit !== null);
  await limiter.settle({ permit: admitted.permit, limits: policy.limits, charge: { tokens: 150, costNanos: 0 }, nowMs: T0 });
  assert.deepEqual(await refusal(limiter, policy, { tokens: 10, costNanos: 0 }), {
    status: 429,
    headers: { 'retry-after': '734400', 'retry-after-ms': '734400000' },
    body: quota('This API key has spent its token budget of 100 tokens per month (used: 150). The budget resets at 2026-12-01T00:00:00.000Z.'),
  });
  await limiter.close();
});

test('cost budget spent: amounts in currency units without the currency, exact', async () => {
  const limiter = createMemoryLimiter();
  const policy = key({ costBudget: { amount: 25.5, period: 'month' } });
  const admitted = await admitRequest(limiter, policy, { tokens: 10, costNanos: 20_000_000_000 }, T0);
  assert.ok(admitted.permit !== null);
  await limiter.settle({ permit: admitted.permit, limits: policy.limits, charge: { tokens: 10, costNanos: 25_510_000_000 }, nowMs: T0 });
  assert.deepEqual(await refusal(limiter, policy, { tokens: 10, costNanos: 0 }), {
    status: 429,
    headers: { 'retry-after': '734400', 'retry-after-ms': '734400000' },
    body: quota('This API key has spent its spending budget of 25.5 per month (used: 25.51). The budget resets at 2026-12-01T00:00:00.000Z.'),
  });
  await limiter.close();
});

test('cost budget: a request that may cost more than is left', async () => {
  const limiter = createMemoryLimiter();
  const policy = key({ costBudget: { amount: 0.02, period: 'day' } });
  assert.notEqual((await admitRequest(limiter, policy, { tokens: 10, costNanos: 19_999_999 }, T0)).permit, null);
  assert.deepEqual(await refusal(limiter, policy, { tokens: 10, costNanos: 150_000 }), {
    status: 429,
    headers: { 'retry-after': '1', 'retry-after-ms': '1000' },
    body: quota(
      "This request may cost up to 0.00015 (its prompt and max_tokens); the key's spending budget has 0.000000001 left this day. " +
        "Lower max_tokens, or retry when the key's requests in flight finish.",
    ),
  });
  await limiter.close();
});

test('with a per-minute limit the budget refusal carries the x-ratelimit-* headers too', async () => {
  const limiter = createMemoryLimiter();
  const policy = key({ requestsPerMinute: 10, tokenBudget: { tokens: 1000, period: 'day' } });
  await admitRequest(limiter, policy, { tokens: 999, costNanos: 0 }, T0);
  const { headers } = await refusal(limiter, policy, { tokens: 2, costNanos: 0 });
  assert.deepEqual(headers, {
    'x-ratelimit-limit-requests': '10',
    'x-ratelimit-remaining-requests': '9',
    'x-ratelimit-reset-requests': '6s',
    'retry-after': '1',
    'retry-after-ms': '1000',
  });
  await limiter.close();
});
