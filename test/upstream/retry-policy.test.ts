import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError, InvalidRequestError, UpstreamError } from '../../src/errors/api-error.ts';
import {
  badUpstreamResponseError,
  ClientAbortError,
  upstreamConnectionLostError,
  upstreamConnectTimeoutError,
  upstreamHttpError,
  upstreamStalledError,
  upstreamStreamError,
  upstreamStreamStalledError,
  upstreamStreamTruncatedError,
  upstreamTimeoutError,
  upstreamUnreachableError,
} from '../../src/upstream/upstream-errors.ts';
import {
  backoffDelay,
  classifyFailure,
  DEFAULT_RETRY_POLICY,
  type RetryPolicy,
} from '../../src/upstream/retry-policy.ts';
import { scriptedRandom, seededRandom } from './seeded-random.ts';

describe('DEFAULT_RETRY_POLICY', () => {
  test('values', () => {
    assert.deepEqual({ ...DEFAULT_RETRY_POLICY }, { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 5000, maxRetryAfterMs: 30_000 });
    assert.equal(Object.isFrozen(DEFAULT_RETRY_POLICY), true);
  });
});

describe('backoffDelay', () => {
  const policy: RetryPolicy = { maxAttempts: 10, baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 30_000 };

  test('the ceiling doubles per attempt and stops at maxDelayMs', () => {
    const almostOne = (): number => 0.999999;
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 40, 2000].map((attempt) => backoffDelay(attempt, policy, almostOne)),
      [99, 199, 399, 799, 999, 999, 999, 999],
    );
  });

  test('full jitter: the draw scales the ceiling, from 0', () => {
    assert.equal(backoffDelay(1, policy, () => 0), 0);
    assert.equal(backoffDelay(1, policy, () => 0.5), 50);
    assert.equal(backoffDelay(3, policy, () => 0.25), 100);
  });

  test('an out-of-range draw never exceeds the ceiling', () => {
    for (const draw of [1, 1.5, -0.1, Number.NaN]) assert.equal(backoffDelay(2, policy, () => draw), 0, String(draw));
  });

  test('attempt 0 or below is treated as the first', () => {
    assert.equal(backoffDelay(0, policy, () => 0.5), 50);
    assert.equal(backoffDelay(-3, policy, () => 0.5), 50);
  });

  test('a zero base means no wait', () => {
    assert.equal(backoffDelay(3, { ...policy, baseDelayMs: 0 }, () => 0.9), 0);
  });

  test('over many seeded draws every delay is inside [0, ceiling) and the mean is near half', () => {
    const random = seededRandom(7);
    let sum = 0;
    const draws = 2000;
    for (let i = 0; i < draws; i++) {
      const delay = backoffDelay(3, policy, random);
      assert.ok(delay >= 0 && delay < 400, String(delay));
      assert.equal(Number.isInteger(delay), true);
      sum += delay;
    }
    const mean = sum / draws;
    assert.ok(mean > 185 && mean < 215, String(mean));
  });

  test('the default policy: 200, 400 ms ceilings', () => {
    const random = scriptedRandom([0.5, 0.5]);
    assert.equal(backoffDelay(1, DEFAULT_RETRY_POLICY, random), 100);
    assert.equal(backoffDelay(2, DEFAULT_RETRY_POLICY, random), 200);
  });
});

describe('classifyFailure', () => {
  const cases: Array<[string, unknown, 'retry' | 'fallback' | 'fatal']> = [
    ['connection refused', upstreamUnreachableError(new Error('ECONNREFUSED')), 'retry'],
    ['connection lost mid-body', upstreamConnectionLostError(new Error('reset')), 'retry'],
    ['429', upstreamHttpError(429, undefined, '3', null), 'retry'],
    ['500', upstreamHttpError(500, undefined, null, null), 'retry'],
    ['503', upstreamHttpError(503, undefined, null, null), 'retry'],
    ['unexpected 302', upstreamHttpError(302, undefined, null, null), 'retry'],
    ['error event in a stream', upstreamStreamError({ message: 'overloaded' }), 'retry'],
    ['stream truncated', upstreamStreamTruncatedError(), 'retry'],
    ['first-byte timeout', upstreamTimeoutError(100, 'response headers'), 'fallback'],
    ['total timeout', upstreamTimeoutError(100, 'the whole response'), 'fallback'],
    ['connect timeout', upstreamConnectTimeoutError(100), 'fallback'],
    ['idle timeout', upstreamStreamStalledError(100), 'fallback'],
    ['fetch network timeout', upstreamStalledError(new Error('UND_ERR_HEADERS_TIMEOUT')), 'fallback'],
    ['upstream 408', upstreamHttpError(408, undefined, null, null), 'fallback'],
    ['401', upstreamHttpError(401, undefined, null, null), 'fallback'],
    ['403', upstreamHttpError(403, undefined, null, null), 'fallback'],
    ['404', upstreamHttpError(404, undefined, null, null), 'fallback'],
    ['not JSON', badUpstreamResponseError('The upstream provider returned a response that is not valid JSON.'), 'fallback'],
    ['400', upstreamHttpError(400, { message: 'bad temperature', param: 'temperature', code: 'invalid_value' }, null, null), 'fatal'],
    ['422', upstreamHttpError(422, undefined, null, null), 'fatal'],
    ['a 400 whose upstream code looks like ours', upstreamHttpError(400, { message: 'x', param: null, code: 'upstream_timeout' }, null, null), 'fatal'],
    ['a 400 of our own', new InvalidRequestError('x', null, 'invalid_value'), 'fatal'],
    ['client abort', new ClientAbortError(new Error('gone')), 'fatal'],
    ['a 5xx of the gateway', new ApiError('internal_error'), 'fallback'],
    ['503 state_unavailable', new ApiError('state_unavailable'), 'fallback'],
    ['503 upstream_unavailable', new UpstreamError('upstream_unavailable', 'x'), 'fallback'],
    ['a 4xx of the gateway', new ApiError('model_not_allowed', 'x'), 'fatal'],
    ['a plain 429 ApiError', new ApiError('rate_limit_exceeded', 'x'), 'retry'],
    ['a spent budget', new ApiError('insufficient_quota', 'x'), 'retry'],
    ['a bug', new TypeError('undefined is not a function'), 'fatal'],
    ['a thrown string', 'oops', 'fatal'],
  ];
  for (const [name, error, expected] of cases) {
    test(`${name} -> ${expected}`, () => assert.equal(classifyFailure(error), expected));
  }
});
