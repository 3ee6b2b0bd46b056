// The key store port (KeyStore in src/api/keys.ts) as one set of cases, run against
// every store: the data directory's and Redis's, and a host's own. Only the port is
// used, so what passes here is what the CLI, the admin API and the server may rely on
// whichever store holds the keys. A store's errors are told apart by name and `code`
// (and `param`, `keyId`); their wording is the store's own. The built-in stores run it
// with `exactMessages`, which adds their exact messages, `problem` texts, key id format
// and guard detector names.
//
// `storage()` gives a fresh, empty place for keys; `open` may be called more than
// once on it, for two instances (or two CLI runs) sharing it. Time is injected.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { generateApiKey, hashApiKey } from '../keys/api-key.ts';
import { NO_LIMITS } from '../limits/key-limits.ts';
import type { KeyRecord, KeyStore } from '../api/keys.ts';

/** How runKeyStoreContract checks a store beyond the port's behaviour. */
export interface KeyStoreContractOptions {
  /**
   * Also hold the store to the built-in stores' wording and checks: their exact error
   * messages and `problem` texts, the `key_` + 16 characters id, a pasted raw key
   * answered with `keyId: null`, and guard detector names checked against the built-in
   * egress guard's. For the built-in stores; a host's store leaves it out.
   */
  exactMessages?: boolean;
}

/** A fresh, empty place for keys; `open` may be called more than once on it (two instances sharing it), with the clock the store must use. */
export interface KeyStoreStorage {
  open(clock: () => Date): Promise<KeyStore>;
}

const T0 = Date.parse('2026-11-22T12:00:00.000Z');
const UNKNOWN_ID = 'key_0000000000000000';

/** A clock the case moves by hand. */
function manualClock(): { clock: () => Date; advance(ms: number): void } {
  let now = T0;
  return { clock: () => new Date(now), advance: (ms) => void (now += ms) };
}

/** Stores opened by one case, closed when it ends even when it fails. */
async function withStores(storage: () => Promise<KeyStoreStorage>, body: (open: (clock: () => Date) => Promise<KeyStore>) => Promise<void>): Promise<void> {
  const place = await storage();
  const opened: KeyStore[] = [];
  try {
    await body(async (clock) => {
      const store = await place.open(clock);
      opened.push(store);
      return store;
    });
  } finally {
    for (const store of opened) await store.close();
  }
}

/**
 * The store's error named `name` (with the `code`, `param` and `keyId` the cases check): a host's
 * store throws errors of these names and codes, so the admin API and the CLI answer the same way.
 */
function isKeyStoreError(err: unknown, name: string): err is Error & { code: string; param?: string; keyId?: string | null } {
  return err instanceof Error && err.name === name && typeof (err as { code?: unknown }).code === 'string';
}

/** Whether `err.message` is `wording` (exactMessages), else any message. */
const worded = (err: Error, exact: boolean, wording: string): boolean => !exact || err.message === wording;
const notFound = (id: string, exact: boolean) => (err: unknown) =>
  isKeyStoreError(err, 'KeyNotFoundError') && err.code === 'key_not_found' && worded(err, exact, `No API key has the id '${id}'. Run "portcullis keys list" to see the ids.`);
const revokedRefusal = (id: string, exact: boolean) => (err: unknown) =>
  isKeyStoreError(err, 'KeyRevokedError') && err.code === 'key_revoked' && err.keyId === id && worded(err, exact, `Key ${id} is revoked; create a new key instead.`);

/**
 * Registers the key store cases as node:test tests in a describe block named after `name`: what
 * the CLI, the admin API and the gateway rely on whichever store holds the keys,
 * errors told apart by name and `code`. `storage()` gives a fresh place per case.
 */
