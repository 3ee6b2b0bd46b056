// The dashboard's money: exact decimal text from integer nanos, budgets and
// prices as written, and the amount an operator types. (The tests run in
// Node's default locale, en-US here, like the page's tests in Chromium.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AmountProblem, decimalOfNanos, formatAmount, formatCost, formatCostAxis, formatCostBudget, formatPrice, nanosOfAmount, parseBudgetAmount, uncountedNote } from '../../src/dashboard/money.ts';

test('costs: every digit that is not zero, at least 2 decimals (never "0.000000"), the currency after', () => {
  assert.equal(formatCost(0, 'USD'), '0.00 USD');
  assert.equal(formatCost(150_000, 'USD'), '0.00015 USD');
  assert.equal(formatCost(149_200, 'USD'), '0.0001492 USD');
  assert.equal(formatCost(1, 'USD'), '0.000000001 USD');
  assert.equal(formatCost(1_230, 'EUR'), '0.00000123 EUR');
  assert.equal(formatCost(25_500_000_000, 'USD'), '25.50 USD');
  assert.equal(formatCost(1_234_567_890_123, 'USD'), '1,234.567890123 USD');
  assert.equal(formatCost(150_000, ''), '0.00015', 'no currency known: the amount alone');
});

test('the spending bar says how much of the records the budget did not count, and each reason it may have', () => {
  assert.equal(
    uncountedNote(0, 149_200, 'month', 'USD'),
    'The key spent 0.0001492 USD this month (UTC) in all; 0.0001492 USD of it is not counted against the budget: spent before the budget was set, above what one answer may be charged, or while the budget could not be counted.',
  );
  assert.equal(uncountedNote(50_000, 149_200, 'day', 'EUR'), 'The key spent 0.0001492 EUR today (UTC) in all; 0.0000992 EUR of it is not counted against the budget: spent before the budget was set, above what one answer may be charged, or while the budget could not be counted.');
  assert.equal(uncountedNote(149_200, 149_200, 'month', 'USD'), null, 'they agree');
  assert.equal(uncountedNote(200_000, 149_200, 'month', 'USD'), null, 'requests in flight run the bar ahead of the records');
  assert.equal(uncountedNote(0, null, 'month', 'USD'), null, 'the records do not reach back to the window\'s start');
});

test('costs near 2^53 nanos stay exact (no float rounding of the fraction)', () => {
  assert.equal(formatCost(Number.MAX_SAFE_INTEGER, 'USD'), '9,007,199.254740991 USD');
  assert.equal(formatCost(8_999_999_123_456_789, 'USD'), '8,999,999.123456789 USD');
});

test('a cost that is not whole non-negative nanos reads "unknown", never a wrong amount', () => {
  for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
    assert.equal(formatCost(bad, 'USD'), 'unknown', String(bad));
    assert.equal(decimalOfNanos(bad, 6), null, String(bad));
  }
});

test('amounts as written: at least 2 decimals, at most the 6 written', () => {
  assert.equal(formatAmount(25.5), '25.50');
  assert.equal(formatAmount(25), '25.00');
  assert.equal(formatAmount(0.075), '0.075');
  assert.equal(formatAmount(0.000001), '0.000001');
  assert.equal(formatAmount(1_000_000), '1,000,000.00');
  assert.equal(formatAmount(999_999.999999), '999,999.999999');
  assert.equal(formatAmount(0.1 + 0.2), '0.30', 'a float of a decimal reads as the decimal');
});

test('nanos of an amount: exact for 6 decimals up to the largest budget and price', () => {
  assert.equal(nanosOfAmount(25.5), 25_500_000_000);
  assert.equal(nanosOfAmount(0.000001), 1_000);
  assert.equal(nanosOfAmount(999_999.999999), 999_999_999_999_000);
  assert.equal(nanosOfAmount(1.1), 1_100_000_000);
});

test('axis labels: the amount alone, no trailing zeros', () => {
  assert.equal(formatCostAxis(0), '0');
  assert.equal(formatCostAxis(200_000), '0.0002');
  assert.equal(formatCostAxis(100_000), '0.0001');
  assert.equal(formatCostAxis(5_000_000_000), '5');
  assert.equal(formatCostAxis(1_500_000_000_000), '1,500');
});

test('a spending budget reads like the CLI: "25.50 USD/month"', () => {
  assert.equal(formatCostBudget({ amount: 25.5, period: 'month' }, 'USD'), '25.50 USD/month');
  assert.equal(formatCostBudget({ amount: 0.125, period: 'day' }, 'EUR'), '0.125 EUR/day');
  assert.equal(formatCostBudget({ amount: 3, period: 'day' }, ''), '3.00/day');
});

test('prices per million tokens: input / output, the cached price only when it differs, all zero is free', () => {
  assert.equal(formatPrice({ input: 2.5, cachedInput: 2.5, output: 10 }, 'USD'), '2.50 / 10.00 USD per 1M tokens in/out');
  assert.equal(formatPrice({ input: 0.15, cachedInput: 0.075, output: 0.6 }, 'USD'), '0.15 / 0.60 USD per 1M tokens in/out, cached input 0.075');
  assert.equal(formatPrice({ input: 0, cachedInput: 0, output: 0 }, 'USD'), 'Free');
  assert.equal(formatPrice({ input: 0, cachedInput: 0, output: 0.5 }, 'USD'), '0.00 / 0.50 USD per 1M tokens in/out');
});

test('typed budgets: empty is none; digits with up to 6 decimals, more than 0, at most 1,000,000', () => {
  const cases: Array<[string, number | null]> = [
    ['', null],
    ['   ', null],
    ['25.50', 25.5],
    [' 25.5 ', 25.5],
    ['0.000001', 0.000001],
    ['1000000', 1_000_000],
    ['1000000.000000', 1_000_000],
    ['007', 7],
  ];
  for (const [text, amount] of cases) assert.deepEqual(parseBudgetAmount(text), { ok: true, amount }, JSON.stringify(text));
});

test('typed budgets: each wrong text has its own reason', () => {
  const cases: Array<[string, AmountProblem]> = [
    ['25,50', AmountProblem.comma],
    ['1,000', AmountProblem.comma],
    ['abc', AmountProblem.notAnAmount],
    ['-5', AmountProblem.notAnAmount],
    ['+5', AmountProblem.notAnAmount],
    ['1e3', AmountProblem.notAnAmount],
    ['.5', AmountProblem.notAnAmount],
    ['5.', AmountProblem.notAnAmount],
    ['$5', AmountProblem.notAnAmount],
    ['5 USD', AmountProblem.notAnAmount],
    ['Infinity', AmountProblem.notAnAmount],
    ['1'.repeat(17), AmountProblem.notAnAmount],
    ['0.0000001', AmountProblem.tooManyDecimals],
    ['0', AmountProblem.zero],
    ['0.000000', AmountProblem.zero],
    ['1000000.000001', AmountProblem.tooLarge],
    ['99999999', AmountProblem.tooLarge],
  ];
  for (const [text, reason] of cases) assert.deepEqual(parseBudgetAmount(text), { ok: false, reason }, JSON.stringify(text));
});
