// The create-token form as the body of POST /api/tokens.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeScopes, MAX_TOKEN_DAYS, MAX_TOKEN_NAME, tokenRequest } from '../../src/dashboard/token-input.ts';

const NOW = new Date(2026, 10, 26, 12, 0, 0);
const DAY = 86_400_000;
const base = { name: 'ci-deploy', scopes: ['read' as const], expiry: '30', date: '' };

test('7, 30 and 90 days are counted from now', () => {
  for (const days of [7, 30, 90]) {
    assert.deepEqual(tokenRequest({ ...base, expiry: String(days) }, NOW), { ok: true, request: { name: 'ci-deploy', scopes: ['read'], expiresAt: new Date(NOW.getTime() + days * DAY).toISOString() } });
  }
});

test('a date expires at the end of that day in the browser\'s time zone', () => {
  const outcome = tokenRequest({ ...base, expiry: 'date', date: '2027-03-31' }, NOW);
  assert.deepEqual(outcome, { ok: true, request: { name: 'ci-deploy', scopes: ['read'], expiresAt: new Date(2027, 2, 31, 23, 59, 59, 999).toISOString() } });
  assert.equal(tokenRequest({ ...base, expiry: 'date', date: '2026-11-26' }, NOW).ok, true, 'today still has hours left');
});

test('scopes go in a fixed order, each once; the name is trimmed', () => {
  const outcome = tokenRequest({ ...base, name: '  terraform ', scopes: ['keys', 'read', 'keys'] }, NOW);
  assert.ok(outcome.ok);
  assert.deepEqual(outcome.request.scopes, ['read', 'keys']);
  assert.equal(outcome.request.name, 'terraform');
  assert.equal(describeScopes(['read', 'keys']), 'Read, Manage keys');
  assert.equal(describeScopes(['admin']), 'admin');
});

test('each problem names its field and what to change', () => {
  assert.deepEqual(tokenRequest({ ...base, name: '   ' }, NOW), { ok: false, field: 'name', message: 'Name the token after what uses it, e.g. “ci-deploy”.' });
  assert.deepEqual(tokenRequest({ ...base, name: 'n'.repeat(MAX_TOKEN_NAME + 1) }, NOW), { ok: false, field: 'name', message: `Shorten the name to at most ${MAX_TOKEN_NAME} characters.` });
  assert.equal(tokenRequest({ ...base, name: 'n'.repeat(MAX_TOKEN_NAME) }, NOW).ok, true);
  assert.deepEqual(tokenRequest({ ...base, scopes: [] }, NOW), { ok: false, field: 'scopes', message: 'Choose what the token may do: read, manage keys, or both.' });
  assert.deepEqual(tokenRequest({ ...base, expiry: '' }, NOW), { ok: false, field: 'expiry', message: 'Choose when the token expires.' });
  assert.deepEqual(tokenRequest({ ...base, expiry: '365' }, NOW), { ok: false, field: 'expiry', message: 'Choose when the token expires.' });
  assert.deepEqual(tokenRequest({ ...base, expiry: 'date', date: '' }, NOW), { ok: false, field: 'date', message: 'Pick the day the token expires.' });
  assert.deepEqual(tokenRequest({ ...base, expiry: 'date', date: '2027-02-30' }, NOW), { ok: false, field: 'date', message: 'Enter the expiry as a date, e.g. 2027-03-31.' });
  assert.deepEqual(tokenRequest({ ...base, expiry: 'date', date: '2026-11-25' }, NOW), { ok: false, field: 'date', message: 'Pick a day from today on: the token would already have expired.' });
  assert.deepEqual(tokenRequest({ ...base, expiry: 'date', date: '2027-11-28' }, NOW), {
    ok: false,
    field: 'date',
    message: `Pick a day at most ${MAX_TOKEN_DAYS} days ahead; create a new token when this one nears its end.`,
  });
});
