// What only the file adapter of the key store has: keys.json on disk (mode, format,
// corruption, crashed writers), its lock, and store instances sharing one
// directory. Processes sharing one are in file-key-store.system.test.ts; the
// behaviour every key store shares is in file-key-store-contract.test.ts.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { generateApiKey, hashApiKey } from '../../src/keys/api-key.ts';
import { InvalidKeyNameError, KeyFileInvalidError } from '../../src/keys/errors.ts';
import { FileLockTimeoutError } from '../../src/files/errors.ts';
import { NO_LIMITS } from '../../src/limits/key-limits.ts';
import { openKeyStore, type FileKeyStore as KeyStore, type KeyStoreOptions } from '../../src/state/file-key-store.ts';
import { pidOfNoProcess } from '../files/lock-holders.ts';
import { freshPath, tempDir } from '../support/temp-dir.ts';

const root = tempDir('store');
function freshDir(): string {
  return freshPath(root, 'data');
}

const T0 = Date.parse('2025-01-31T12:00:00.000Z');
const clock = (): Date => new Date(T0);

const opened: KeyStore[] = [];
after(async () => {
  for (const store of opened) await store.close();
});
function open(dir: string, options: KeyStoreOptions = {}): KeyStore {
  const store = openKeyStore(dir, { watch: false, ...options });
  opened.push(store);
  return store;
}

test('opening creates the data directory with mode 0700 and an empty store', async () => {
  const dir = path.join(freshDir(), 'nested', 'data');
  const store = open(dir);
  assert.equal(statSync(dir).mode & 0o777, 0o700);
  assert.equal(store.keysFilePath, path.join(dir, 'keys.json'));
  assert.equal(store.lastUsedFilePath, path.join(dir, 'keys-last-used.json'));
  assert.deepEqual(await store.list(), []);
  assert.equal(existsSync(store.keysFilePath), false, 'reading never creates the file');
  assert.equal(store.authenticate(generateApiKey()), null);
});

