import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { generateApiKey, hashApiKey } from '../../src/keys/api-key.ts';
import {
  InvalidKeyNameError,
  KeyAlreadyRevokedError,
  KeyFileInvalidError,
  KeyNotFoundError,
  KeyStoreClosedError,
  KeyStoreLockTimeoutError,
} from '../../src/keys/errors.ts';
import { NO_LIMITS } from '../../src/limits/key-limits.ts';
import { openKeyStore, type FileKeyStore as KeyStore, type KeyStoreOptions } from '../../src/keys/file-key-store.ts';

const root = mkdtempSync(path.join(os.tmpdir(), 'portcullis-store-'));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;
function freshDir(): string {
  return path.join(root, `data-${counter++}`);
}

const T0 = Date.parse('2025-01-31T12:00:00.000Z');
function manualClock(): { clock: () => Date; advance(ms: number): void } {
  let now = T0;
  return { clock: () => new Date(now), advance: (ms) => void (now += ms) };
}

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
  const { clock } = manualClock();
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
  });
  const text = readFileSync(store.keysFilePath, 'utf8');
  assert.equal(text.includes(key), false);
  assert.equal(text.includes(key.slice(12)), false);
  assert.deepEqual(JSON.parse(text), { version: 2, keys: [record] });
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

test('revoke stamps revokedAt; the key stops authenticating; errors for twice and unknown ids', async () => {
  const { clock, advance } = manualClock();
  const store = open(freshDir(), { clock });
  const first = await store.create('first');
  const second = await store.create('second');
  advance(60_000);
  const revoked = await store.revoke(first.record.id);
  assert.deepEqual(revoked, { ...first.record, revokedAt: '2025-01-31T12:01:00.000Z' });
  assert.equal(store.authenticate(first.key), null);
  assert.deepEqual(store.authenticate(second.key), second.record);
  assert.deepEqual(await store.list(), [
    { ...revoked, lastUsedAt: null },
    { ...second.record, lastUsedAt: null },
  ]);

  await assert.rejects(
    store.revoke(first.record.id),
    (err: unknown) =>
      err instanceof KeyAlreadyRevokedError &&
      err.code === 'key_already_revoked' &&
      err.message === `API key '${first.record.id}' was already revoked at 2025-01-31T12:01:00.000Z.`,
  );
  await assert.rejects(
    store.revoke('key_0000000000000000'),
    (err: unknown) =>
      err instanceof KeyNotFoundError &&
      err.code === 'key_not_found' &&
      err.keyId === 'key_0000000000000000' &&
      err.message === `No API key has the id 'key_0000000000000000'. Run "portcullis keys list" to see the ids.`,
  );
  // A raw key pasted instead of an id is not echoed.
  await assert.rejects(
    store.revoke(second.key),
    (err: unknown) =>
      err instanceof KeyNotFoundError &&
      err.keyId === null &&
      !err.message.includes(second.key) &&
      err.message === 'No API key has that id (ids look like key_ followed by 16 letters or digits). Run "portcullis keys list" to see the ids.',
  );
  assert.deepEqual(store.authenticate(second.key), second.record);
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
  const deadPid = spawnSync(process.execPath, ['-e', '']).pid as number;
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
  await assert.rejects(store.create('two'), (err: unknown) => err instanceof KeyStoreLockTimeoutError && err.code === 'key_store_lock_timeout');
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

const execFileAsync = promisify(execFile);
const STORE_MODULE = new URL(`../../src/keys/file-key-store${path.extname(new URL(import.meta.url).pathname)}`, import.meta.url).href;
const CHILD_SCRIPT = `
const [moduleUrl, dir, label, count] = process.argv.slice(1);
const { openKeyStore } = await import(moduleUrl);
const store = openKeyStore(dir, { watch: false });
for (let i = 0; i < Number(count); i++) await store.create(label + ' ' + i);
await store.close();
`;

test('concurrent creates from separate processes lose nothing', async () => {
  const dir = freshDir();
  const store = open(dir);
  await store.create('seed'); // the directory exists before the children race
  const child = (label: string): Promise<unknown> =>
    execFileAsync(process.execPath, [...process.execArgv, '--input-type=module', '-e', CHILD_SCRIPT, STORE_MODULE, dir, label, '15'], {
      timeout: 30_000,
    });
  const parent = (async () => {
    for (let i = 0; i < 15; i++) await store.create(`parent ${i}`);
  })();
  await Promise.all([child('child-a'), child('child-b'), parent]);
  const names = (await store.list()).map((k) => k.name);
  assert.equal(names.length, 46);
  for (const label of ['child-a', 'child-b', 'parent']) {
    for (let i = 0; i < 15; i++) assert.ok(names.includes(`${label} ${i}`), `${label} ${i}`);
  }
  assert.deepEqual(readdirSync(dir), ['keys.json']);
});

test('a closed store refuses changes and authenticates nothing; close is idempotent', async () => {
  const store = openKeyStore(freshDir(), { watch: false });
  const { key } = await store.create('x');
  await store.close();
  await store.close();
  assert.equal(store.authenticate(key), null);
  await assert.rejects(store.create('y'), KeyStoreClosedError);
  await assert.rejects(store.revoke('key_0000000000000000'), KeyStoreClosedError);
  await assert.rejects(store.list(), (err: unknown) => err instanceof KeyStoreClosedError && err.code === 'key_store_closed');
});

test('update with limitChanges merges into the limits as stored at that moment, under the lock', async () => {
  const dir = freshDir();
  const cli = open(dir);
  const dashboard = open(dir);
  const { record } = await cli.create('merged', { limits: { requestsPerMinute: 60 } });
  // Another writer sets a budget after this CLI last read the key...
  await dashboard.update(record.id, { limits: { requestsPerMinute: 60, tokenBudget: { tokens: 1000, period: 'day' } } });
  // ...and a change of one limit keeps it.
  const updated = await cli.update(record.id, { limitChanges: { tokensPerMinute: 5000, requestsPerMinute: null } });
  assert.deepEqual(updated.limits, { requestsPerMinute: null, tokensPerMinute: 5000, concurrentRequests: null, tokenBudget: { tokens: 1000, period: 'day' } });
  await assert.rejects(cli.update(record.id, { limits: null, limitChanges: {} }), { name: 'InvalidKeySettingError', param: 'limits' });
  await assert.rejects(cli.update(record.id, { limitChanges: { requestsPerMinutes: 5 } }), { name: 'InvalidKeySettingError', param: 'limits.requestsPerMinutes' });
  await assert.rejects(cli.update(record.id, { limitChanges: 'fast' }), { name: 'InvalidKeySettingError', param: 'limits' });
});
