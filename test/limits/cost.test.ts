import assert from 'node:assert/strict';
import { test } from 'node:test';
import { amountOf, costNanos, formatMoney, nanosOf, usageCostNanos } from '../../src/limits/cost.ts';

const MAX = Number.MAX_SAFE_INTEGER;

test('costNanos: ceil(tokens * round(price * 1e6) / 1000)', () => {
  assert.equal(costNanos(1_000_000, 0.15), 150_000_000);
  assert.equal(costNanos(1, 0.15), 150);
  assert.equal(costNanos(3, 0.0375), 113); // ceil(112.5)
  assert.equal(costNanos(1, 0.000001), 1); // ceil(0.001): a token is never free at a price above zero
  assert.equal(costNanos(1000, 0.000001), 1);
  assert.equal(costNanos(1001, 0.000001), 2);
  assert.equal(costNanos(7, 0.1), 700);
  assert.equal(costNanos(0, 10_000), 0);
  assert.equal(costNanos(123_456_789, 0), 0);
  assert.equal(costNanos(1, 10_000), 10_000_000);
  // 0.1 + 0.2 is not 0.3 in doubles; the price is rounded to whole micro-units first.
  assert.equal(costNanos(1_000_000, 0.1 + 0.2), 300_000_000);
});

test('costNanos: exact past 2^53 inside, and a result beyond it is Number.MAX_SAFE_INTEGER', () => {
  // 900_719_925 tokens at 10000 per million: 9_007_199_250_000_000 nanos, just below 2^53 - 1.
  assert.equal(costNanos(900_719_925, 10_000), 9_007_199_250_000_000);
  assert.ok(Number.isSafeInteger(costNanos(900_719_925, 10_000)));
  // One more token and the cost passes 2^53 - 1: the largest safe integer stands in.
  assert.equal(costNanos(900_719_926, 10_000), MAX);
  assert.equal(costNanos(MAX, 10_000), MAX);
  // The product passes 2^53 while the result does not: 2^53 - 1 tokens at 0.000001 (1 micro).
  assert.equal(costNanos(MAX, 0.000001), Math.ceil(MAX / 1000)); // 9007199254740.991 -> ...741
  assert.equal(costNanos(MAX, 0.000001), 9_007_199_254_741);
  // A float product would be off by one here: 9007199254740728 * 11 = 99079191802148008 is not a
  // double (the nearest is ...8000), and the 8 left over is what rounds the cost up to ...149.
  assert.equal(Math.ceil((9_007_199_254_740_728 * 11) / 1000), 99_079_191_802_148);
  assert.equal(costNanos(9_007_199_254_740_728, 0.000011), 99_079_191_802_149);
});

test('costNanos: a count or price that is not valid is a programming error', () => {
  for (const tokens of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, MAX + 1]) {
    assert.throws(() => costNanos(tokens, 1), RangeError, String(tokens));
  }
  for (const price of [-0.01, Number.NaN, Number.POSITIVE_INFINITY]) {
    assert.throws(() => costNanos(1, price), RangeError, String(price));
  }
});

test('usageCostNanos: uncached prompt at input, cached at cachedInput, completion at output', () => {
  const price = { input: 0.15, cachedInput: 0.075, output: 0.6 };
  // 1000 - 400 = 600 at 0.15 = 90_000; 400 at 0.075 = 30_000; 250 at 0.6 = 150_000.
  assert.equal(usageCostNanos({ promptTokens: 1000, cachedTokens: 400, completionTokens: 250 }, price), 270_000);
  assert.equal(usageCostNanos({ promptTokens: 0, cachedTokens: 0, completionTokens: 0 }, price), 0);
  // Each part is rounded up on its own: 1 at 0.0375 -> 38, 1 at 0.01875 -> 19, 1 at 0.000001 -> 1.
  assert.equal(usageCostNanos({ promptTokens: 2, cachedTokens: 1, completionTokens: 1 }, { input: 0.0375, cachedInput: 0.01875, output: 0.000001 }), 58);
  assert.equal(usageCostNanos({ promptTokens: 5, cachedTokens: 5, completionTokens: 0 }, price), 375);
  assert.equal(usageCostNanos({ promptTokens: MAX, cachedTokens: 0, completionTokens: MAX }, { input: 10_000, cachedInput: 10_000, output: 10_000 }), MAX);
  assert.equal(usageCostNanos({ promptTokens: 900_719_925, cachedTokens: 0, completionTokens: 1 }, { input: 10_000, cachedInput: 10_000, output: 10_000 }), MAX);
  for (const cachedTokens of [-1, 1001, 0.5]) {
    assert.throws(() => usageCostNanos({ promptTokens: 1000, cachedTokens, completionTokens: 0 }, price), RangeError, String(cachedTokens));
  }
  assert.throws(() => usageCostNanos({ promptTokens: 10, cachedTokens: 0, completionTokens: -1 }, price), RangeError);
});

test('formatMoney: six decimals, more only when the nanos need them', () => {
  assert.equal(formatMoney(150_000, 'USD'), '0.000150 USD');
  assert.equal(formatMoney(150, 'USD'), '0.00000015 USD');
  assert.equal(formatMoney(1, 'USD'), '0.000000001 USD');
  assert.equal(formatMoney(0, 'EUR'), '0.000000 EUR');
  assert.equal(formatMoney(25_500_000_000, 'USD'), '25.500000 USD');
  assert.equal(formatMoney(1_000_000_001, 'USD'), '1.000000001 USD');
  assert.equal(formatMoney(123_456_789_120, 'JPY'), '123.45678912 JPY');
  assert.equal(formatMoney(-2_500_000, 'USD'), '-0.002500 USD');
  // The largest safe integer, every digit kept.
  assert.equal(formatMoney(MAX, 'USD'), '9007199.254740991 USD');
  assert.equal(formatMoney(9_007_191_999_999_999, 'USD'), '9007191.999999999 USD');
  for (const bad of [0.5, Number.NaN, MAX + 1]) assert.throws(() => formatMoney(bad, 'USD'), RangeError, String(bad));
});

test('nanosOf and amountOf convert currency units and nanos', () => {
  assert.equal(nanosOf(25.5), 25_500_000_000);
  assert.equal(nanosOf(0.000001), 1000);
  assert.equal(nanosOf(1_000_000), 1e15);
  assert.equal(nanosOf(1_000_000.123456), 1_000_000_123_456_000);
  assert.equal(nanosOf(0.1 + 0.2), 300_000_000);
  assert.ok(Object.is(nanosOf(-0), 0));
  assert.ok(Object.is(nanosOf(-1e-12), 0));
  for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, 1e7]) assert.throws(() => nanosOf(bad), RangeError, String(bad));
  assert.equal(amountOf(25_500_000_000), 25.5);
  assert.equal(amountOf(150), 1.5e-7);
  assert.equal(amountOf(0), 0);
  for (const amount of [0.15, 25.5, 0.000001, 999_999.999999]) assert.equal(amountOf(nanosOf(amount)), amount);
});
