import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  assertNoSecrets,
  AuditCanonicalError,
  AuditRecordParseError,
  AuditRecordTooLargeError,
  AuditSecretError,
  canonicalJson,
  chainRecord,
  GENESIS_HASH,
  MAX_RECORD_LINE_BYTES,
  parseRecordLine,
  recordHash,
  recordLine,
} from '../../src/audit/audit-record.ts';
import { keyCreate, loginEvent } from './audit-fixtures.ts';

describe('canonicalJson', () => {
  test('sorts keys at every depth, no whitespace', () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [3, { z: null, y: true }], c: 'x' } }), '{"a":{"c":"x","d":[3,{"y":true,"z":null}]},"b":1}');
  });

  test('strings are escaped as JSON; numbers as JSON writes them', () => {
    assert.equal(canonicalJson({ s: 'a"b\n\u2028é', n: 1.5, m: -0, e: 1e21 }), '{"e":1e+21,"m":0,"n":1.5,"s":"a\\"b\\n\u2028é"}');
  });

  test('refuses NaN, Infinity, undefined, functions, bigint, cycles and class instances, naming where', () => {
    const cases: Array<[unknown, string]> = [
      [{ a: Number.NaN }, 'a'],
      [{ a: [1, Number.POSITIVE_INFINITY] }, 'a[1]'],
      [{ a: { b: undefined } }, 'a.b'],
      [{ f: () => 1 }, 'f'],
      [{ n: 10n }, 'n'],
      [{ d: new Date(0) }, 'd'],
    ];
    for (const [value, path] of cases) {
      assert.throws(() => canonicalJson(value), (error: unknown) => error instanceof AuditCanonicalError && error.path === path, path);
    }
    const cycle: Record<string, unknown> = {};
    cycle['self'] = cycle;
    assert.throws(() => canonicalJson(cycle), /self refers to itself/);
  });
});

