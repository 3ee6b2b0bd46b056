// The dashboard's wording of limits, aliases and expiry dates.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CIRCUIT_LABEL, dateInputFromExpiry, describeAliases, describeLimits, expiryFromDateInput, STATUS_LABEL } from '../../src/dashboard/format.ts';

test('limits: each set limit in a fixed order, or "No limits"', () => {
  const none = { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null, tokenBudget: null, costBudget: null };
  assert.equal(describeLimits(none, 'USD'), 'No limits');
  assert.equal(
    describeLimits({ requestsPerMinute: 60, tokensPerMinute: 500, concurrentRequests: 4, tokenBudget: { tokens: 900, period: 'day' }, costBudget: { amount: 25.5, period: 'month' } }, 'USD'),
    '60 req/min · 500 tokens/min · 4 at once · 900 tokens/day · 25.50 USD/month',
  );
  assert.equal(describeLimits({ ...none, concurrentRequests: 2 }, 'USD'), '2 at once');
  assert.equal(describeLimits({ ...none, costBudget: { amount: 0.125, period: 'day' } }, 'EUR'), '0.125 EUR/day');
  assert.equal(describeLimits({ ...none, costBudget: { amount: 3, period: 'day' } }, ''), '3.00/day', 'currency unknown: the amount alone');
});

test('limits of a record from before spending budgets (no costBudget field) read as before', () => {
  assert.equal(describeLimits({ requestsPerMinute: 60, tokensPerMinute: null, concurrentRequests: null, tokenBudget: null }, 'USD'), '60 req/min');
});

test('aliases: null is every alias, an empty list is none', () => {
  assert.equal(describeAliases(null), 'All aliases');
  assert.equal(describeAliases([]), 'None');
  assert.equal(describeAliases(['service-chat', 'service-fast']), 'service-chat, service-fast');
});

test('expiry dates: only YYYY-MM-DD is read; instants read back as the local date', () => {
  assert.equal(expiryFromDateInput(''), null);
  assert.equal(expiryFromDateInput('03/03/2027'), null);
  assert.equal(expiryFromDateInput('2027-02-30'), null);
  assert.equal(expiryFromDateInput('2027-13-01'), null);
  assert.equal(expiryFromDateInput('2027-03-03'), new Date(2027, 2, 3, 23, 59, 59, 999).toISOString());
  assert.equal(dateInputFromExpiry(null), '');
  assert.equal(dateInputFromExpiry('not a date'), '');
  assert.equal(dateInputFromExpiry(new Date(2027, 0, 9, 8, 0).toISOString()), '2027-01-09');
});

test('every status and circuit state has a word', () => {
  assert.deepEqual(STATUS_LABEL, { active: 'Active', revoked: 'Revoked', expired: 'Expired' });
  assert.deepEqual(CIRCUIT_LABEL, { closed: 'Healthy', half_open: 'Recovering', open: 'Failing' });
});
