import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidKeyNameError, KeyFileInvalidError } from '../../src/keys/errors.ts';
import { NO_LIMITS } from '../../src/limits/key-limits.ts';
import { parseAllowedAliases, parseExpiresAt } from '../../src/keys/key-settings.ts';
import {
  isKeyId,
  laterTime,
  newKeyId,
  parseKeysFile,
  parseLastUsedFile,
  serializeKeysFile,
  serializeLastUsedFile,
  validateKeyName,
  type KeyRecord,
} from '../../src/keys/store-format.ts';
import { DETECTOR_NAMES } from '../../src/guard/detector-names.ts';

const PATH = '/data/keys.json';
const LAST_USED_PATH = '/data/keys-last-used.json';
const RECORD: KeyRecord = {
  id: 'key_AAAAAAAAAAAAAAAA',
  name: 'my app',
  prefix: 'pcl_AbC1x9Qz',
  hash: 'a'.repeat(64),
  createdAt: '2025-01-31T12:00:00.000Z',
  revokedAt: null,
  rotatedAt: null,
  allowedAliases: null,
  expiresAt: null,
  limits: NO_LIMITS,
  guard: null,
};
const REVOKED: KeyRecord = {
  ...RECORD,
  id: 'key_BBBBBBBBBBBBBBBB',
  hash: 'b'.repeat(64),
  revokedAt: '2025-02-01T00:00:00.000Z',
};

test('validateKeyName trims and accepts 1 to 64 printable characters', () => {
  assert.equal(validateKeyName('  my app  '), 'my app');
  assert.equal(validateKeyName('x'), 'x');
  assert.equal(validateKeyName('é'.repeat(64)), 'é'.repeat(64));
  assert.equal(validateKeyName('🔑'.repeat(64)), '🔑'.repeat(64)); // counted in code points, not UTF-16 units
});

test('validateKeyName refuses empty, long, control and invisible names with a clear problem', () => {
  const cases: [unknown, string][] = [
    ['', 'Invalid key name: it is empty.'],
    ['   \t ', 'Invalid key name: it is empty.'],
    ['x'.repeat(65), 'Invalid key name: it has 65 characters, the limit is 64.'],
    ['a\nb', 'Invalid key name: it contains control or invisible characters.'],
    ['a\u0000b', 'Invalid key name: it contains control or invisible characters.'],
    ['a\u001b[31mb', 'Invalid key name: it contains control or invisible characters.'],
    ['a\u200bb', 'Invalid key name: it contains control or invisible characters.'],
    ['a\u2028b', 'Invalid key name: it contains control or invisible characters.'],
    ['a\u202eb', 'Invalid key name: it contains control or invisible characters.'],
    [42, 'Invalid key name: it must be a string.'],
  ];
  for (const [name, message] of cases) {
    assert.throws(
      () => validateKeyName(name),
      (err: unknown) => err instanceof InvalidKeyNameError && err.code === 'invalid_key_name' && err.message === message,
      JSON.stringify(name),
    );
  }
});

test('newKeyId: key_ and 16 base62 characters, distinct', () => {
  const ids = new Set<string>();
  for (let i = 0; i < 1000; i++) {
    const id = newKeyId();
    assert.match(id, /^key_[0-9A-Za-z]{16}$/);
    assert.equal(isKeyId(id), true);
    ids.add(id);
  }
  assert.equal(ids.size, 1000);
  assert.equal(isKeyId('key_short'), false);
  assert.equal(isKeyId('pcl_AAAAAAAAAAAAAAAA'), false);
});

