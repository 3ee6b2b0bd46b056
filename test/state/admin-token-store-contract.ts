// The admin token store port (src/state/admin-token-store-port.ts) as one set of
// cases, run against every adapter: test/state/file-admin-token-store.test.ts (a
// fresh data directory per case) and test/state/redis-admin-token-store.system.test.ts (a
// fresh key prefix on a real redis-server). `open` may be called more than once on
// one place, for two instances (or a CLI and a server) sharing it; `raw()` is
// everything the place holds, to check that no token is ever stored.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AdminTokenAlreadyRevokedError, AdminTokenLimitError, AdminTokenNotFoundError, InvalidTokenSettingError } from '../../src/keys/admin-token-errors.ts';
import { generateAdminToken, hashAdminToken, MAX_LIVE_TOKENS } from '../../src/keys/admin-token.ts';
import type { AdminTokenStore } from '../../src/state/admin-token-store-port.ts';

export interface AdminTokenStorage {
  open(): AdminTokenStore;
  raw(): Promise<string>;
  cleanup(): Promise<void>;
}

const T0 = Date.parse('2026-11-26T12:00:00.000Z');
const DAY = 86_400_000;
const EXPIRES = new Date(T0 + 30 * DAY).toISOString();

function input(name = 'ci', scopes: string[] = ['read']) {
  return { name, scopes, expiresAt: EXPIRES, createdBy: 'password:admin' };
}

export function runAdminTokenStoreContract(name: string, storage: () => Promise<AdminTokenStorage>): void {
  const withPlace = async (body: (place: AdminTokenStorage) => Promise<void>): Promise<void> => {
    const place = await storage();
    try {
      await body(place);
    } finally {
      await place.cleanup();
    }
  };

  describe(`admin token store contract: ${name}`, () => {
    test('empty: no tokens, nothing found', () =>
      withPlace(async (place) => {
        const store = place.open();
        assert.deepEqual(await store.list(), []);
        assert.equal(await store.findByToken(generateAdminToken()), null);
        assert.equal(await store.findByToken('garbage'), null);
      }));

    test('create: the token is returned once; only its hash is stored; found by the token', () =>
      withPlace(async (place) => {
        const store = place.open();
        const { token, record } = await store.create(input('deploy', ['keys', 'read']), T0);
        assert.match(token, /^pca_[A-Za-z0-9_-]{43}$/);
        assert.deepEqual(record, {
          id: record.id,
          name: 'deploy',
          prefix: token.slice(0, 8),
          hash: hashAdminToken(token),
          scopes: ['read', 'keys'],
          createdAt: new Date(T0).toISOString(),
          expiresAt: EXPIRES,
          revokedAt: null,
          createdBy: 'password:admin',
        });
        assert.deepEqual(await store.list(), [record]);
        assert.deepEqual(await store.findByToken(token), record);
        assert.deepEqual(await place.open().findByToken(token), record);
        assert.equal(await store.findByToken(generateAdminToken()), null);
        const raw = await place.raw();
        assert.ok(raw.includes(record.hash), 'the hash is stored');
        assert.equal(raw.includes(token), false, 'the token is not');
        assert.equal(raw.includes(token.slice(8)), false, 'nor any of it beyond the prefix');
      }));

    test('a refused create stores nothing', () =>
      withPlace(async (place) => {
        const store = place.open();
        await assert.rejects(store.create({ ...input(), scopes: ['admin'] }, T0), InvalidTokenSettingError);
        await assert.rejects(store.create({ ...input(), expiresAt: new Date(T0 - 1).toISOString() }, T0), InvalidTokenSettingError);
        await assert.rejects(store.create({ ...input(), name: '' }, T0), InvalidTokenSettingError);
        assert.deepEqual(await store.list(), []);
      }));

    test('revoke: seen at once by another instance; twice is refused; unknown ids are refused', () =>
      withPlace(async (place) => {
        const a = place.open();
        const b = place.open();
        const { token, record } = await a.create(input(), T0);
        assert.equal((await b.findByToken(token))?.revokedAt, null);
        const revoked = await b.revoke(record.id, T0 + 1000);
        assert.deepEqual(revoked, { ...record, revokedAt: new Date(T0 + 1000).toISOString() });
        assert.deepEqual(await a.findByToken(token), revoked);
        assert.deepEqual(await a.list(), [revoked]);
        await assert.rejects(a.revoke(record.id, T0 + 2000), (error: unknown) => error instanceof AdminTokenAlreadyRevokedError && error.message === `Admin API token '${record.id}' was already revoked at ${revoked.revokedAt}.`);
        await assert.rejects(a.revoke('tok_0000000000000000', T0), (error: unknown) => error instanceof AdminTokenNotFoundError && error.message.includes("the id 'tok_0000000000000000'"));
        // A pasted token is never echoed.
        await assert.rejects(a.revoke(token, T0), (error: unknown) => error instanceof AdminTokenNotFoundError && !error.message.includes(token));
      }));

    test('list is oldest first; concurrent creates from two instances all land', () =>
      withPlace(async (place) => {
        const a = place.open();
        const b = place.open();
        const issued = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? a : b).create(input(`t${i}`), T0 + i)));
        assert.deepEqual((await a.list()).map((r) => r.name).sort(), ['t0', 't1', 't2', 't3', 't4', 't5', 't6', 't7']);
        for (const { token, record } of issued) assert.deepEqual(await b.findByToken(token), record);
        // Oldest first, by creation time.
        for (const [i, name] of ['u2', 'u0', 'u1'].entries()) await b.create(input(name), T0 + 100 + i);
        assert.deepEqual((await a.list()).slice(8).map((r) => r.name), ['u2', 'u0', 'u1']);
      }));

    test(`at most ${MAX_LIVE_TOKENS} live tokens, across instances`, () =>
      withPlace(async (place) => {
        const a = place.open();
        const b = place.open();
        const first = await a.create(input('t0'), T0);
        for (let i = 1; i < MAX_LIVE_TOKENS; i++) await (i % 2 === 0 ? a : b).create(input(`t${i}`), T0);
        await assert.rejects(b.create(input('one too many'), T0), AdminTokenLimitError);
        await a.revoke(first.record.id, T0);
        assert.equal((await b.create(input('room again'), T0)).record.name, 'room again');
        assert.equal((await a.list()).length, MAX_LIVE_TOKENS + 1);
      }));
  });
}
