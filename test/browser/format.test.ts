// The dashboard's wording of limits, aliases and expiry dates.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CIRCUIT_LABEL, dateInputFromExpiry, describeAliases, describeGuard, describeLimits, expiryFromDateInput, findingParts, findingsOf, formatBucketStart, formatDateTime, formatFullDateTime, formatInstant, formatShortDateTime, hasFindings, STATUS_LABEL, sumFindings } from '../../src/dashboard/format.ts';

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

test('times are in UTC and say so, whatever the browser\'s zone (the CLI and the budgets count in UTC)', () => {
  const iso = '2026-11-28T10:15:02.123Z';
  assert.equal(formatInstant(iso), '2026-11-28 10:15:02 UTC');
  assert.equal(formatShortDateTime(iso), '2026-11-28 10:15 UTC');
  assert.equal(formatDateTime(iso, 'never'), '2026-11-28 10:15 UTC');
  assert.equal(formatDateTime(null, 'never'), 'never');
  assert.equal(formatFullDateTime(iso), '2026-11-28 10:15:02 UTC (2026-11-28T10:15:02.123Z)');
  assert.equal(formatBucketStart('2026-11-28T10:00:00.000Z', 'hour'), '2026-11-28 10:00 UTC');
  assert.equal(formatBucketStart('2026-11-28T00:00:00.000Z', 'day'), '2026-11-28');
  assert.equal(formatInstant('not a time'), 'not a time', 'shown as it came');
  // An instant near midnight in a zone east of UTC is still the UTC day.
  assert.equal(formatInstant('2026-11-27T23:30:00+01:00'), '2026-11-27 22:30:00 UTC');
});

test("a key's guard: each detector or group with its action, in the order set; nothing when none", () => {
  assert.equal(describeGuard({ detectors: { secrets: 'block', email: 'mask' } }), 'secrets: block · email: mask');
  assert.equal(describeGuard({ detectors: {} }), 'empty policy (no detectors of its own)', 'set, but empty: not the same as none');
  assert.equal(describeGuard(null), '');
  assert.equal(describeGuard(undefined), '', 'an older server sends no guard');
});

test("guard findings: by action from usage counts (absent from older servers: 0), summed over buckets, worded with every action or not at all", () => {
  const counts = { requests: 3, promptTokens: 0, completionTokens: 0, cachedTokens: 0, errors: 1 };
  assert.deepEqual(findingsOf(counts), { blocked: 0, masked: 0, logged: 0 });
  assert.deepEqual(findingsOf({ ...counts, guardBlocked: 1, guardMasked: 2, guardLogged: 3 }), { blocked: 1, masked: 2, logged: 3 });
  assert.deepEqual(sumFindings([{ ...counts, guardBlocked: 1 }, counts, { ...counts, guardMasked: 4, guardLogged: 1200 }]), { blocked: 1, masked: 4, logged: 1200 });
  assert.equal(hasFindings({ blocked: 0, masked: 0, logged: 0 }), false);
  assert.equal(hasFindings({ blocked: 0, masked: 0, logged: 1 }), true);
  assert.deepEqual(findingParts({ blocked: 0, masked: 0, logged: 0 }), []);
  assert.deepEqual(findingParts({ blocked: 2, masked: 0, logged: 1200 }), ['2 blocked', '0 masked', `${(1200).toLocaleString()} logged`]);
});
