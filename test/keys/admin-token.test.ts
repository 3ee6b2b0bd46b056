// The admin token core: format, shape check, hashing, validation of a create
// request, status, the live-token limit, revocation and scope coverage.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { AdminTokenAlreadyRevokedError, AdminTokenLimitError, InvalidTokenSettingError } from '../../src/keys/admin-token-errors.ts';
import {
  ADMIN_SCOPES,
  adminTokenAuditFields,
  adminTokenPrefix,
  adminTokenView,
  checkNewToken,
  generateAdminToken,
  hashAdminToken,
  isAdminTokenId,
  isWellFormedAdminToken,
  issueToken,
  MAX_LIVE_TOKENS,
  MAX_STORED_TOKENS,
  newAdminTokenId,
  parseTokenExpiry,
  parseTokenScopes,
  revokeTokenRecord,
  scopesCover,
  tokenHashMatches,
  tokensToForget,
  tokenStatus,
  type AdminTokenRecord,
} from '../../src/keys/admin-token.ts';
import { parseTokenFile, serializeTokenFile } from '../../src/keys/admin-token-file.ts';
import { ADMIN_SCOPES as PRINCIPAL_SCOPES } from '../../src/admin/admin-principal.ts';

const NOW = Date.parse('2026-11-26T12:00:00.000Z');
const DAY = 86_400_000;

function settingError(param: string, problem: RegExp | string) {
  return (error: unknown) => {
    assert.ok(error instanceof InvalidTokenSettingError, String(error));
    assert.equal(error.param, param);
    if (typeof problem === 'string') assert.equal(error.problem, problem);
    else assert.match(error.problem, problem);
    return true;
  };
}

function checked(overrides: Partial<{ name: unknown; scopes: unknown; expiresAt: unknown; createdBy: string }> = {}) {
  return checkNewToken({ name: 'ci', scopes: ['read'], expiresAt: new Date(NOW + 30 * DAY).toISOString(), createdBy: 'password:admin', ...overrides }, NOW);
}

describe('token format', () => {
  test('pca_ + 43 base64url characters, well formed, distinct each time', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const token = generateAdminToken();
      assert.match(token, /^pca_[A-Za-z0-9_-]{43}$/);
      assert.equal(Buffer.from(token.slice(4), 'base64url').length, 32);
      assert.ok(isWellFormedAdminToken(token), token);
      seen.add(token);
    }
    assert.equal(seen.size, 200);
  });

  test('the shape check refuses everything else before any lookup', () => {
    const token = generateAdminToken();
    const lastIndex = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.indexOf(token.at(-1) as string);
    // The 43rd character carries 2 unused bits: a character with them set decodes to the same bytes but is not canonical.
    const nonCanonical = token.slice(0, -1) + 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.charAt(lastIndex | 1);
    for (const bad of ['', 'pca_', token.slice(0, -1), token + 'A', 'pcl_' + token.slice(4), token.slice(0, -1) + '=', token.slice(0, -1) + '+', ' ' + token.slice(1), nonCanonical, 42, null]) {
      assert.equal(isWellFormedAdminToken(bad), false, String(bad));
    }
  });

  test('SHA-256 hex stored, first 8 characters shown, compared in constant time', () => {
    const token = generateAdminToken();
    assert.equal(hashAdminToken(token), createHash('sha256').update(token).digest('hex'));
    assert.equal(adminTokenPrefix(token), token.slice(0, 8));
    assert.equal(tokenHashMatches({ hash: hashAdminToken(token) }, hashAdminToken(token)), true);
    assert.equal(tokenHashMatches({ hash: hashAdminToken(token) }, hashAdminToken(generateAdminToken())), false);
    assert.equal(tokenHashMatches({ hash: 'abc' }, hashAdminToken(token)), false);
  });

  test('ids are tok_ and 16 base62 characters', () => {
    for (let i = 0; i < 50; i++) assert.ok(isAdminTokenId(newAdminTokenId()));
    assert.equal(isAdminTokenId('key_0123456789abcdef'), false);
  });

  test('the admin principal re-exports the scopes from here', () => {
    assert.equal(PRINCIPAL_SCOPES, ADMIN_SCOPES);
    assert.deepEqual([...ADMIN_SCOPES], ['read', 'keys']);
  });
});

