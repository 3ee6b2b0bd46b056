// How the audit view words actors, actions and the fields a record changed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AUDIT_ACTIONS } from '../../src/audit/audit-event.ts';
import { ACTION_LABEL, actionLabel, actionTone, actorDescription, actorKindLabel, actorName, auditChanges, createdByLabel, formatAuditValue } from '../../src/dashboard/audit-labels.ts';

const KEY = { id: 'key_1', name: 'billing', prefix: 'pk_ab', status: 'active', expiresAt: null, allowedAliases: null, limits: { requestsPerMinute: 60, tokensPerMinute: null, concurrentRequests: null, tokenBudget: null } };

test('every action the server records has words', () => {
  assert.deepEqual(Object.keys(ACTION_LABEL).sort(), [...AUDIT_ACTIONS].sort());
  assert.equal(actionLabel('key.rotate'), 'Key rotated');
  assert.equal(actionLabel('something.new'), 'something.new', 'an action from a newer server is shown as it is');
  assert.equal(actionTone('admin.login_failed'), 'danger');
  assert.equal(actionTone('key.create'), 'neutral');
});

test('actors: the name when there is one, else the id; the refused login\'s "-" is unknown', () => {
  assert.equal(actorName({ id: 'admin' }), 'admin');
  assert.equal(actorName({ id: '248289761001', name: 'alice@example.com' }), 'alice@example.com');
  assert.equal(actorName({ id: 'tok_1', name: '' }), 'tok_1');
  assert.equal(actorName({ id: '-' }), 'unknown');
  assert.equal(actorKindLabel('sso'), 'single sign-on');
  assert.equal(actorKindLabel('robot'), 'robot');
  assert.equal(actorDescription({ kind: 'sso', id: '2482', issuer: 'https://id.example.com', name: 'alice' }), 'alice (single sign-on, id 2482, issuer https://id.example.com)');
  assert.equal(actorDescription({ kind: 'cli', id: 'deploy', uid: 1001, name: 'deploy' }), 'deploy (command line, uid 1001)');
  assert.equal(actorDescription({ kind: 'cli', id: 'deploy', uid: null }), 'deploy (command line)');
  assert.equal(actorDescription({ kind: 'token', id: 'tok_9', name: 'ci' }), 'ci (API token, id tok_9)');
});

test('a create lists every field of after, whole', () => {
  assert.deepEqual(auditChanges(null, { id: 'key_1', limits: { requestsPerMinute: 60 } }), [
    { field: 'id', before: undefined, after: 'key_1' },
    { field: 'limits', before: undefined, after: { requestsPerMinute: 60 } },
  ]);
});

test('a change lists only what changed; nested objects field by field with a dotted name', () => {
  const after = { ...KEY, name: 'billing-eu', allowedAliases: ['service-chat'], limits: { ...KEY.limits, requestsPerMinute: 120, concurrentRequests: 4 } };
  assert.deepEqual(auditChanges(KEY, after), [
    { field: 'name', before: 'billing', after: 'billing-eu' },
    { field: 'allowedAliases', before: null, after: ['service-chat'] },
    { field: 'limits.requestsPerMinute', before: 60, after: 120 },
    { field: 'limits.concurrentRequests', before: null, after: 4 },
  ]);
});

test('key order inside a value is not a change; a field only one side has is', () => {
  assert.deepEqual(auditChanges({ a: { x: 1, y: 2 }, b: 1 }, { b: 1, a: { y: 2, x: 1 } }), []);
  assert.deepEqual(auditChanges({ a: 1 }, { a: 1, rotatedAt: '2026-11-26T00:00:00.000Z' }), [{ field: 'rotatedAt', before: undefined, after: '2026-11-26T00:00:00.000Z' }]);
  assert.deepEqual(auditChanges({ a: [1, 2] }, { a: [2, 1] }), [{ field: 'a', before: [1, 2], after: [2, 1] }], 'array order matters');
  assert.deepEqual(auditChanges({ limits: null }, { limits: { rpm: 1 } }), [{ field: 'limits', before: null, after: { rpm: 1 } }]);
  assert.deepEqual(auditChanges({ id: 'tok_1' }, null), [{ field: 'id', before: 'tok_1', after: undefined }]);
  assert.deepEqual(auditChanges(null, null), []);
});

test('values: text as it is, null as "none", absent as a dash, the rest as JSON', () => {
  assert.equal(formatAuditValue('pk_ab'), 'pk_ab');
  assert.equal(formatAuditValue(null), 'none');
  assert.equal(formatAuditValue(undefined), '—');
  assert.equal(formatAuditValue(60), '60');
  assert.equal(formatAuditValue(false), 'false');
  assert.equal(formatAuditValue(['a', 'b']), '["a","b"]');
  assert.equal(formatAuditValue({ period: 'day' }), '{"period":"day"}');
});

test('who created a token: "who (how)"; anything unexpected as it is', () => {
  assert.equal(createdByLabel('password:admin'), 'admin (password)');
  assert.equal(createdByLabel('sso:248289761001'), '248289761001 (single sign-on)');
  assert.equal(createdByLabel('cli:deploy'), 'deploy (command line)');
  assert.equal(createdByLabel('sso:a:b'), 'a:b (single sign-on)', 'only the first colon separates');
  assert.equal(createdByLabel('robot:x'), 'robot:x');
  assert.equal(createdByLabel('cli:'), 'cli:');
  assert.equal(createdByLabel('plain'), 'plain');
});
