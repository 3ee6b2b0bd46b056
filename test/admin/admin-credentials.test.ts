import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import {
  ADMIN_FILE_NAME,
  adminFilePath,
  AdminFileInvalidError,
  AdminFileIoError,
  parseAdminFile,
  readAdminCredentials,
  serializeAdminFile,
  setAdminPassword,
  WeakAdminPasswordError,
} from '../../src/admin/admin-credentials.ts';
import { verifyPassword, type ScryptParams } from '../../src/admin/password-hash.ts';
import { freshPath, tempDir } from '../support/temp-dir.ts';

const FAST: ScryptParams = { cost: 1024, blockSize: 8, parallelization: 1 };
const HASH = `scrypt$1024$8$1$${Buffer.alloc(16, 1).toString('base64url')}$${Buffer.alloc(32, 2).toString('base64url')}`;
const FILE = '/data/admin.json';
const ADVICE = 'Set a new password with "portcullis admin set-password"; it replaces the file.';

const root = tempDir('admin');
const fixedClock = () => new Date('2025-02-01T09:15:30.123Z');

test('serializeAdminFile writes the documented format and parseAdminFile reads it back', () => {
  const text = serializeAdminFile({ passwordHash: HASH, updatedAt: '2025-02-01T09:15:30.123Z' });
  assert.equal(text, `{\n  "version": 1,\n  "passwordHash": "${HASH}",\n  "updatedAt": "2025-02-01T09:15:30.123Z"\n}\n`);
  assert.deepEqual(parseAdminFile(text, FILE), { passwordHash: HASH, updatedAt: '2025-02-01T09:15:30.123Z' });
});