test('keys file round-trips through serialize and parse', () => {
  const text = serializeKeysFile([RECORD, REVOKED]);
  const settings =
    '      "rotatedAt": null,\n      "expiresAt": null,\n      "allowedAliases": null,\n' +
    '      "limits": {\n        "requestsPerMinute": null,\n        "tokensPerMinute": null,\n        "concurrentRequests": null,\n        "tokenBudget": null\n      }\n';
  assert.equal(
    text,
    '{\n  "version": 2,\n  "keys": [\n' +
      '    {\n      "id": "key_AAAAAAAAAAAAAAAA",\n      "name": "my app",\n      "prefix": "pcl_AbC1x9Qz",\n' +
      `      "hash": "${'a'.repeat(64)}",\n      "createdAt": "2025-01-31T12:00:00.000Z",\n      "revokedAt": null,\n${settings}    },\n` +
      '    {\n      "id": "key_BBBBBBBBBBBBBBBB",\n      "name": "my app",\n      "prefix": "pcl_AbC1x9Qz",\n' +
      `      "hash": "${'b'.repeat(64)}",\n      "createdAt": "2025-01-31T12:00:00.000Z",\n      "revokedAt": "2025-02-01T00:00:00.000Z",\n${settings}    }\n` +
      '  ]\n}\n',
  );
  assert.deepEqual(parseKeysFile(text, PATH), [RECORD, REVOKED]);
  assert.deepEqual(parseKeysFile('{"version":2,"keys":[]}', PATH), []);
  assert.equal(Object.isFrozen(parseKeysFile(text, PATH)[0]), true);
  const scoped = {
    ...RECORD,
    rotatedAt: '2025-03-01T00:00:00.000Z',
    expiresAt: '2026-01-01T00:00:00.000Z',
    allowedAliases: ['service-chat', 'service-vision'],
    limits: { requestsPerMinute: 60, tokensPerMinute: 90_000, concurrentRequests: 4, tokenBudget: { tokens: 1_000_000, period: 'month' as const }, costBudget: null },
  };
  assert.deepEqual(parseKeysFile(serializeKeysFile([scoped]), PATH), [scoped]);
  // A set costBudget is written and read back; an unset one is not written at all.
  const spending = { ...scoped, limits: { ...scoped.limits, costBudget: { amount: 25.5, period: 'month' as const } } };
  const spendingText = serializeKeysFile([spending]);
  assert.match(spendingText, /"costBudget": \{\n {10}"amount": 25\.5,\n {10}"period": "month"\n {8}\}/);
  assert.deepEqual(parseKeysFile(spendingText, PATH), [spending]);
  assert.equal(serializeKeysFile([scoped]).includes('costBudget'), false);
  // A set guard is written after the limits and read back; none is not written at all.
  const guarded = { ...scoped, guard: { detectors: { secrets: 'block' as const, email: 'mask' as const } } };
  const guardedText = serializeKeysFile([guarded]);
  assert.match(guardedText, /"guard": \{\n {8}"detectors": \{\n {10}"secrets": "block",\n {10}"email": "mask"\n {8}\}\n {6}\}\n {4}\}/);
  assert.deepEqual(parseKeysFile(guardedText, PATH), [guarded]);
  assert.equal(serializeKeysFile([scoped]).includes('guard'), false);
});

test('a stored guard is checked like any setting, naming the record and path', () => {
  const stored = (guard: unknown) => JSON.stringify({ version: 2, keys: [{ ...RECORD, guard }] });
  assertInvalid(stored({ detectors: { emails: 'block' } }), `keys[0].guard.detectors.emails is invalid: Invalid guard.detectors.emails: unknown detector; use a group (secrets, personal) or one of ${DETECTOR_NAMES.join(', ')}.`);
  assertInvalid(stored({ detectors: { email: 'deny' } }), 'keys[0].guard.detectors.email is invalid: Invalid guard.detectors.email: must be one of "off", "log", "mask", "block".');
  assertInvalid(stored({ rules: {} }), 'keys[0].guard.rules is invalid: Invalid guard.rules: is not a key guard setting; the only one is "detectors".');
  assertInvalid(stored('block'), 'keys[0].guard is invalid: Invalid guard: must be null (no key-level guard) or an object like { "detectors": { "secrets": "block" } }.');
  assertInvalid(stored({}), 'keys[0].guard.detectors is invalid: Invalid guard.detectors: is required (or set guard to null).');
  assert.deepEqual(parseKeysFile(stored(null), PATH), [RECORD]);
});

