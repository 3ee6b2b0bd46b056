import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatResetDuration, rateLimitHeaders, retryAfterSeconds } from '../../src/limits/rate-limit-headers.ts';

test('reset durations in Go notation at millisecond resolution', () => {
  const cases: [number, string][] = [
    [0, '0s'],
    [-5, '0s'],
    [0.2, '1ms'],
    [1, '1ms'],
    [20, '20ms'],
    [999, '999ms'],
    [999.01, '1s'],
    [1000, '1s'],
    [1500, '1.5s'],
    [1004, '1.004s'],
    [1040, '1.04s'],
    [59_999, '59.999s'],
    [60_000, '1m0s'],
    [360_000, '6m0s'],
    [90_500, '1m30.5s'],
    [3_600_000, '1h0m0s'],
    [3_723_000, '1h2m3s'],
    [3_723_004, '1h2m3.004s'],
    [86_400_000, '24h0m0s'],
  ];
  for (const [ms, text] of cases) assert.equal(formatResetDuration(ms), text, String(ms));
  assert.throws(() => formatResetDuration(Number.NaN), RangeError);
  assert.throws(() => formatResetDuration(Number.POSITIVE_INFINITY), RangeError);
});

test('headers only for the limits in the snapshot, in OpenAI order', () => {
  assert.deepEqual(rateLimitHeaders({}), {});
  assert.deepEqual(Object.entries(rateLimitHeaders({
    requests: { limit: 60, remaining: 59, resetMs: 1000 },
    tokens: { limit: 150_000, remaining: 149_984, resetMs: 6 },
  })), [
    ['x-ratelimit-limit-requests', '60'],
    ['x-ratelimit-limit-tokens', '150000'],
    ['x-ratelimit-remaining-requests', '59'],
    ['x-ratelimit-remaining-tokens', '149984'],
    ['x-ratelimit-reset-requests', '1s'],
    ['x-ratelimit-reset-tokens', '6ms'],
  ]);
  assert.deepEqual(rateLimitHeaders({ tokens: { limit: 1000, remaining: 0, resetMs: 360_000 } }), {
    'x-ratelimit-limit-tokens': '1000',
    'x-ratelimit-remaining-tokens': '0',
    'x-ratelimit-reset-tokens': '6m0s',
  });
});

test('Retry-After: whole seconds, rounded up, at least 1', () => {
  const cases: [number, string][] = [[0, '1'], [1, '1'], [999, '1'], [1000, '1'], [1001, '2'], [20_000, '20'], [43_200_000, '43200']];
  for (const [ms, text] of cases) assert.equal(retryAfterSeconds(ms), text, String(ms));
  assert.throws(() => retryAfterSeconds(Number.NaN), RangeError);
});