test('parseAdminFile refuses every deviation with a message naming the file', () => {
  const good = { version: 1, passwordHash: HASH, updatedAt: '2025-02-01T09:15:30.123Z' };
  const cases: Array<[string, string]> = [
    ['', 'it is empty'],
    ['  \n', 'it is empty'],
    ['[]', 'expected an object {"version":1,"passwordHash":...,"updatedAt":...}'],
    ['null', 'expected an object {"version":1,"passwordHash":...,"updatedAt":...}'],
    [JSON.stringify({ ...good, version: 2 }), '"version" is 2, this version of portcullis reads version 1'],
    [JSON.stringify({ passwordHash: HASH, updatedAt: good.updatedAt }), '"version" is nothing, this version of portcullis reads version 1'],
    [JSON.stringify({ ...good, extra: true }), 'unknown field "extra"'],
    [JSON.stringify({ ...good, passwordHash: 'hunter2' }), '"passwordHash" is malformed: expected scrypt$<N>$<r>$<p>$<salt>$<hash> or pbkdf2-sha256$<iterations>$<salt>$<hash>'],
    [JSON.stringify({ ...good, passwordHash: HASH.replace('$1024$', '$1073741824$') }), '"passwordHash" is malformed: N must be a power of two from 2^10 to 2^20'],
    [JSON.stringify({ version: 1, updatedAt: good.updatedAt }), '"passwordHash" is malformed: it is not a string'],
    [JSON.stringify({ ...good, updatedAt: '2025-02-01' }), '"updatedAt" must be an ISO 8601 time like 2025-02-01T09:15:30.123Z'],
    [JSON.stringify({ ...good, updatedAt: 5 }), '"updatedAt" must be an ISO 8601 time like 2025-02-01T09:15:30.123Z'],
  ];
  for (const [text, problem] of cases) {
    assert.throws(
      () => parseAdminFile(text, FILE),
      (error: unknown) => {
        assert.ok(error instanceof AdminFileInvalidError, text);
        assert.equal(error.code, 'admin_file_invalid');
        assert.equal(error.path, FILE);
        assert.equal(error.problem, problem, text);
        assert.equal(error.message, `Admin credentials file ${FILE} is invalid: ${problem}. ${ADVICE}`);
        return true;
      },
    );
  }
  assert.throws(() => parseAdminFile('{"version":1,', FILE), (error: unknown) => {
    assert.ok(error instanceof AdminFileInvalidError);
    assert.match(error.problem, /^it is not valid JSON \(/);
    return true;
  });
});

test('readAdminCredentials: null when the file (or the directory) is missing', async () => {
  assert.equal(await readAdminCredentials(freshPath(root)), null);
  const dir = freshPath(root);
  mkdirSync(dir);
  assert.equal(await readAdminCredentials(dir), null);
});

test('setAdminPassword writes admin.json with mode 0600 and a hash that verifies; read returns the same', async () => {
  const dir = freshPath(root);
  const written = await setAdminPassword(dir, 'correct horse battery', fixedClock, { scrypt: FAST });
  assert.equal(written.updatedAt, '2025-02-01T09:15:30.123Z');
  assert.match(written.passwordHash, /^scrypt\$1024\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  const file = path.join(dir, ADMIN_FILE_NAME);
  assert.equal(readFileSync(file, 'utf8'), serializeAdminFile(written));
  if (process.platform !== 'win32') {
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
  }
  assert.deepEqual(await readAdminCredentials(dir), written);
  assert.equal(await verifyPassword('correct horse battery', written.passwordHash), true);
  assert.equal(await verifyPassword('wrong horse battery', written.passwordHash), false);
  // No lock file or temp file is left behind.
  assert.deepEqual(readdirSync(dir), [ADMIN_FILE_NAME]);
});

test('setAdminPassword with the default cost writes N=2^15', async () => {
  const written = await setAdminPassword(freshPath(root), 'correct horse battery', fixedClock);
  assert.match(written.passwordHash, /^scrypt\$32768\$8\$1\$/);
});

test('setAdminPassword replaces an existing file, broken or not, and removes a crashed writer temp file', async () => {
  const dir = freshPath(root);
  mkdirSync(dir);
  const file = path.join(dir, ADMIN_FILE_NAME);
  writeFileSync(file, 'not json');
  writeFileSync(path.join(dir, `${ADMIN_FILE_NAME}.123.abcdef012345.tmp`), 'debris');
  await assert.rejects(readAdminCredentials(dir), AdminFileInvalidError);
  const first = await setAdminPassword(dir, 'first password 1', fixedClock, { scrypt: FAST });
  const second = await setAdminPassword(dir, 'second password 2', () => new Date('2025-03-01T00:00:00.000Z'), { scrypt: FAST });
  assert.notEqual(first.passwordHash, second.passwordHash);
  assert.deepEqual(await readAdminCredentials(dir), second);
  assert.deepEqual(readdirSync(dir), [ADMIN_FILE_NAME]);
});

test('setAdminPassword refuses a weak password and leaves no file', async () => {
  const dir = freshPath(root);
  await assert.rejects(setAdminPassword(dir, 'short', fixedClock, { scrypt: FAST }), (error: unknown) => {
    assert.ok(error instanceof WeakAdminPasswordError);
    assert.equal(error.code, 'weak_admin_password');
    assert.equal(error.message, 'The password must be at least 12 characters long; it has 5.');
    return true;
  });
  assert.equal(existsSync(dir), false);
});

test('a lock held by a live process times out as AdminFileIoError naming the lock file', async () => {
  const dir = freshPath(root);
  mkdirSync(dir);
  const lock = path.join(dir, `${ADMIN_FILE_NAME}.lock`);
  // Our own pid with another process's token format would be judged stale; pid 1 on this host is alive.
  writeFileSync(lock, JSON.stringify({ pid: 1, hostname: os.hostname(), token: 'x.0.y', acquiredAt: new Date().toISOString() }));
  await assert.rejects(
    setAdminPassword(dir, 'correct horse battery', fixedClock, { scrypt: FAST, lock: { timeoutMs: 50 } }),
    (error: unknown) => {
      assert.ok(error instanceof AdminFileIoError);
      assert.equal(error.code, 'admin_file_io_error');
      assert.match(error.message, new RegExp(`^Timed out after \\d+ ms waiting for the lock file ${lock.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} `));
      return true;
    },
  );
  assert.equal(existsSync(path.join(dir, ADMIN_FILE_NAME)), false);
});

test('an admin.json that cannot be read is AdminFileIoError, not "no password"', { skip: process.platform === 'win32' }, async () => {
  const dir = freshPath(root);
  // A directory in its place: open() succeeds, reading fails with EISDIR (also as root).
  mkdirSync(path.join(dir, ADMIN_FILE_NAME), { recursive: true });
  await assert.rejects(readAdminCredentials(dir), (error: unknown) => {
    assert.ok(error instanceof AdminFileIoError);
    assert.equal(error.path, path.join(dir, ADMIN_FILE_NAME));
    assert.match(error.message, /^Could not read .*admin\.json: EISDIR/);
    return true;
  });
});

test('an oversized admin.json is refused before it is read', async () => {
  const dir = freshPath(root);
  mkdirSync(dir);
  writeFileSync(path.join(dir, ADMIN_FILE_NAME), ' '.repeat(64 * 1024 + 1));
  await assert.rejects(readAdminCredentials(dir), (error: unknown) => {
    assert.ok(error instanceof AdminFileInvalidError);
    assert.equal(error.problem, 'it has 65537 bytes, more than 65536');
    return true;
  });
});

test('setAdminPassword with onlyIfUnset refuses, under the lock, when a password appeared meanwhile', async () => {
  const dir = freshPath(root);
  await setAdminPassword(dir, 'set by the cli first', fixedClock, { scrypt: FAST });
  const before = readFileSync(adminFilePath(dir), 'utf8');
  await assert.rejects(setAdminPassword(dir, 'set by the dashboard', fixedClock, { scrypt: FAST, onlyIfUnset: true }), {
    name: 'AdminPasswordAlreadySetError',
    code: 'admin_password_already_set',
    message: `An admin password is already set in ${adminFilePath(dir)}.`,
  });
  assert.equal(readFileSync(adminFilePath(dir), 'utf8'), before);
  const fresh = freshPath(root);
  await setAdminPassword(fresh, 'the very first one', fixedClock, { scrypt: FAST, onlyIfUnset: true });
  assert.notEqual(await readAdminCredentials(fresh), null);
});