test('a version 1 keys file reads with default settings', () => {
  const { id, name, prefix, hash, createdAt, revokedAt } = RECORD;
  const v1 = JSON.stringify({ version: 1, keys: [{ id, name, prefix, hash, createdAt, revokedAt }] });
  assert.deepEqual(parseKeysFile(v1, PATH), [RECORD]);
  assertInvalid(JSON.stringify({ version: 1, keys: [{ ...RECORD }] }), 'keys[0] has an unknown field "rotatedAt"');
});

function assertInvalid(text: string, problem: string, path = PATH, parse = parseKeysFile as (t: string, p: string) => unknown): void {
  assert.throws(
    () => parse(text, path),
    (err: unknown) =>
      err instanceof KeyFileInvalidError &&
      err.code === 'key_file_invalid' &&
      err.path === path &&
      err.problem === problem &&
      err.message.startsWith(`Key store file ${path} is invalid: ${problem}. The file was left untouched`),
    problem,
  );
}

function withRecord(change: Record<string, unknown>): string {
  return JSON.stringify({ version: 2, keys: [{ ...RECORD, ...change }] });
}

test('keys file: syntax and top-level problems name the file and the problem', () => {
  assertInvalid('', 'it is empty');
  assertInvalid('  \n', 'it is empty');
  assert.throws(
    () => parseKeysFile('{"version":1,"keys":[', PATH),
    (err: unknown) => err instanceof KeyFileInvalidError && /^it is not valid JSON \(.+\)$/.test(err.problem) && err.cause instanceof SyntaxError,
  );
  assertInvalid('[]', 'expected an object {"version":2,"keys":...}');
  assertInvalid('null', 'expected an object {"version":2,"keys":...}');
  assertInvalid('{"keys":[]}', '"version" is nothing, this version of portcullis reads version 1 or 2');
  assertInvalid('{"version":3,"keys":[]}', '"version" is 3, this version of portcullis reads version 1 or 2');
  assertInvalid('{"version":"1","keys":[]}', '"version" is "1", this version of portcullis reads version 1 or 2');
  assertInvalid('{"version":1}', '"keys" must be an array');
  assertInvalid('{"version":1,"keys":{}}', '"keys" must be an array');
  assertInvalid('{"version":1,"keys":[],"extra":true}', 'unknown top-level field "extra"');
});

test('keys file: record problems give the JSON path', () => {
  assertInvalid('{"version":2,"keys":[1]}', 'keys[0] must be an object');
  assertInvalid(JSON.stringify({ version: 2, keys: [{ ...RECORD, limits: undefined }] }), 'keys[0] is missing "limits"');
  assertInvalid(withRecord({ allowedAliases: [] }), 'keys[0].allowedAliases is invalid: Invalid allowedAliases: must name at least one alias (a key allowed nothing is a revoked key).');
  assertInvalid(withRecord({ expiresAt: 'tomorrow' }), 'keys[0].expiresAt is invalid: Invalid expiresAt: must be null or an ISO 8601 time with a zone, like 2027-01-31T00:00:00Z.');
  assertInvalid(withRecord({ rotatedAt: 5 }), 'keys[0].rotatedAt must be null or an ISO 8601 time');
  assertInvalid(withRecord({ scopes: [] }), 'keys[0] has an unknown field "scopes"');
  assertInvalid(withRecord({ id: 'key_1' }), 'keys[0].id must look like key_ followed by 16 letters or digits');
  assertInvalid(withRecord({ name: 7 }), 'keys[0].name must be a string');
  assertInvalid(withRecord({ name: '' }), 'keys[0].name is invalid: it is empty');
  assertInvalid(withRecord({ name: ' padded' }), 'keys[0].name must not start or end with spaces');
  assertInvalid(withRecord({ prefix: 'sk-AbC1x9Qz' }), 'keys[0].prefix must be pcl_ followed by 8 letters or digits');
  assertInvalid(withRecord({ hash: 'A'.repeat(64) }), 'keys[0].hash must be 64 lowercase hex digits');
  assertInvalid(withRecord({ hash: undefined }), 'keys[0] is missing "hash"');
  assertInvalid(withRecord({ createdAt: '2025-01-31' }), 'keys[0].createdAt must be an ISO 8601 time like 2025-01-31T12:00:00.000Z');
  assertInvalid(withRecord({ revokedAt: 'yesterday' }), 'keys[0].revokedAt must be null or an ISO 8601 time like 2025-01-31T12:00:00.000Z');
  const twice = (change: Partial<KeyRecord>): string =>
    JSON.stringify({ version: 2, keys: [RECORD, { ...RECORD, ...change }] });
  assertInvalid(twice({ hash: 'c'.repeat(64) }), "keys[1].id 'key_AAAAAAAAAAAAAAAA' appears twice");
  assertInvalid(twice({ id: 'key_CCCCCCCCCCCCCCCC' }), 'keys[1].hash appears twice');
});

