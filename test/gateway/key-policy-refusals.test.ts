// admitRequest (src/gateway/key-policy.ts) over a real in-process limiter: the 429
// a client reads for each budget refusal (tokens or money, spent or not fitting), in
// OpenAI's shape, with its Retry-After, and `x-should-retry: false` where the
// OpenAI SDKs' automatic retries cannot pass (they wait at most 60 s). The end-to-end path through the gateway is
// test/gateway/key-policy.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderError } from '../../src/errors/render.ts';
import { admitRequest, KeyLimitRefusal, type KeyPolicy } from '../../src/gateway/key-policy.ts';
import { NO_LIMITS, type KeyLimits } from '../../src/limits/key-limits.ts';
import type { ReservedCharge } from '../../src/gateway/key-policy.ts';
import { createMemoryLimiter } from '../../src/limits/memory-limiter.ts';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
let keys = 0;
const key = (limits: Partial<KeyLimits>): KeyPolicy => ({ id: `key_${++keys}`, expiresAt: null, allowedAliases: null, limits: { ...NO_LIMITS, ...limits } });

/** The rendered refusal of admitting `reservation` for `policy`: status, headers and body. */
async function refusal(limiter: ReturnType<typeof createMemoryLimiter>, policy: KeyPolicy, reservation: ReservedCharge) {
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

test('token budget held by a request in flight: the short retry, how much is left and what to do', async () => {
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
  const admitted = await admitRequest(limiter, policy, { tokens: 100, costNanos: 0 }, T0);
  assert.ok(admitted.permit !== null);
  await limiter.settle({ permit: admitted.permit, limits: policy.limits, charge: { tokens: 150, costNanos: 0 }, nowMs: T0 });
  assert.deepEqual(await refusal(limiter, policy, { tokens: 10, costNanos: 0 }), {
    status: 429,
    headers: { 'retry-after': '734400', 'retry-after-ms': '734400000', 'x-should-retry': 'false' },
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
    headers: { 'retry-after': '734400', 'retry-after-ms': '734400000', 'x-should-retry': 'false' },
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

test('cost reservation above the whole budget, nothing in flight: no Retry-After, what to lower and the figures', async () => {
  const limiter = createMemoryLimiter();
  const policy = key({ costBudget: { amount: 0.01, period: 'day' } });
  // Some of the day already spent, as in the report: 0.0000066.
  const spent = await admitRequest(limiter, policy, { tokens: 30, costNanos: 6600 }, T0);
  assert.ok(spent.permit !== null);
  await limiter.settle({ permit: spent.permit, limits: policy.limits, charge: { tokens: 30, costNanos: 6600 }, nowMs: T0 });
  assert.deepEqual(await refusal(limiter, policy, { tokens: 4180, costNanos: 61_700_000, promptTokens: 84, outputTokens: 4096 }), {
    status: 429,
    headers: { 'x-should-retry': 'false' },
    body: quota(
      "This request may cost up to 0.0617 (a prompt of up to 84 tokens and max_tokens 4096), more than the key's whole spending budget of 0.01 per day, " +
        'so it can never be admitted. Send a lower max_tokens (without it a request reserves the model\'s output cap: 4096 tokens unless the gateway sets a lower one) or a shorter prompt.',
    ),
  });
  // The same on an empty window: a reservation above the budget is never admitted.
  assert.deepEqual((await refusal(limiter, key({ costBudget: { amount: 0.01, period: 'day' } }), { tokens: 4180, costNanos: 61_700_000 })).headers, { 'x-should-retry': 'false' });
  await limiter.close();
});

test('token reservation above the whole budget: no Retry-After, even beside a per-minute limit', async () => {
  const limiter = createMemoryLimiter();
  const policy = key({ requestsPerMinute: 10, tokenBudget: { tokens: 1000, period: 'month' } });
  assert.deepEqual(await refusal(limiter, policy, { tokens: 4200, costNanos: 0, promptTokens: 104, outputTokens: 4096 }), {
    status: 429,
    headers: { 'x-ratelimit-limit-requests': '10', 'x-ratelimit-remaining-requests': '10', 'x-ratelimit-reset-requests': '0s', 'x-should-retry': 'false' },
    body: quota(
      "This request may use up to 4200 tokens (a prompt of up to 104 tokens and max_tokens 4096), more than the key's whole token budget of 1000 tokens per month, " +
        'so it can never be admitted. Send a lower max_tokens (without it a request reserves the model\'s output cap: 4096 tokens unless the gateway sets a lower one) or a shorter prompt.',
    ),
  });
  await limiter.close();
});

test('too little left with nothing in flight: Retry-After until the period ends', async () => {
  const limiter = createMemoryLimiter();
  const policy = key({ costBudget: { amount: 0.01, period: 'day' } });
  const admitted = await admitRequest(limiter, policy, { tokens: 10, costNanos: 9_000_000 }, T0);
  assert.ok(admitted.permit !== null);
  await limiter.settle({ permit: admitted.permit, limits: policy.limits, charge: { tokens: 10, costNanos: 9_000_000 }, nowMs: T0 });
  // Noon: 12 hours to the end of the UTC day.
  assert.deepEqual(await refusal(limiter, policy, { tokens: 10, costNanos: 2_000_000 }), {
    status: 429,
    headers: { 'retry-after': '43200', 'retry-after-ms': '43200000', 'x-should-retry': 'false' },
    body: quota(
      "This request may cost up to 0.002 (its prompt and max_tokens); the key's spending budget has 0.001 left this day, with no requests in flight. " +
        'Lower max_tokens, or retry after the budget resets at 2026-11-23T00:00:00.000Z.',
    ),
  });
  await limiter.close();
});

test('a spent budget tells the SDKs not to retry only when the reset is further than the 60 s they wait', async () => {
  const limiter = createMemoryLimiter();
  const policy = key({ tokenBudget: { tokens: 100, period: 'day' } });
  const endOfDay = Date.UTC(2026, 10, 23, 0, 0, 0);
  const admitted = await admitRequest(limiter, policy, { tokens: 100, costNanos: 0 }, endOfDay - 120_000);
  assert.ok(admitted.permit !== null);
  await limiter.settle({ permit: admitted.permit, limits: policy.limits, charge: { tokens: 100, costNanos: 0 }, nowMs: endOfDay - 120_000 });
  const headersAt = async (nowMs: number) => {
    const error = await admitRequest(limiter, policy, { tokens: 10, costNanos: 0 }, nowMs).then(() => assert.fail('expected a refusal'), (e: unknown) => e);
    assert.ok(error instanceof KeyLimitRefusal && error.refusal === 'budget');
    return renderError(error).headers;
  };
  assert.deepEqual(await headersAt(endOfDay - 60_001), { 'retry-after': '61', 'retry-after-ms': '60001', 'x-should-retry': 'false' });
  assert.deepEqual(await headersAt(endOfDay - 60_000), { 'retry-after': '60', 'retry-after-ms': '60000' });
  await limiter.close();
});

test('rate limit refusals never say x-should-retry: their wait is within the minute', async () => {
  const limiter = createMemoryLimiter();
  const policy = key({ requestsPerMinute: 1 });
  await admitRequest(limiter, policy, { tokens: 10, costNanos: 0 }, T0);
  const error = await admitRequest(limiter, policy, { tokens: 10, costNanos: 0 }, T0).then(() => assert.fail('expected a refusal'), (e: unknown) => e);
  assert.ok(error instanceof KeyLimitRefusal && error.refusal === 'requests');
  assert.equal(renderError(error).headers['x-should-retry'], undefined);
  await limiter.close();
});