export function runKeyStoreContract(name: string, storage: () => Promise<KeyStoreStorage>, options: KeyStoreContractOptions = {}): void {
  const exact = options.exactMessages === true;
  describe(`key store contract: ${name}`, () => {
    test('create returns the raw key once and stores its hash; list, get and authenticate see it', () =>
      withStores(storage, async (open) => {
        const store = await open(manualClock().clock);
        const { key, record } = await store.create('  my app ', { allowedAliases: ['fast'], limits: { requestsPerMinute: 5 } });
        assert.match(key, /^pcl_[0-9A-Za-z]{49}$/);
        if (exact) assert.match(record.id, /^key_[0-9A-Za-z]{16}$/);
        else assert.match(record.id, /^[\x21-\x7e]{1,128}$/);
        assert.deepEqual(record, {
          id: record.id,
          name: 'my app',
          prefix: key.slice(0, 12),
          hash: hashApiKey(key),
          createdAt: '2026-11-22T12:00:00.000Z',
          revokedAt: null,
          rotatedAt: null,
          allowedAliases: ['fast'],
          expiresAt: null,
          limits: { ...NO_LIMITS, requestsPerMinute: 5 },
          guard: null,
        });
        assert.deepEqual(await store.list(), [{ ...record, lastUsedAt: null }]);
        assert.deepEqual(await store.get(record.id), { ...record, lastUsedAt: null });
        assert.deepEqual(store.authenticate(key), record);
        assert.equal(store.authenticate(generateApiKey()), null);
        assert.equal(store.authenticate('not a key'), null);
      }));

    test('create refuses a bad name or setting and stores nothing', () =>
      withStores(storage, async (open) => {
        const store = await open(manualClock().clock);
        for (const bad of ['', '   ', 'x'.repeat(65), 'a\nb']) {
          await assert.rejects(store.create(bad), (err: unknown) => isKeyStoreError(err, 'InvalidKeyNameError') && err.code === 'invalid_key_name');
        }
        await assert.rejects(store.create('ok', { limits: { requestsPerMinutes: 5 } }), (err: unknown) => isKeyStoreError(err, 'InvalidKeySettingError') && err.param === 'limits.requestsPerMinutes');
        await assert.rejects(store.create('ok', { expiresAt: '2020-01-01T00:00:00Z' }), { code: 'invalid_key_setting', param: 'expiresAt' });
        assert.deepEqual(await store.list(), []);
      }));

    test('list is in creation order and read fresh: keys created by another instance appear', () =>
      withStores(storage, async (open) => {
        const { clock, advance } = manualClock();
        const a = await open(clock);
        const b = await open(clock);
        const ids: string[] = [];
        for (const name of ['first', 'second', 'third']) {
          ids.push((await (ids.length % 2 === 0 ? a : b).create(name)).record.id);
          advance(1000);
        }
        assert.deepEqual((await a.list()).map((k) => [k.id, k.name]), [[ids[0], 'first'], [ids[1], 'second'], [ids[2], 'third']]);
        assert.deepEqual((await b.list()).map((k) => k.id), ids);
        assert.equal((await a.get(ids[1] as string)).name, 'second');
      }));

    test('get, update, rotate and revoke of an unknown id are KeyNotFoundError; a pasted raw key is not echoed', () =>
      withStores(storage, async (open) => {
        const store = await open(manualClock().clock);
        await assert.rejects(store.get(UNKNOWN_ID), notFound(UNKNOWN_ID, exact));
        await assert.rejects(store.update(UNKNOWN_ID, { name: 'x' }), notFound(UNKNOWN_ID, exact));
        await assert.rejects(store.rotate(UNKNOWN_ID), notFound(UNKNOWN_ID, exact));
        await assert.rejects(store.revoke(UNKNOWN_ID), notFound(UNKNOWN_ID, exact));
        const raw = generateApiKey();
        await assert.rejects(store.revoke(raw), (err: unknown) => isKeyStoreError(err, 'KeyNotFoundError') && err.code === 'key_not_found' && (!exact || err.keyId === null) && !err.message.includes(raw));
      }));

    test('update sets the fields it names, keeps the others, and is served at once', () =>
      withStores(storage, async (open) => {
        const store = await open(manualClock().clock);
        const { key, record } = await store.create('before', { limits: { requestsPerMinute: 60 } });
        const updated = await store.update(record.id, { name: 'after', allowedAliases: ['fast', 'cheap'], expiresAt: '2027-01-01T00:00:00Z' });
        const expected: KeyRecord = { ...record, name: 'after', allowedAliases: ['fast', 'cheap'], expiresAt: '2027-01-01T00:00:00.000Z' };
        assert.deepEqual(updated, expected);
        assert.deepEqual(await store.get(record.id), { ...expected, lastUsedAt: null });
        assert.deepEqual(store.authenticate(key), expected);
        // Whole limits: a field left out becomes null.
        const whole = await store.update(record.id, { limits: { tokensPerMinute: 100 } });
        assert.deepEqual(whole.limits, { ...NO_LIMITS, tokensPerMinute: 100 });
        // An empty patch changes nothing; expiring a key on purpose (a past time) is allowed.
        assert.deepEqual(await store.update(record.id, {}), whole);
        assert.equal((await store.update(record.id, { expiresAt: '2020-01-01T00:00:00Z' })).expiresAt, '2020-01-01T00:00:00.000Z');
        await assert.rejects(store.update(record.id, { name: '' }), { code: 'invalid_key_name' });
        await assert.rejects(store.update(record.id, { allowedAliases: 'fast' }), { code: 'invalid_key_setting', param: 'allowedAliases' });
      }));

    test('a key guard is stored with the key, replaced whole by update, removed with null, and refused naming its path', () =>
      withStores(storage, async (open) => {
        const a = await open(manualClock().clock);
        const b = await open(manualClock().clock);
        const { key, record } = await a.create('guarded', { guard: { detectors: { secrets: 'block', email: 'mask' } } });
        assert.deepEqual(record.guard, { detectors: { secrets: 'block', email: 'mask' } });
        assert.deepEqual((await b.get(record.id)).guard, record.guard);
        assert.deepEqual(a.authenticate(key)?.guard, record.guard);
        const replaced = await b.update(record.id, { guard: { detectors: { card_number: 'block' } } });
        assert.deepEqual(replaced.guard, { detectors: { card_number: 'block' } });
        assert.deepEqual((await a.get(record.id)).guard, { detectors: { card_number: 'block' } });
        assert.equal((await a.update(record.id, { name: 'renamed' })).guard?.detectors.card_number, 'block');
        assert.equal((await a.update(record.id, { guard: null })).guard, null);
        assert.equal((await b.get(record.id)).guard, null);
        if (exact) {
          await assert.rejects(a.update(record.id, { guard: { detectors: { cards: 'block' } } }), { code: 'invalid_key_setting', param: 'guard.detectors.cards' });
          await assert.rejects(a.create('bad', { guard: { detectors: { email: 'hide' } } }), { code: 'invalid_key_setting', param: 'guard.detectors.email', problem: 'must be one of "off", "log", "mask", "block"' });
        } else {
          await assert.rejects(a.create('bad', { guard: { detectors: { email: 'hide' } } }), { name: 'InvalidKeySettingError', code: 'invalid_key_setting', param: 'guard.detectors.email' });
        }
        assert.equal((await a.list()).length, 1);
      }));

    test('update with limitChanges merges into the limits as stored at that moment, not as last read', () =>
      withStores(storage, async (open) => {
        const { clock } = manualClock();
        const cli = await open(clock);
        const dashboard = await open(clock);
        const { record } = await cli.create('merged', { limits: { requestsPerMinute: 60 } });
        await dashboard.update(record.id, { limits: { requestsPerMinute: 60, tokenBudget: { tokens: 1000, period: 'day' } } });
        const updated = await cli.update(record.id, { limitChanges: { tokensPerMinute: 5000, requestsPerMinute: null } });
        assert.deepEqual(updated.limits, { requestsPerMinute: null, tokensPerMinute: 5000, concurrentRequests: null, tokenBudget: { tokens: 1000, period: 'day' }, costBudget: null });
        await assert.rejects(cli.update(record.id, { limits: null, limitChanges: {} }), { name: 'InvalidKeySettingError', param: 'limits' });
        await assert.rejects(cli.update(record.id, { limitChanges: { requestsPerMinutes: 5 } }), { name: 'InvalidKeySettingError', param: 'limits.requestsPerMinutes' });
        await assert.rejects(cli.update(record.id, { limitChanges: 'fast' }), { name: 'InvalidKeySettingError', param: 'limits' });
        assert.deepEqual((await dashboard.get(record.id)).limits, updated.limits);
      }));

    test('rotate gives a new secret for the same id and settings; the old secret stops working', () =>
      withStores(storage, async (open) => {
        const { clock, advance } = manualClock();
        const store = await open(clock);
        const first = await store.create('rotating', { allowedAliases: ['fast'] });
        advance(60_000);
        const second = await store.rotate(first.record.id);
        assert.notEqual(second.key, first.key);
        assert.deepEqual(second.record, { ...first.record, prefix: second.key.slice(0, 12), hash: hashApiKey(second.key), rotatedAt: '2026-11-22T12:01:00.000Z' });
        assert.equal(store.authenticate(first.key), null);
        assert.deepEqual(store.authenticate(second.key), second.record);
        assert.deepEqual(await store.get(first.record.id), { ...second.record, lastUsedAt: null });
      }));

    test('revoke stamps revokedAt and the key stops authenticating; a second revoke is KeyAlreadyRevokedError', () =>
      withStores(storage, async (open) => {
        const { clock, advance } = manualClock();
        const store = await open(clock);
        const first = await store.create('first');
        const second = await store.create('second');
        advance(60_000);
        const revoked = await store.revoke(first.record.id);
        assert.deepEqual(revoked, { ...first.record, revokedAt: '2026-11-22T12:01:00.000Z' });
        assert.equal(store.authenticate(first.key), null);
        assert.deepEqual(store.authenticate(second.key), second.record);
        assert.deepEqual(await store.get(first.record.id), { ...revoked, lastUsedAt: null });
        await assert.rejects(
          store.revoke(first.record.id),
          (err: unknown) =>
            isKeyStoreError(err, 'KeyAlreadyRevokedError') &&
            err.code === 'key_already_revoked' &&
            worded(err, exact, `API key '${first.record.id}' was already revoked at 2026-11-22T12:01:00.000Z.`),
        );
      }));

    test('a revoked key is never changed: update and rotate are KeyRevokedError and the record stays', () =>
      withStores(storage, async (open) => {
        const { clock } = manualClock();
        const a = await open(clock);
        const b = await open(clock);
        const { key, record } = await a.create('gone', { limits: { requestsPerMinute: 5 } });
        // Revoked through another instance: the refusal is decided on the stored record, not a stale index.
        const revoked = await b.revoke(record.id);
        for (const store of [a, b]) {
          await assert.rejects(store.update(record.id, { name: 'back' }), revokedRefusal(record.id, exact));
          await assert.rejects(store.update(record.id, { limitChanges: { requestsPerMinute: 50 } }), revokedRefusal(record.id, exact));
          await assert.rejects(store.update(record.id, { expiresAt: null }), revokedRefusal(record.id, exact));
          await assert.rejects(store.rotate(record.id), revokedRefusal(record.id, exact));
        }
        assert.deepEqual(await a.get(record.id), { ...revoked, lastUsedAt: null });
        await a.reload();
        assert.equal(a.authenticate(key), null);
      }));

    test('last use: touch is seen by list before and after its flush; the later time wins across instances', () =>
      withStores(storage, async (open) => {
        let nowA = new Date('2026-11-22T12:00:05.000Z');
        const nowB = new Date('2026-11-22T12:00:01.000Z');
        const a = await open(() => nowA);
        const b = await open(() => nowB);
        const { record } = await a.create('used');
        const { record: idle } = await a.create('idle');
        await b.reload();
        a.touch(record.id);
        assert.equal((await a.get(record.id)).lastUsedAt, '2026-11-22T12:00:05.000Z', 'pending, not yet flushed');
        await a.flushLastUsed();
        b.touch(record.id);
        await b.flushLastUsed();
        assert.equal((await b.get(record.id)).lastUsedAt, '2026-11-22T12:00:05.000Z');
        nowA = new Date('2026-11-22T12:00:09.000Z');
        a.touch(record.id);
        a.touch(UNKNOWN_ID);
        await a.close(); // close flushes
        assert.equal((await b.get(record.id)).lastUsedAt, '2026-11-22T12:00:09.000Z');
        assert.equal((await b.get(idle.id)).lastUsedAt, null);
      }));

    test('closed: every call rejects with KeyStoreClosedError, authenticate answers null, close is idempotent', () =>
      withStores(storage, async (open) => {
        const store = await open(manualClock().clock);
        const { key, record } = await store.create('closing');
        await store.close();
        await store.close();
        assert.equal(store.authenticate(key), null);
        const closed = (err: unknown) => isKeyStoreError(err, 'KeyStoreClosedError') && err.code === 'key_store_closed';
        await assert.rejects(store.create('x'), closed);
        await assert.rejects(store.list(), closed);
        await assert.rejects(store.get(record.id), closed);
        await assert.rejects(store.update(record.id, { name: 'y' }), closed);
        await assert.rejects(store.rotate(record.id), closed);
        await assert.rejects(store.revoke(record.id), closed);
        await assert.rejects(store.reload(), closed);
        await assert.rejects(store.prepareReload(), closed);
      }));
  });
}
