// auditedKeyStore over the real file key store: the key view it records, an
// update that changes nothing, who's detail on every record, reads passing
// through unrecorded, and write-ahead: the record before the change, a record
// that cannot be appended stopping it, a write that fails after it closing it.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import type { AuditTrail } from '../../src/audit/audit-event.ts';
import { AuditLogError } from '../../src/audit/audit-log.ts';
import { KeyAlreadyRevokedError, KeyNotFoundError, KeyRevokedError } from '../../src/keys/errors.ts';
import { auditedKeyStore, auditKeyView } from '../../src/state/audited-key-store.ts';
import type { KeyStore } from '../../src/state/key-store-port.ts';
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
    guard: { detectors: { personal: 'mask' } },
  });
  const view = {
    id: record.id,
    name: 'view',
    prefix: record.prefix,
    status: 'active',
    expiresAt: EXPIRY,
    allowedAliases: ['a', 'b'],
    limits: { ...NO_LIMITS, tokenBudget: { tokens: 1000, period: 'day' }, costBudget: { amount: 2.5, period: 'month' } },
    guard: { detectors: { personal: 'mask' } },
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

test('a key whose last-used file is broken: the change is recorded with the key as the store holds it under its lock; refusals record nothing', async () => {
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
  assert.deepEqual(trail.events.slice(1), [{ ...WHO, action: 'key.revoke', target: record.id, before: auditKeyView(record, NOW), after: auditKeyView(revoked, NOW), detail }]);
  // A change the store refuses before deciding it records nothing.
  await assert.rejects(keys.revoke(record.id), KeyAlreadyRevokedError);
  await assert.rejects(keys.rotate('key_ZZZZZZZZZZZZZZZZ'), KeyNotFoundError);
  await assert.rejects(keys.update(record.id, { name: 'x' }), KeyRevokedError);
  assert.equal(trail.events.length, 2);
  await keys.close();
});

/** A trail that notes, at each step, what keys.json holds: the order of record and change is what is tested. */
function steppingTrail(dir: string, options: { refuse?: boolean } = {}) {
  const steps: string[] = [];
  /** The key as keys.json holds it now: absent, active or revoked. */
  const onDisk = (id: string | null) => {
    let keys: Array<{ id: string; revokedAt: string | null }> = [];
    try {
      ({ keys } = JSON.parse(readFileSync(path.join(dir, 'keys.json'), 'utf8')) as { keys: typeof keys });
    } catch {
      // no keys.json yet
    }
    const key = keys.find((k) => k.id === id);
    return key === undefined ? 'absent' : key.revokedAt === null ? 'active' : 'revoked';
  };
  let seq = 0;
  const trail: AuditTrail = {
    async record(event) {
      steps.push(`record ${event.action} ${JSON.stringify(event.detail ?? null)}`);
    },
    async begin(event) {
      const mine = ++seq;
      steps.push(`begin ${mine} ${event.action}, keys.json: ${onDisk(event.target)}`);
      if (options.refuse === true) throw new AuditLogError('disk full');
      return {
        seq: mine,
        done: async () => void steps.push(`done ${mine}`),
        failed: async (reason: string) => void steps.push(`failed ${mine}: ${reason}`),
      };
    },
  };
  return { trail, steps };
}

test('write-ahead: the record is begun before keys.json holds the change and settled after', async () => {
  const { dir, store } = open();
  const { trail, steps } = steppingTrail(dir);
  const keys = auditedKeyStore(store, trail, WHO, () => NOW);
  const { record } = await keys.create('ahead');
  await keys.revoke(record.id);
  assert.deepEqual(steps, ['begin 1 key.create, keys.json: absent', 'done 1', 'begin 2 key.revoke, keys.json: active', 'done 2']);
  assert.notEqual((await store.get(record.id)).revokedAt, null);
  await keys.close();
});

test('write-ahead: a record that cannot be appended stops the change', async () => {
  const { dir, store } = open();
  const { trail, steps } = steppingTrail(dir, { refuse: true });
  const keys = auditedKeyStore(store, trail, WHO, () => NOW);
  await assert.rejects(keys.create('never'), (error: unknown) => error instanceof AuditLogError && error.message === 'disk full');
  assert.deepEqual(await store.list(), []);
  assert.equal(steps.length, 1);
  await keys.close();
});

test('write-ahead: a store that fails after the record closes it as not made, with the store\'s error', async () => {
  const { dir, store } = open();
  const { trail, steps } = steppingTrail(dir);
  const failing: KeyStore = {
    ...store,
    location: store.location,
    async create(name, settings, ahead) {
      return store.create(name, settings, async (change) => {
        await ahead?.(change);
        throw new Error('EIO: keys.json could not be written');
      });
    },
  };
  const keys = auditedKeyStore(failing, trail, WHO, () => NOW);
  await assert.rejects(keys.create('broken'), /EIO/);
  assert.deepEqual(steps, ['begin 1 key.create, keys.json: absent', 'failed 1: the store did not write the change: EIO: keys.json could not be written']);
  assert.deepEqual(await store.list(), []);
  await keys.close();
});

test('write-ahead: a store that decides the change again (a compare-and-set lost) closes the first record and begins another', async () => {
  const { dir, store } = open();
  const { trail, steps } = steppingTrail(dir);
  const { record } = await store.create('raced');
  const racing: KeyStore = {
    ...store,
    location: store.location,
    async update(id, patch, ahead) {
      // Redis's loop: the first attempt is decided, announced and lost; the second is written.
      const current = await store.get(id);
      await ahead?.({ before: current, after: { ...current, name: 'first try' } });
      return store.update(id, patch, ahead);
    },
  };
  const keys = auditedKeyStore(racing, trail, WHO, () => NOW);
  await keys.update(record.id, { name: 'second' });
  assert.deepEqual(steps, [
    'begin 1 key.update, keys.json: active',
    'failed 1: another writer changed the record first; the change was tried again in the next record',
    'begin 2 key.update, keys.json: active',
    'done 2',
  ]);
  await keys.close();
});
