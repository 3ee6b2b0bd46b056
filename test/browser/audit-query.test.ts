// The audit view's filters as the query of GET /api/audit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AUDIT_ACTIONS as SERVER_ACTIONS } from '../../src/audit/audit-event.ts';
import { AUDIT_ACTIONS, AUDIT_PAGE_SIZE, auditFilter, auditQuery, instantFromLocalInput, isFiltered, MAX_FILTER_LENGTH, NO_FILTER } from '../../src/dashboard/audit-query.ts';

test('the action list is the server\'s, in its order', () => {
  assert.deepEqual([...AUDIT_ACTIONS], [...SERVER_ACTIONS]);
});

test('datetime-local values are read as UTC whatever the browser\'s zone; anything else is refused', () => {
  assert.equal(instantFromLocalInput('2026-11-26T09:30'), '2026-11-26T09:30:00.000Z', 'read as UTC, the zone the page shows times in');
  assert.equal(instantFromLocalInput('2026-11-26T09:30:15'), '2026-11-26T09:30:15.000Z');
  assert.equal(instantFromLocalInput(''), null);
  assert.equal(instantFromLocalInput('2026-11-26'), null);
  assert.equal(instantFromLocalInput('2026-04-31T10:00'), null, '31 April does not roll into May');
  assert.equal(instantFromLocalInput('2026-11-26T25:00'), null);
  assert.equal(instantFromLocalInput('26/11/2026 09:30'), null);
});

test('an empty form is no filter: the query asks for the newest page only', () => {
  const outcome = auditFilter(NO_FILTER);
  assert.deepEqual(outcome, { ok: true, filter: {} });
  assert.equal(isFiltered({}), false);
  assert.equal(auditQuery({}, null), `?limit=${AUDIT_PAGE_SIZE}`);
});

test('every field set: trimmed, instants in ISO, in a fixed order, then limit and before', () => {
  const outcome = auditFilter({ key: ' key_abc ', actor: 'alice@example.com', action: 'key.rotate', since: '2026-11-01T00:00', until: '2026-11-26T23:59' });
  assert.ok(outcome.ok);
  const since = new Date(Date.UTC(2026, 10, 1, 0, 0)).toISOString();
  const until = new Date(Date.UTC(2026, 10, 26, 23, 59)).toISOString();
  assert.deepEqual(outcome.filter, { key: 'key_abc', actor: 'alice@example.com', action: 'key.rotate', since, until });
  assert.equal(isFiltered(outcome.filter), true);
  assert.equal(
    auditQuery(outcome.filter, 1234, 20),
    `?key=key_abc&actor=alice%40example.com&action=key.rotate&since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}&limit=20&before=1234`,
  );
});

test('characters that mean something in a query are escaped, not passed through', () => {
  assert.equal(auditQuery({ actor: 'a&b=c #1' }, null, 5), '?actor=a%26b%3Dc+%231&limit=5');
});

test('each bad field is named with what to change', () => {
  assert.deepEqual(auditFilter({ ...NO_FILTER, key: 'k'.repeat(MAX_FILTER_LENGTH + 1) }), { ok: false, field: 'key', message: `Shorten the key id to at most ${MAX_FILTER_LENGTH} characters.` });
  assert.deepEqual(auditFilter({ ...NO_FILTER, actor: 'a'.repeat(MAX_FILTER_LENGTH + 1) }), { ok: false, field: 'actor', message: `Shorten the actor to at most ${MAX_FILTER_LENGTH} characters.` });
  assert.deepEqual(auditFilter({ ...NO_FILTER, action: 'key.delete' }), { ok: false, field: 'action', message: 'Choose an action from the list.' });
  assert.deepEqual(auditFilter({ ...NO_FILTER, since: 'yesterday' }), { ok: false, field: 'since', message: 'Enter the start as a date and time, or leave it empty.' });
  assert.deepEqual(auditFilter({ ...NO_FILTER, until: '2026-02-30T10:00' }), { ok: false, field: 'until', message: 'Enter the end as a date and time, or leave it empty.' });
  const backwards = { ok: false, field: 'until', message: 'The end of the time range must be after its start.' };
  assert.deepEqual(auditFilter({ ...NO_FILTER, since: '2026-11-27T10:00', until: '2026-11-26T10:00' }), backwards);
  assert.deepEqual(auditFilter({ ...NO_FILTER, since: '2026-11-26T10:00', until: '2026-11-26T10:00' }), backwards, 'until is exclusive: an empty range is refused');
  assert.equal(auditFilter({ ...NO_FILTER, since: '2026-11-26T10:00', until: '2026-11-26T10:01' }).ok, true);
});
