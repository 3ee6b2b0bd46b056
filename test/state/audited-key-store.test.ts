// auditedKeyStore over the real file key store: the key view it records, an
// update that changes nothing, a key that cannot be read before its change,
// who's detail on every record, and reads passing through unrecorded.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { auditedKeyStore, auditKeyView } from '../../src/state/audited-key-store.ts';
import { openKeyStore } from '../../src/state/file-key-store.ts';
import { recordingAuditTrail } from '../admin/recording-audit-trail.ts';
import { freshPath, tempDir } from '../support/temp-dir.ts';

const root = tempDir('audited-keys');

const NOW = Date.parse('2026-11-22T05:30:00.000Z');
const EXPIRY = '2099-01-01T00:00:00.000Z';
const WHO = { actor: { kind: 'token', id: 'tok_AAAAAAAAAAAAAAAA', name: 'ci' }, source: '10.0.0.7' } as const;
const NO_LIMITS = { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null, tokenBudget: null, costBudget: null };

function open() {
  const dir = freshPath(root, 'data');
  const store = openKeyStore(dir, { watch: false });
  return { dir, store };
}

test('auditKeyView: the non-secret fields only, status judged at the given time', async () => {
  const { store } = open();
  const { record } = await store.create('view', {
    expiresAt: EXPIRY,
    allowedAliases: ['a', 'b'],
    limits: { tokenBudget: { tokens: 1000, period: 'day' }, costBudget: { amount: 2.5, period: 'month' } },
  });
  const view = {
    id: record.id,
    name: 'view',
    prefix: record.prefix,
    status: 'active',
    expiresAt: EXPIRY,
    allowedAliases: ['a', 'b'],
    limits: { ...NO_LIMITS, tokenBudget: { tokens: 1000, period: 'day' }, costBudget: { amount: 2.5, period: 'month' } },
    revokedAt: null,
    rotatedAt: null,
  };
  assert.deepEqual(auditKeyView(record, Date.parse(EXPIRY) - 1), view);
  assert.deepEqual(auditKeyView(record, Date.parse(EXPIRY)), { ...view, status: 'expired' });
  // A listed key carries its last use; the view does not.
  assert.deepEqual(auditKeyView(await store.get(record.id), Date.parse(EXPIRY) - 1), view);
  const revoked = await store.revoke(record.id);
  assert.deepEqual(auditKeyView(revoked, NOW), { ...view, status: 'revoked', revokedAt: revoked.revokedAt });
  await store.close();
});

test('an update that changes nothing is recorded with before equal to after; reads and use are not recorded', async () => {
  const { store } = open();
  const trail = recordingAuditTrail();
  const keys = auditedKeyStore(store, trail, WHO, () => NOW);
  const { key, record } = await keys.create('same');
  assert.equal(trail.events.length, 1);
  await keys.update(record.id, {});
  const view = auditKeyView(record, NOW);
  assert.deepEqual(trail.events.slice(1), [{ ...WHO, action: 'key.update', target: record.id, before: view, after: view }]);

  await keys.list();
  await keys.get(record.id);
  assert.equal(keys.authenticate(key)?.id, record.id);
  keys.touch(record.id);
  await keys.flushLastUsed();
  await (await keys.prepareReload()).commit();
  await keys.reload();
  assert.equal(keys.location, store.location);
  assert.equal(trail.events.length, 2);
  await keys.close();
});

test('a key that cannot be read before its change: the change is still recorded, before null and detail.beforeUnreadable', async () => {
  const { dir, store } = open();
  const trail = recordingAuditTrail();
  const detail = { sudoUser: 'alice', sudoUid: 1000 };
  const keys = auditedKeyStore(store, trail, { ...WHO, detail }, () => NOW);
  const { record } = await keys.create('unreadable');
  assert.deepEqual(trail.events[0]?.detail, detail);
  // A broken last-used file fails reads, not changes.
  writeFileSync(path.join(dir, 'keys-last-used.json'), 'not json');
  await assert.rejects(store.get(record.id));
  const revoked = await keys.revoke(record.id);
  assert.deepEqual(trail.events.slice(1), [
    { ...WHO, action: 'key.revoke', target: record.id, before: null, after: auditKeyView(revoked, NOW), detail: { ...detail, beforeUnreadable: true } },
  ]);
  // A change the store refuses records nothing, whether or not the key could be read.
  await assert.rejects(keys.revoke(record.id));
  await assert.rejects(keys.rotate('key_ZZZZZZZZZZZZZZZZ'));
  assert.equal(trail.events.length, 2);
  await keys.close();
});