test('last-used file round-trips, sorted by id', () => {
  const map = new Map([
    ['key_BBBBBBBBBBBBBBBB', '2025-02-01T00:00:00.000Z'],
    ['key_AAAAAAAAAAAAAAAA', '2025-01-31T12:00:00.000Z'],
  ]);
  const text = serializeLastUsedFile(map);
  assert.equal(
    text,
    '{\n  "version": 1,\n  "lastUsed": {\n    "key_AAAAAAAAAAAAAAAA": "2025-01-31T12:00:00.000Z",\n' +
      '    "key_BBBBBBBBBBBBBBBB": "2025-02-01T00:00:00.000Z"\n  }\n}\n',
  );
  assert.deepEqual(parseLastUsedFile(text, LAST_USED_PATH), map);
});

test('last-used file problems name the file and say deleting it is safe', () => {
  const parse = parseLastUsedFile as (t: string, p: string) => unknown;
  assertInvalidLastUsed('{"version":1,"lastUsed":[]}', '"lastUsed" must be an object');
  assertInvalidLastUsed('{"version":1,"lastUsed":{"nope":"2025-01-31T12:00:00.000Z"}}', 'lastUsed has a field "nope" that is not a key id');
  assertInvalidLastUsed('{"version":1,"lastUsed":{"key_AAAAAAAAAAAAAAAA":1}}', 'lastUsed.key_AAAAAAAAAAAAAAAA must be an ISO 8601 time');
  assertInvalidLastUsed('{"version":1,"keys":{}}', 'unknown top-level field "keys"');
  function assertInvalidLastUsed(text: string, problem: string): void {
    assert.throws(
      () => parse(text, LAST_USED_PATH),
      (err: unknown) =>
        err instanceof KeyFileInvalidError &&
        err.message ===
          `Key store file ${LAST_USED_PATH} is invalid: ${problem}. The file was left untouched; it only holds last-used times, so deleting it is safe.`,
      problem,
    );
  }
});

test('laterTime picks the later ISO time', () => {
  assert.equal(laterTime(undefined, '2025-01-01T00:00:00.000Z'), '2025-01-01T00:00:00.000Z');
  assert.equal(laterTime('2025-01-02T00:00:00.000Z', '2025-01-01T00:00:00.000Z'), '2025-01-02T00:00:00.000Z');
  assert.equal(laterTime('2025-01-01T00:00:00.000Z', '2025-01-02T00:00:00.000Z'), '2025-01-02T00:00:00.000Z');
});

test('key settings: impossible dates and service-auto are refused, not shifted or ignored', () => {
  assert.throws(() => parseExpiresAt('2099-02-30T00:00:00Z'), { name: 'InvalidKeySettingError', message: 'Invalid expiresAt: is not a real date and time.' });
  assert.throws(() => parseExpiresAt('2099-01-31T24:00:00Z'), { name: 'InvalidKeySettingError', message: 'Invalid expiresAt: is not a real date and time.' });
  assert.equal(parseExpiresAt('2096-02-29T23:59:59+02:00'), '2096-02-29T21:59:59.000Z');
  assert.throws(() => parseAllowedAliases(['service-auto']), { name: 'InvalidKeySettingError', param: 'allowedAliases[0]' });
});