describe('the chain hash', () => {
  test('seq 1 links to 64 zeros; hash is SHA-256 of the canonical record without hash', () => {
    const first = chainRecord(keyCreate(1), { seq: 0, hash: GENESIS_HASH });
    assert.equal(first.seq, 1);
    assert.equal(first.prev, '0'.repeat(64));
    const { hash, ...rest } = first;
    assert.equal(hash, createHash('sha256').update(canonicalJson(rest)).digest('hex'));
    assert.equal(recordHash(first), hash);
    const second = chainRecord(keyCreate(2), first);
    assert.equal(second.seq, 2);
    assert.equal(second.prev, first.hash);
  });

  test('absent optional actor members and detail are left out, not written as undefined', () => {
    const record = chainRecord({ ...keyCreate(1), actor: { kind: 'password', id: 'admin', uid: undefined, name: undefined } }, { seq: 0, hash: GENESIS_HASH });
    assert.deepEqual(record.actor, { kind: 'password', id: 'admin' });
    assert.equal('detail' in record, false);
    assert.match(recordLine(record), /^\{"action":"key.create","actor":\{"id":"admin","kind":"password"\},"after":/);
  });

  test('a record line over 64 KiB is refused', () => {
    const big = chainRecord({ ...keyCreate(1), detail: { note: 'x'.repeat(MAX_RECORD_LINE_BYTES) } }, { seq: 0, hash: GENESIS_HASH });
    assert.throws(() => recordLine(big), AuditRecordTooLargeError);
  });
});

describe('parseRecordLine', () => {
  const good = recordLine(chainRecord({ ...keyCreate(1), detail: { reason: 'x' } }, { seq: 0, hash: GENESIS_HASH }));

  test('a written line parses back to the record', () => {
    assert.equal(canonicalJson(parseRecordLine(good)), good);
  });

  const mutate = (change: (o: Record<string, unknown>) => void): string => {
    const o = JSON.parse(good) as Record<string, unknown>;
    change(o);
    return canonicalJson(o);
  };
  const cases: Array<[string, string, string]> = [
    ['not JSON', '{"seq":', ''],
    ['an array', '[1]', ''],
    ['an unknown field', mutate((o) => (o['extra'] = 1)), 'extra'],
    ['seq 0', mutate((o) => (o['seq'] = 0)), 'seq'],
    ['seq 1.5', mutate((o) => (o['seq'] = 1.5)), 'seq'],
    ['a time without milliseconds', mutate((o) => (o['time'] = '2026-11-26T12:00:00Z')), 'time'],
    ['an actor kind', mutate((o) => ((o['actor'] as Record<string, unknown>)['kind'] = 'root')), 'actor.kind'],
    ['an actor field', mutate((o) => ((o['actor'] as Record<string, unknown>)['email'] = 'a@b')), 'actor.email'],
    ['an action', mutate((o) => (o['action'] = 'key.delete')), 'action'],
    ['a target number', mutate((o) => (o['target'] = 5)), 'target'],
    ['before missing', mutate((o) => delete o['before']), 'before'],
    ['after an array', mutate((o) => (o['after'] = [])), 'after'],
    ['detail null', mutate((o) => (o['detail'] = null)), 'detail'],
    ['prev upper case', mutate((o) => (o['prev'] = 'A'.repeat(64))), 'prev'],
    ['hash short', mutate((o) => (o['hash'] = 'ab')), 'hash'],
    ['spaces (not canonical)', good.replace('"seq":1', '"seq": 1'), ''],
    ['keys out of order (not canonical)', JSON.stringify({ seq: 1, ...(JSON.parse(good) as object) }), ''],
    ['a duplicate key (not canonical)', good.replace('{"action":"key.create"', '{"action":"key.revoke","action":"key.create"'), ''],
  ];
  for (const [what, line, field] of cases.filter(([, line]) => line !== good)) {
    test(`refuses ${what}, naming the field '${field}'`, () => {
      assert.throws(() => parseRecordLine(line), (error: unknown) => error instanceof AuditRecordParseError && error.field === field);
    });
  }

  test('refuses a line over 64 KiB before parsing it', () => {
    assert.throws(() => parseRecordLine('x'.repeat(MAX_RECORD_LINE_BYTES + 1)), /longer than 65536 bytes/);
  });
});

describe('assertNoSecrets', () => {
  const apiKey = 'pcl_' + 'A'.repeat(43) + 'b'.repeat(6);
  const bootstrap = 'pcb_' + 'Z'.repeat(32);
  const adminToken = 'pca_' + 'q'.repeat(40);

  test('passes key views, display prefixes and reasons', () => {
    assertNoSecrets(keyCreate(1));
    assertNoSecrets(loginEvent({ action: 'admin.login_failed', actor: { kind: 'anonymous', id: '-' }, detail: { reason: 'wrong_password' } }));
    assertNoSecrets(loginEvent({ after: { id: 'tok_1', prefix: 'pca_abcd', scopes: ['read'] } }));
  });

  const refused: Array<[string, Parameters<typeof assertNoSecrets>[0], string]> = [
    ['an API key as a value', keyCreate(1, { after: { id: 'key_1', note: `leaked ${apiKey}` } }), 'after.note'],
    ['a bootstrap token in detail', loginEvent({ detail: { tried: bootstrap } }), 'detail.tried'],
    ['an admin token in an array', loginEvent({ detail: { list: ['a', adminToken] } }), 'detail.list[1]'],
    ['a token as the target', loginEvent({ target: adminToken }), 'target'],
    ['a token as the actor name', loginEvent({ actor: { kind: 'token', id: 'tok_1', name: adminToken } }), 'actor.name'],
    ['a field named key', keyCreate(1, { after: { key: 'anything' } }), 'after.key'],
    ['a field named hash', keyCreate(1, { before: { id: 'k', hash: 'abc' } }), 'before.hash'],
    ['a field named Password', loginEvent({ detail: { Password: 'x' } }), 'detail.Password'],
    ['a field named idToken', loginEvent({ detail: { idToken: 'x' } }), 'detail.idToken'],
    ['a field named code', loginEvent({ detail: { code: 'x' } }), 'detail.code'],
    ['a field named secret (nested)', loginEvent({ detail: { oidc: { secret: 1 } } }), 'detail.oidc.secret'],
    ['a field named clientSecret', loginEvent({ detail: { clientSecret: 'x' } }), 'detail.clientSecret'],
    ['a field named keyHash', keyCreate(1, { after: { keyHash: 'x' } }), 'after.keyHash'],
    ['a field named token', loginEvent({ after: { token: 'x' } }), 'after.token'],
  ];
  for (const [what, event, path] of refused) {
    test(`refuses ${what} (${path}) without quoting it`, () => {
      assert.throws(
        () => assertNoSecrets(event),
        (error: unknown) => error instanceof AuditSecretError && error.path === path && !error.message.includes(apiKey) && !error.message.includes(adminToken),
      );
    });
  }
});