describe('a create request', () => {
  test('valid: trimmed name, scopes in canonical order, expiry normalised', () => {
    assert.deepEqual(checked({ name: '  deploy bot ', scopes: ['keys', 'read'], expiresAt: '2027-01-31T01:00:00+01:00' }), {
      name: 'deploy bot',
      scopes: ['read', 'keys'],
      expiresAt: '2027-01-31T00:00:00.000Z',
      createdBy: 'password:admin',
    });
  });

  test('names as key names', () => {
    assert.throws(() => checked({ name: '' }), settingError('name', 'it is empty'));
    assert.throws(() => checked({ name: 'x'.repeat(65) }), settingError('name', 'it has 65 characters, the limit is 64'));
    assert.throws(() => checked({ name: 'a\u0007b' }), settingError('name', 'it contains control or invisible characters'));
    assert.throws(() => checked({ name: 7 }), settingError('name', 'it must be a string'));
  });

  test('scopes: a non-empty list of distinct known scopes', () => {
    assert.throws(() => parseTokenScopes('read'), settingError('scopes', 'must be a list of scopes, each one of "read", "keys"'));
    assert.throws(() => parseTokenScopes([]), settingError('scopes', 'must name at least one scope (one of "read", "keys")'));
    assert.throws(() => parseTokenScopes(['read', 'admin']), settingError('scopes[1]', 'must be one of "read", "keys"'));
    assert.throws(() => parseTokenScopes(['keys', 'keys']), settingError('scopes[1]', 'repeats "keys"'));
    assert.throws(() => parseTokenScopes(['read', 'keys', 'read']), settingError('scopes', 'has 3 entries; there are only 2 scopes'));
    assert.deepEqual(parseTokenScopes(['keys']), ['keys']);
  });

  test('expiry: required, with a zone, real, in the future, at most 366 days ahead', () => {
    assert.throws(() => parseTokenExpiry(undefined, NOW), settingError('expiresAt', /^is required/));
    assert.throws(() => parseTokenExpiry(null, NOW), settingError('expiresAt', /^is required/));
    assert.throws(() => parseTokenExpiry('2027-01-31', NOW), settingError('expiresAt', 'must be an ISO 8601 time with a zone, like 2027-01-31T00:00:00Z'));
    assert.throws(() => parseTokenExpiry('2027-02-30T00:00:00Z', NOW), settingError('expiresAt', 'is not a real date and time'));
    assert.throws(() => parseTokenExpiry(new Date(NOW).toISOString(), NOW), settingError('expiresAt', 'is in the past'));
    assert.throws(() => parseTokenExpiry(new Date(NOW + 366 * DAY + 1).toISOString(), NOW), settingError('expiresAt', 'is more than 366 days ahead (the longest a token may live)'));
    assert.equal(parseTokenExpiry(new Date(NOW + 366 * DAY).toISOString(), NOW), new Date(NOW + 366 * DAY).toISOString());
    assert.equal(parseTokenExpiry(new Date(NOW + 1).toISOString(), NOW), new Date(NOW + 1).toISOString());
  });

  test('createdBy is <kind>:<id>', () => {
    assert.throws(() => checked({ createdBy: 'admin' }), settingError('createdBy', /^must be "<kind>:<id>"/));
    assert.throws(() => checked({ createdBy: 'cli:\n' }), settingError('createdBy', /^must be "<kind>:<id>"/));
  });
});

