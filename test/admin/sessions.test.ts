import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import type { AuditActor } from '../../src/audit/audit-event.ts';
import { createSessionStore, isWellFormedSessionId, verifyCsrf, type SessionStoreOptions } from '../../src/admin/sessions.ts';

const ACTOR: AuditActor = { kind: 'password', id: 'admin' };

const HOUR = 60 * 60 * 1000;
const MINUTE = 60 * 1000;

/** Random source that returns 32 bytes of 0, 1, 2, ... so ids and tokens are known. */
function counterRandom(): (size: number) => Buffer {
  let next = 0;
  return (size) => Buffer.alloc(size, next++ % 256);
}

function secret(fill: number): string {
  return Buffer.alloc(32, fill).toString('base64url');
}

function fixture(options: SessionStoreOptions = {}) {
  let now = 1_000_000;
  const store = createSessionStore({ clock: () => now, random: counterRandom(), ...options });
  return {
    store,
    advance(ms: number) {
      now += ms;
    },
    now: () => now,
  };
}

test('create returns a 43-character id, a CSRF token and the absolute expiry', () => {
  const { store } = fixture();
  const created = store.create(ACTOR);
  assert.deepEqual(created, { id: secret(0), csrfToken: secret(1), expiresAtMs: 1_000_000 + 8 * HOUR });
  assert.equal(created.id.length, 43);
  assert.equal(isWellFormedSessionId(created.id), true);
  assert.equal(store.size, 1);
  assert.deepEqual(store.get(created.id), { actor: ACTOR, csrfToken: secret(1), createdAtMs: 1_000_000, expiresAtMs: 1_000_000 + 8 * HOUR, lastSeenMs: 1_000_000, grant: null });
  // What admitted a session (single sign-on's fingerprint) is kept with it.
  assert.equal(store.get(store.create(ACTOR, 'fingerprint').id)?.grant, 'fingerprint');
});

test('ids and tokens from the real random source are distinct base64url', () => {
  const store = createSessionStore();
  const a = store.create(ACTOR);
  const b = store.create(ACTOR);
  assert.match(a.id, /^[A-Za-z0-9_-]{43}$/);
  assert.match(a.csrfToken, /^[A-Za-z0-9_-]{43}$/);
  assert.notEqual(a.id, b.id);
  assert.notEqual(a.id, a.csrfToken);
});

test('unknown, malformed and non-string ids find nothing', () => {
  const { store } = fixture();
  const created = store.create(ACTOR);
  assert.equal(store.get(secret(9)), null);
  assert.equal(store.get(''), null);
  assert.equal(store.get(created.id + 'A'), null);
  assert.equal(store.get(created.id.slice(0, 42) + '='), null);
  assert.equal(store.get(undefined as unknown as string), null);
  // The store is keyed by the hash: presenting the hash instead of the id fails.
  assert.equal(store.get(createHash('sha256').update(created.id).digest('base64url')), null);
});

test('a session ends after idleMs without use, and each get pushes that back', () => {
  const { store, advance } = fixture();
  const { id } = store.create(ACTOR);
  advance(30 * MINUTE - 1);
  assert.equal(store.get(id)?.lastSeenMs, 1_000_000 + 30 * MINUTE - 1);
  advance(30 * MINUTE - 1);
  assert.notEqual(store.get(id), null);
  advance(30 * MINUTE);
  assert.equal(store.get(id), null);
  assert.equal(store.size, 0);
});

test('a session ends at its absolute lifetime even when used constantly', () => {
  const { store, advance } = fixture({ idleMs: 10 * MINUTE });
  const { id, expiresAtMs } = store.create(ACTOR);
  for (let i = 0; i < 53; i++) {
    advance(9 * MINUTE);
    assert.notEqual(store.get(id), null, `use ${i}`);
  }
  advance(3 * MINUTE - 1); // 8 h minus 1 ms after creation
  assert.equal(expiresAtMs, 1_000_000 + 477 * MINUTE + 3 * MINUTE);
  assert.notEqual(store.get(id), null);
  advance(1);
  assert.equal(store.get(id), null);
});

test('destroy logs out one session, destroyAll every session', () => {
  const { store } = fixture();
  const a = store.create(ACTOR);
  const b = store.create(ACTOR);
  const c = store.create(ACTOR);
  store.destroy(a.id);
  store.destroy('not an id');
  assert.equal(store.get(a.id), null);
  assert.notEqual(store.get(b.id), null);
  assert.equal(store.size, 2);
  store.destroyAll();
  assert.equal(store.get(b.id), null);
  assert.equal(store.get(c.id), null);
  assert.equal(store.size, 0);
});

test('at maxSessions, creating drops expired sessions first, then the oldest', () => {
  const { store, advance } = fixture({ maxSessions: 3, idleMs: 10 * MINUTE });
  const first = store.create(ACTOR);
  advance(6 * MINUTE);
  const second = store.create(ACTOR);
  const third = store.create(ACTOR);
  advance(5 * MINUTE); // first is now idle-expired; second and third are not
  const fourth = store.create(ACTOR);
  assert.equal(store.size, 3);
  assert.equal(store.get(first.id), null);
  assert.notEqual(store.get(second.id), null);
  const fifth = store.create(ACTOR); // nothing expired: the oldest (second) goes, although just used
  assert.equal(store.get(second.id), null);
  for (const s of [third, fourth, fifth]) assert.notEqual(store.get(s.id), null);
  assert.equal(store.size, 3);
});

test('options must be positive integers', () => {
  assert.throws(() => createSessionStore({ ttlMs: 0 }), { name: 'RangeError', message: 'ttlMs must be a positive integer, got 0' });
  assert.throws(() => createSessionStore({ idleMs: 1.5 }), RangeError);
  assert.throws(() => createSessionStore({ maxSessions: -1 }), RangeError);
});

test('verifyCsrf accepts exactly the session token', () => {
  const { store } = fixture();
  const created = store.create(ACTOR);
  const session = store.get(created.id);
  assert.ok(session !== null);
  assert.equal(verifyCsrf(session, created.csrfToken), true);
  assert.equal(verifyCsrf(session, undefined), false);
  assert.equal(verifyCsrf(session, ''), false);
  assert.equal(verifyCsrf(session, created.csrfToken.slice(0, 42)), false);
  assert.equal(verifyCsrf(session, created.csrfToken + 'A'), false);
  assert.equal(verifyCsrf(session, secret(2)), false);
  assert.equal(verifyCsrf(session, created.id), false);
  // Same length in UTF-16 units, different length in bytes: no throw from timingSafeEqual.
  assert.equal(verifyCsrf(session, '\u00e9'.repeat(43)), false);
});

test('a session keeps who opened it, as a copy the caller cannot change afterwards', () => {
  const store = createSessionStore();
  const actor: AuditActor = { kind: 'sso', id: 'user-1', issuer: 'https://idp.example', name: 'ada' };
  const { id } = store.create(actor);
  actor.id = 'someone-else';
  assert.deepEqual(store.get(id)?.actor, { kind: 'sso', id: 'user-1', issuer: 'https://idp.example', name: 'ada' });
});
