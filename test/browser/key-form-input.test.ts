// The key form's checks and the body it builds for POST/PATCH /api/keys.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dateInputFromExpiry } from '../../src/dashboard/format.ts';
import { fieldForParam, parseKeyForm, type KeyFormText } from '../../src/dashboard/key-form-input.ts';

const NOW = new Date('2026-06-15T12:00:00Z');
const BLANK: KeyFormText = {
  name: 'billing',
  allAliases: true,
  aliases: [],
  expiryDate: '',
  requestsPerMinute: '',
  tokensPerMinute: '',
  concurrentRequests: '',
  budgetTokens: '',
  budgetPeriod: 'month',
  costBudgetAmount: '',
  costBudgetPeriod: 'month',
  currency: 'USD',
};

test('a blank form: all aliases, no expiry, every limit null', () => {
  assert.deepEqual(parseKeyForm({ ...BLANK, name: '  billing  ' }, NOW), {
    ok: true,
    changes: {
      name: 'billing',
      allowedAliases: null,
      expiresAt: null,
      limits: { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null, tokenBudget: null, costBudget: null },
    },
  });
});

test('aliases, limits and both budgets are sent as numbers and a sorted list', () => {
  const parsed = parseKeyForm(
    {
      ...BLANK,
      allAliases: false,
      aliases: ['service-fast', 'service-chat', 'service-fast'],
      requestsPerMinute: '60',
      tokensPerMinute: ' 20000 ',
      concurrentRequests: '4',
      budgetTokens: '1000000',
      budgetPeriod: 'day',
      costBudgetAmount: ' 25.50 ',
      costBudgetPeriod: 'month',
    },
    NOW,
  );
  assert.deepEqual(parsed, {
    ok: true,
    changes: {
      name: 'billing',
      allowedAliases: ['service-chat', 'service-fast'],
      expiresAt: null,
      limits: {
        requestsPerMinute: 60,
        tokensPerMinute: 20000,
        concurrentRequests: 4,
        tokenBudget: { tokens: 1000000, period: 'day' },
        costBudget: { amount: 25.5, period: 'month' },
      },
    },
  });
});

test('a spending budget alone, per day; its period is read only when an amount is given', () => {
  const parsed = parseKeyForm({ ...BLANK, costBudgetAmount: '0.125', costBudgetPeriod: 'day' }, NOW);
  assert.deepEqual(parsed.ok && parsed.changes.limits, { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null, tokenBudget: null, costBudget: { amount: 0.125, period: 'day' } });
  const empty = parseKeyForm({ ...BLANK, costBudgetAmount: '', costBudgetPeriod: 'day' }, NOW);
  assert.equal(empty.ok && empty.changes.limits?.costBudget, null);
});

test('an expiry date is the end of that day in the local time zone, and reads back as the same date', () => {
  const parsed = parseKeyForm({ ...BLANK, expiryDate: '2027-03-03' }, NOW);
  assert.equal(parsed.ok, true);
  const expiresAt = parsed.ok ? parsed.changes.expiresAt : null;
  assert.equal(expiresAt, new Date(2027, 2, 3, 23, 59, 59, 999).toISOString());
  assert.equal(dateInputFromExpiry(expiresAt ?? null), '2027-03-03');
});

test('each problem names its field', () => {
  const cases: Array<[Partial<KeyFormText>, string, string]> = [
    [{ name: '   ' }, 'key-name', 'Give the key a name, such as the app or team that uses it.'],
    [{ name: 'x'.repeat(101) }, 'key-name', 'The name is longer than 100 characters.'],
    [{ allAliases: false, aliases: [] }, 'aliases-all', 'Pick at least one alias, or allow all aliases.'],
    [{ expiryDate: '2026-02-30' }, 'key-expiry', 'The expiry date is not a valid date.'],
    [{ expiryDate: '2026-06-14' }, 'key-expiry', 'The expiry date is in the past.'],
    [{ requestsPerMinute: '0' }, 'limit-rpm', 'Requests per minute must be a whole number of at least 1, or empty for no limit.'],
    [{ tokensPerMinute: '1.5' }, 'limit-tpm', 'Tokens per minute must be a whole number of at least 1, or empty for no limit.'],
    [{ concurrentRequests: '-2' }, 'limit-concurrent', 'Concurrent requests must be a whole number of at least 1, or empty for no limit.'],
    [{ budgetTokens: '1e6' }, 'limit-budget', 'The token budget must be a whole number of at least 1, or empty for no limit.'],
    [{ budgetTokens: '99999999999999' }, 'limit-budget', 'The token budget must be a whole number of at least 1, or empty for no limit.'],
    [{ budgetPeriod: 'week' }, 'limit-budget-period', 'The token budget period is a day or a month.'],
    [{ costBudgetAmount: '25,50' }, 'limit-cost-budget', 'Write the spending budget with a dot for decimals and no commas, e.g. 25.50.'],
    [{ costBudgetAmount: '$25' }, 'limit-cost-budget', 'The spending budget is an amount in USD such as 25.50, or empty for no budget.'],
    [{ costBudgetAmount: 'lots', currency: '' }, 'limit-cost-budget', 'The spending budget is an amount in currency units such as 25.50, or empty for no budget.'],
    [{ costBudgetAmount: '0.0000001' }, 'limit-cost-budget', 'The spending budget has more than 6 decimals.'],
    [{ costBudgetAmount: '0' }, 'limit-cost-budget', 'The spending budget must be more than 0, or empty for no budget.'],
    [{ costBudgetAmount: '1000001', currency: 'EUR' }, 'limit-cost-budget', 'The spending budget is at most 1,000,000 EUR.'],
    [{ costBudgetAmount: '5', costBudgetPeriod: 'year' }, 'limit-cost-budget-period', 'The spending budget period is a day or a month.'],
  ];
  for (const [change, field, message] of cases) {
    assert.deepEqual(parseKeyForm({ ...BLANK, ...change }, NOW), { ok: false, problem: { field, message } }, JSON.stringify(change));
  }
});

test("a server error's param points at the input it is about", () => {
  const cases: Array<[string | null, string]> = [
    ['name', 'key-name'],
    ['allowedAliases', 'aliases-all'],
    ['allowedAliases[3]', 'aliases-all'],
    ['expiresAt', 'key-expiry'],
    ['limits.requestsPerMinute', 'limit-rpm'],
    ['limits.tokensPerMinute', 'limit-tpm'],
    ['limits.concurrentRequests', 'limit-concurrent'],
    ['limits.tokenBudget', 'limit-budget'],
    ['limits.tokenBudget.tokens', 'limit-budget'],
    ['limits.tokenBudget.period', 'limit-budget-period'],
    ['limits.costBudget', 'limit-cost-budget'],
    ['limits.costBudget.amount', 'limit-cost-budget'],
    ['limits.costBudget.period', 'limit-cost-budget-period'],
    ['limits', 'key-name'],
    ['something.else', 'key-name'],
    [null, 'key-name'],
  ];
  for (const [param, field] of cases) assert.equal(fieldForParam(param), field, String(param));
});