test('create stores the hash, never the key, in a 0600 file, and the key authenticates', async () => {
  const dir = freshDir();
  const store = open(dir, { clock });
  const { key, record } = await store.create('  my app ');
  assert.match(key, /^pcl_[0-9A-Za-z]{49}$/);
  assert.match(record.id, /^key_[0-9A-Za-z]{16}$/);
  assert.deepEqual(record, {
    id: record.id,
    name: 'my app',
    prefix: key.slice(0, 12),
    hash: hashApiKey(key),
    createdAt: '2025-01-31T12:00:00.000Z',
    revokedAt: null,
    rotatedAt: null,
    allowedAliases: null,
    expiresAt: null,
    limits: NO_LIMITS,
    guard: null,
  });
  const text = readFileSync(store.keysFilePath, 'utf8');
  assert.equal(text.includes(key), false);
  assert.equal(text.includes(key.slice(12)), false);
  // costBudget and guard are written only when set.
  const { costBudget: _unset, ...storedLimits } = record.limits;
  const { guard: _none, ...stored } = record;
  assert.deepEqual(JSON.parse(text), { version: 2, keys: [{ ...stored, limits: storedLimits }] });
  assert.equal(statSync(store.keysFilePath).mode & 0o777, 0o600);
  assert.deepEqual(readdirSync(dir), ['keys.json'], 'no temp or lock file left');
  assert.deepEqual(store.authenticate(key), record);
  assert.equal(store.authenticate(generateApiKey()), null);
  assert.equal(store.authenticate(key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a')), null);
  assert.deepEqual(await store.list(), [{ ...record, lastUsedAt: null }]);
});

test('create refuses a bad name before touching the disk', async () => {
  const dir = freshDir();
  const store = open(dir);
  for (const name of ['', '   ', 'x'.repeat(65), 'a\nb']) {
    await assert.rejects(store.create(name), (err: unknown) => err instanceof InvalidKeyNameError && err.code === 'invalid_key_name');
  }
  assert.deepEqual(readdirSync(dir), []);
});

test('a corrupt or wrong-schema keys.json is an error naming the file, and is never overwritten', async () => {
  const dir = freshDir();
  const good = open(dir);
  await good.create('before corruption');
  for (const [content, problem] of [
    ['{"version":1,"keys":[', /^it is not valid JSON \(/],
    ['', /^it is empty$/],
    ['{"version":3,"keys":[]}', /^"version" is 3, this version of portcullis reads version 1 or 2$/],
    ['{"version":1,"keys":[{"id":"key_1"}]}', /^keys\[0\] has an unknown field|^keys\[0\]\.id must look like/],
  ] as const) {
    writeFileSync(path.join(dir, 'keys.json'), content);
    const isInvalid = (err: unknown): boolean =>
      err instanceof KeyFileInvalidError &&
      err.code === 'key_file_invalid' &&
      err.path === path.join(dir, 'keys.json') &&
      problem.test(err.problem) &&
      err.message.startsWith(`Key store file ${path.join(dir, 'keys.json')} is invalid: `);
    assert.throws(() => openKeyStore(dir, { watch: false }), isInvalid);
    await assert.rejects(good.create('after corruption'), isInvalid);
    await assert.rejects(good.revoke('key_0000000000000000'), isInvalid);
    await assert.rejects(good.list(), isInvalid);
    assert.equal(readFileSync(path.join(dir, 'keys.json'), 'utf8'), content, 'left untouched');
  }
});

test('a crashed writer\'s temp file and dead lock are cleaned up by the next create', async () => {
  const dir = freshDir();
  const store = open(dir);
  const { record: kept } = await store.create('kept');
  const deadPid = pidOfNoProcess();
  writeFileSync(path.join(dir, `keys.json.${deadPid}.0a1b2c3d4e5f.tmp`), '{"version":1,"keys":[half');
  writeFileSync(path.join(dir, 'keys.json.lock'), JSON.stringify({ pid: deadPid, hostname: os.hostname(), token: 't', acquiredAt: '2025-01-31T12:00:00.000Z' }));
  const { record: added } = await store.create('added');
  assert.deepEqual(readdirSync(dir), ['keys.json']);
  assert.deepEqual((await store.list()).map((k) => k.id), [kept.id, added.id]);
});

test('a live lock holder makes create fail with a lock timeout, changing nothing', async () => {
  const dir = freshDir();
  const store = open(dir, { lock: { timeoutMs: 100 } });
  await store.create('one');
  const before = readFileSync(store.keysFilePath, 'utf8');
  writeFileSync(`${store.keysFilePath}.lock`, JSON.stringify({ pid: process.ppid, hostname: os.hostname(), token: 't', acquiredAt: '2025-01-31T12:00:00.000Z' }));
  await assert.rejects(store.create('two'), (err: unknown) => err instanceof FileLockTimeoutError && err.code === 'file_lock_timeout');
  assert.equal(readFileSync(store.keysFilePath, 'utf8'), before);
  rmSync(`${store.keysFilePath}.lock`);
});

test('concurrent creates and revokes from two store instances lose nothing', async () => {
  const dir = freshDir();
  const a = open(dir);
  const b = open(dir);
  const created = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).create(`key ${i}`)));
  const toRevoke = created.filter((_, i) => i % 3 === 0);
  await Promise.all(toRevoke.map((c, i) => (i % 2 === 0 ? b : a).revoke(c.record.id)));
  const listed = await open(dir).list();
  assert.equal(listed.length, 20);
  assert.deepEqual(new Set(listed.map((k) => k.name)), new Set(created.map((c) => c.record.name)));
  const revokedIds = new Set(toRevoke.map((c) => c.record.id));
  for (const k of listed) assert.equal(k.revokedAt !== null, revokedIds.has(k.id), k.name);
  const third = open(dir);
  for (const c of created) assert.equal(third.authenticate(c.key)?.id ?? null, revokedIds.has(c.record.id) ? null : c.record.id);
  assert.deepEqual(readdirSync(dir), ['keys.json']);
});