describe('records', () => {
  test('issue: a record with the hash and prefix of the token, never the token', () => {
    const { token, record } = issueToken(checked({ scopes: ['keys'] }), [], NOW);
    assert.deepEqual(record, {
      id: record.id,
      name: 'ci',
      prefix: token.slice(0, 8),
      hash: hashAdminToken(token),
      scopes: ['keys'],
      createdAt: new Date(NOW).toISOString(),
      expiresAt: new Date(NOW + 30 * DAY).toISOString(),
      revokedAt: null,
      createdBy: 'password:admin',
    });
    assert.ok(isAdminTokenId(record.id));
    assert.equal(JSON.stringify(record).includes(token), false);
    const { hash: _hash, ...visible } = record;
    assert.deepEqual(adminTokenView(record, NOW), { ...visible, scopes: ['keys'], status: 'active' });
    assert.deepEqual(adminTokenAuditFields(record), { id: record.id, name: 'ci', prefix: record.prefix, scopes: ['keys'], expiresAt: record.expiresAt, revokedAt: null });
  });

  test('status: active, expired at its expiry, revoked wins', () => {
    const { record } = issueToken(checked(), [], NOW);
    const expiry = Date.parse(record.expiresAt);
    assert.equal(tokenStatus(record, expiry - 1), 'active');
    assert.equal(tokenStatus(record, expiry), 'expired');
    const revoked = revokeTokenRecord(record, NOW + 5);
    assert.equal(revoked.revokedAt, new Date(NOW + 5).toISOString());
    assert.equal(tokenStatus(revoked, NOW), 'revoked');
    assert.equal(tokenStatus(revoked, expiry + 1), 'revoked');
    assert.throws(() => revokeTokenRecord(revoked, NOW + 6), AdminTokenAlreadyRevokedError);
    // An expired token can still be revoked (so it can never come back).
    assert.equal(tokenStatus(revokeTokenRecord(record, expiry + 1), expiry + 1), 'revoked');
  });

  test(`at most ${MAX_LIVE_TOKENS} live tokens; revoked and expired ones do not count`, () => {
    const records: AdminTokenRecord[] = [];
    for (let i = 0; i < MAX_LIVE_TOKENS; i++) records.push(issueToken(checked(), records, NOW).record);
    assert.throws(
      () => issueToken(checked(), records, NOW),
      (error: unknown) => error instanceof AdminTokenLimitError && error.message === 'There are already 100 live admin API tokens (the most allowed); revoke one you no longer use first.',
    );
    records[0] = revokeTokenRecord(records[0] as AdminTokenRecord, NOW);
    assert.equal(issueToken(checked(), records, NOW).record.revokedAt, null);
    // 30 days later every one has expired.
    assert.doesNotThrow(() => issueToken(checked(), [...records, ...records.map((r) => ({ ...r, id: newAdminTokenId() }))], NOW + 31 * DAY));
  });

  test(`at most ${MAX_STORED_TOKENS} records kept: the oldest dead ones are forgotten first`, () => {
    const records: AdminTokenRecord[] = [];
    for (let i = 0; i < MAX_STORED_TOKENS; i++) {
      const { record } = issueToken(checked(), [], NOW + i);
      records.push(i % 2 === 0 ? revokeTokenRecord(record, NOW + i) : record);
    }
    assert.deepEqual(tokensToForget(records.slice(0, -1), NOW + MAX_STORED_TOKENS), []);
    const forgotten = tokensToForget(records, NOW + MAX_STORED_TOKENS);
    assert.deepEqual(forgotten.map((r) => r.id), [records[0]?.id]);
  });

  test('scopes cover: keys covers read; nothing covers session', () => {
    assert.equal(scopesCover(['read'], 'read'), true);
    assert.equal(scopesCover(['read'], 'keys'), false);
    assert.equal(scopesCover(['keys'], 'read'), true);
    assert.equal(scopesCover(['keys'], 'keys'), true);
    assert.equal(scopesCover(['read', 'keys'], 'session'), false);
  });
});

describe('admin-tokens.json', () => {
  test('round trip, and strict parsing naming the place', () => {
    const a = issueToken(checked(), [], NOW).record;
    const b = revokeTokenRecord(issueToken(checked({ name: 'b', scopes: ['read', 'keys'] }), [], NOW).record, NOW + 1);
    const text = serializeTokenFile([a, b]);
    assert.deepEqual(parseTokenFile(text, '/d/admin-tokens.json'), [a, b]);
    const doc = JSON.parse(text) as { version: number; tokens: Record<string, unknown>[] };
    const broken = (change: (d: typeof doc) => void): string => {
      const copy = structuredClone(doc);
      change(copy);
      return JSON.stringify(copy);
    };
    const cases: Array<[string, string]> = [
      ['', 'it is empty'],
      [broken((d) => (d.version = 2)), '"version" is 2, this version of portcullis reads version 1'],
      [broken((d) => ((d as Record<string, unknown>)['extra'] = 1)), 'unknown top-level field "extra"'],
      [broken((d) => ((d.tokens[0] as Record<string, unknown>)['token'] = 'x')), 'tokens[0] has an unknown field "token"'],
      [broken((d) => delete (d.tokens[1] as Record<string, unknown>)['createdBy']), 'tokens[1] is missing "createdBy"'],
      [broken((d) => ((d.tokens[0] as Record<string, unknown>)['scopes'] = ['keys', 'read'])), 'tokens[0].scopes must be in the order ["read","keys"]'],
      [broken((d) => ((d.tokens[0] as Record<string, unknown>)['scopes'] = ['admin'])), 'tokens[0].scopes[0]: must be one of "read", "keys"'],
      [broken((d) => ((d.tokens[0] as Record<string, unknown>)['hash'] = 'ABC')), 'tokens[0].hash must be 64 lowercase hex digits'],
      [broken((d) => (d.tokens[1] = { ...d.tokens[0] })), 'tokens[1].id ' + a.id + ' appears twice'],
    ];
    for (const [bad, problem] of cases) {
      assert.throws(
        () => parseTokenFile(bad, '/d/admin-tokens.json'),
        (error: unknown) => error instanceof Error && error.message === `Admin token store /d/admin-tokens.json is invalid: ${problem}. Nothing was changed; repair it or restore it from a backup.`,
        problem,
      );
    }
  });
});
