import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasAnyLimit, KeyLimitsError, NO_LIMITS, parseKeyLimits } from '../../src/limits/key-limits.ts';

function fails(value: unknown, at: string, param: string, message: string): void {
  assert.throws(() => parseKeyLimits(value, at), (error: unknown) => {
    assert.ok(error instanceof KeyLimitsError);
    assert.equal(error.code, 'invalid_limits');
    assert.equal(error.param, param);
    assert.equal(error.message, message);
    return true;
  });
}

test('all fields, and missing or null fields as no limit', () => {
  assert.deepEqual(
    parseKeyLimits({ requestsPerMinute: 60, tokensPerMinute: 100_000, concurrentRequests: 4, tokenBudget: { tokens: 5_000_000, period: 'month' } }, 'limits'),
    { requestsPerMinute: 60, tokensPerMinute: 100_000, concurrentRequests: 4, tokenBudget: { tokens: 5_000_000, period: 'month' }, costBudget: null },
  );
  assert.deepEqual(parseKeyLimits({ tokensPerMinute: 1 }, 'limits'), { requestsPerMinute: null, tokensPerMinute: 1, concurrentRequests: null, tokenBudget: null, costBudget: null });
  assert.deepEqual(parseKeyLimits({ requestsPerMinute: null, tokenBudget: null }, 'limits'), NO_LIMITS);
  assert.deepEqual(parseKeyLimits({}, 'limits'), NO_LIMITS);
  assert.equal(parseKeyLimits(undefined, 'limits'), NO_LIMITS);
  assert.equal(parseKeyLimits(null, 'limits'), NO_LIMITS);
  assert.deepEqual(parseKeyLimits({ requestsPerMinute: 1_000_000_000, tokenBudget: { tokens: 1e12, period: 'day' } }, 'limits'), {
    requestsPerMinute: 1_000_000_000, tokensPerMinute: null, concurrentRequests: null, tokenBudget: { tokens: 1e12, period: 'day' }, costBudget: null,
  });
});

test('wrong shapes name the path', () => {
  fails([], 'limits', 'limits', 'limits must be an object; got an array.');
  fails(5, 'keys[2].limits', 'keys[2].limits', 'keys[2].limits must be an object; got 5.');
  fails('x', '', '', 'limits must be an object; got "x".');
  fails({ tokensPerMinutes: 5 }, 'limits', 'limits.tokensPerMinutes',
    'Unknown field limits.tokensPerMinutes; the fields are requestsPerMinute, tokensPerMinute, concurrentRequests, tokenBudget, costBudget.');
  fails({ tokenBudget: { tokens: 5, period: 'day', extra: 1 } }, 'limits', 'limits.tokenBudget.extra',
    'Unknown field limits.tokenBudget.extra; the fields are tokens, period.');
  fails({ tokenBudget: 5 }, 'limits', 'limits.tokenBudget', 'limits.tokenBudget must be an object; got 5.');
  fails({ tokenBudget: { tokens: 0, period: 'day' } }, '', 'tokenBudget.tokens',
    'tokenBudget.tokens must be an integer from 1 to 1000000000000 (or null for no limit); got 0.');
});

test('integers out of range or of the wrong type are refused, never clamped', () => {
  const bound = 'must be an integer from 1 to 1000000000 (or null for no limit)';
  fails({ requestsPerMinute: 0 }, 'limits', 'limits.requestsPerMinute', `limits.requestsPerMinute ${bound}; got 0.`);
  fails({ tokensPerMinute: 1.5 }, 'limits', 'limits.tokensPerMinute', `limits.tokensPerMinute ${bound}; got 1.5.`);
  fails({ concurrentRequests: '4' }, 'limits', 'limits.concurrentRequests', `limits.concurrentRequests ${bound}; got "4".`);
  fails({ requestsPerMinute: 1_000_000_001 }, 'limits', 'limits.requestsPerMinute', `limits.requestsPerMinute ${bound}; got 1000000001.`);
  fails({ requestsPerMinute: true }, 'limits', 'limits.requestsPerMinute', `limits.requestsPerMinute ${bound}; got true.`);
  fails({ requestsPerMinute: 'x'.repeat(41) }, 'limits', 'limits.requestsPerMinute', `limits.requestsPerMinute ${bound}; got a string of 41 characters.`);
  fails({ tokenBudget: { tokens: 1e12 + 1, period: 'day' } }, 'limits', 'limits.tokenBudget.tokens',
    'limits.tokenBudget.tokens must be an integer from 1 to 1000000000000 (or null for no limit); got 1000000000001.');
});

test('a budget needs both its tokens and a period of day or month', () => {
  fails({ tokenBudget: { period: 'day' } }, 'limits', 'limits.tokenBudget.tokens',
    'limits.tokenBudget.tokens is required: the number of tokens allowed per period.');
  fails({ tokenBudget: { tokens: 10 } }, 'limits', 'limits.tokenBudget.period', 'limits.tokenBudget.period is required: "day" or "month" (UTC).');
  fails({ tokenBudget: { tokens: 10, period: 'week' } }, 'limits', 'limits.tokenBudget.period',
    'limits.tokenBudget.period must be "day" or "month" (UTC); got "week".');
  fails({ tokenBudget: { tokens: 10, period: ['day'] } }, 'limits', 'limits.tokenBudget.period',
    'limits.tokenBudget.period must be "day" or "month" (UTC); got an array.');
});

test('hasAnyLimit', () => {
  assert.equal(hasAnyLimit(NO_LIMITS), false);
  assert.equal(hasAnyLimit({ ...NO_LIMITS, concurrentRequests: 1 }), true);
  assert.equal(hasAnyLimit({ ...NO_LIMITS, tokenBudget: { tokens: 1, period: 'day' } }), true);
});
