// The server side of the key store: seeing CLI changes without a restart, and
// recording last use in its own file. (CRUD, locking and corruption: key-store.test.ts.)
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { generateApiKey } from '../../src/keys/api-key.ts';
import { KeyFileInvalidError } from '../../src/keys/errors.ts';
import { openKeyStore, type KeyStoreOptions } from '../../src/state/file-key-store.ts';
import type { KeyStore } from '../../src/state/key-store-port.ts';
import { freshDir, freshPath, tempDir } from '../support/temp-dir.ts';
import { eventually } from '../support/eventually.ts';

const root = tempDir('reload');

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

test('a server store sees a CLI create and revoke once the reload interval has passed', async () => {
  const dir = freshPath(root, 'data');
  const { clock, advance } = manualClock();
  const server = open(dir, { clock, reloadIntervalMs: 1000 });
  const cli = open(dir);

  const { key, record } = await cli.create('from the cli');
  assert.equal(server.authenticate(key), null, 'not yet: the interval has not passed');
  advance(999);
  assert.equal(server.authenticate(key), null);
  advance(1);
  assert.deepEqual(server.authenticate(key), record);

  await cli.revoke(record.id);
  advance(500);
  assert.deepEqual(server.authenticate(key), record, 'still active inside the interval');
  advance(500);
  assert.equal(server.authenticate(key), null, 'refused at most reloadIntervalMs after the revoke');
});

test('with watching on, a change is seen at once, before the interval ends', async () => {
  const dir = freshPath(root, 'data');
  const server = open(dir, { watch: true, reloadIntervalMs: 3_600_000 });
  const cli = open(dir);
  const { key, record } = await cli.create('watched');
  await eventually(() => server.authenticate(key) !== null, 'the watcher to report the create');
  assert.deepEqual(server.authenticate(key), record);
  await cli.revoke(record.id);
  await eventually(() => server.authenticate(key) === null, 'the watcher to report the revoke');
});

test('a reload that finds a broken file keeps the last good keys and reports once per broken version', async () => {
  const dir = freshPath(root, 'data');
  const { clock, advance } = manualClock();
  const errors: Error[] = [];
  const server = open(dir, { clock, reloadIntervalMs: 1000, onError: (e) => errors.push(e) });
  const cli = open(dir);
  const { key, record } = await cli.create('survivor');
  advance(1000);
  assert.deepEqual(server.authenticate(key), record);

  const keysPath = path.join(dir, 'keys.json');
  writeFileSync(keysPath, '{"version":1,"keys":[');
  advance(1000);
  // Malformed keys are refused before any disk access: no reload, no report.
  assert.equal(server.authenticate('not-a-key'), null);
  assert.equal(errors.length, 0);
  assert.deepEqual(server.authenticate(key), record, 'the last good index is kept');
  assert.equal(errors.length, 1);
  assert.ok(errors[0] instanceof KeyFileInvalidError);
  assert.equal((errors[0] as KeyFileInvalidError).path, keysPath);
  advance(1000);
  assert.deepEqual(server.authenticate(key), record);
  assert.equal(errors.length, 1, 'the same broken file is reported once');

  writeFileSync(keysPath, '{"version":1,"keys":[]}\n');
  advance(1000);
  assert.equal(server.authenticate(key), null, 'the repaired file is loaded');
  assert.equal(errors.length, 1);
  assert.equal(readFileSync(keysPath, 'utf8'), '{"version":1,"keys":[]}\n', 'the server never writes keys.json');
});

test('a deleted keys.json means no keys after the next reload', async () => {
  const dir = freshPath(root, 'data');
  const { clock, advance } = manualClock();
  const server = open(dir, { clock });
  const { key } = await open(dir).create('gone');
  advance(1000);
  assert.notEqual(server.authenticate(key), null);
  renameSync(path.join(dir, 'keys.json'), path.join(dir, 'keys.json.bak'));
  advance(1000);
  assert.equal(server.authenticate(key), null);
});

test('a clock that jumps backwards triggers a check instead of freezing reloads', async () => {
  const dir = freshPath(root, 'data');
  const { clock, advance } = manualClock();
  const server = open(dir, { clock });
  const { key } = await open(dir).create('time travel');
  advance(-60_000);
  assert.notEqual(server.authenticate(key), null);
});

test('touch records last use in memory; list merges it; a flush writes only keys-last-used.json', async () => {
  const dir = freshPath(root, 'data');
  const { clock, advance } = manualClock();
  const cli = open(dir, { clock });
  const used = await cli.create('used');
  await cli.create('idle');
  const keysBefore = statSync(path.join(dir, 'keys.json'));
  const server = open(dir, { clock, lastUsedFlushMs: 3_600_000 });

  advance(5_000);
  server.touch(used.record.id);
  server.touch('key_0000000000000000'); // unknown ids are ignored
  assert.deepEqual(
    (await server.list()).map((k) => [k.name, k.lastUsedAt]),
    [
      ['used', '2025-01-31T12:00:05.000Z'],
      ['idle', null],
    ],
  );
  assert.deepEqual(await cli.list().then((l) => l.map((k) => k.lastUsedAt)), [null, null], 'not flushed yet');

  await server.flushLastUsed();
  const lastUsedPath = path.join(dir, 'keys-last-used.json');
  assert.equal(
    readFileSync(lastUsedPath, 'utf8'),
    `{\n  "version": 1,\n  "lastUsed": {\n    "${used.record.id}": "2025-01-31T12:00:05.000Z"\n  }\n}\n`,
  );
  assert.equal(statSync(lastUsedPath).mode & 0o777, 0o600);
  assert.deepEqual(await cli.list().then((l) => l.map((k) => k.lastUsedAt)), ['2025-01-31T12:00:05.000Z', null]);
  const keysAfter = statSync(path.join(dir, 'keys.json'));
  assert.deepEqual([keysAfter.ino, keysAfter.mtimeMs], [keysBefore.ino, keysBefore.mtimeMs], 'keys.json untouched');
  assert.deepEqual(readdirSync(dir).sort(), ['keys-last-used.json', 'keys.json']);
  const flushedIno = statSync(lastUsedPath).ino;
  await server.flushLastUsed(); // nothing pending: no write
  assert.equal(statSync(lastUsedPath).ino, flushedIno);
});

test('flushes from two servers merge, keeping the later time per key', async () => {
  const dir = freshPath(root, 'data');
  const a = manualClock();
  const b = manualClock();
  const cli = open(dir);
  const one = await cli.create('one');
  const two = await cli.create('two');
  const serverA = open(dir, { clock: a.clock, lastUsedFlushMs: 3_600_000 });
  const serverB = open(dir, { clock: b.clock, lastUsedFlushMs: 3_600_000 });
  a.advance(10_000);
  serverA.touch(one.record.id);
  serverA.touch(two.record.id);
  b.advance(20_000);
  serverB.touch(one.record.id);
  await serverB.flushLastUsed();
  await serverA.flushLastUsed();
  assert.deepEqual(
    (await cli.list()).map((k) => k.lastUsedAt),
    ['2025-01-31T12:00:20.000Z', '2025-01-31T12:00:10.000Z'],
  );
});

test('last use is flushed by itself after lastUsedFlushMs, and by close()', async () => {
  const dir = freshPath(root, 'data');
  const cli = open(dir);
  const { record } = await cli.create('timed');
  const lastUsedPath = path.join(dir, 'keys-last-used.json');

  const server = open(dir, { lastUsedFlushMs: 20 });
  server.touch(record.id);
  await eventually(() => readdirSync(dir).includes('keys-last-used.json'), 'the debounced flush');
  assert.notEqual((await cli.list())[0]?.lastUsedAt, null);

  rmSync(lastUsedPath);
  const closing = openKeyStore(dir, { watch: false, lastUsedFlushMs: 3_600_000 });
  closing.touch(record.id);
  await closing.close();
  assert.match(readFileSync(lastUsedPath, 'utf8'), new RegExp(`"${record.id}": "\\d{4}-\\d\\d-\\d\\dT`));
  closing.touch(record.id); // after close: ignored
});

test('a corrupt keys-last-used.json is reported, never overwritten, and fails list() clearly', async () => {
  const dir = freshPath(root, 'data');
  const errors: Error[] = [];
  const cli = open(dir);
  const { record } = await cli.create('x');
  const lastUsedPath = path.join(dir, 'keys-last-used.json');
  writeFileSync(lastUsedPath, 'garbage');
  const server = open(dir, { lastUsedFlushMs: 10, onError: (e) => errors.push(e) });
  server.touch(record.id);
  await eventually(() => errors.length > 0, 'the failed flush to be reported');
  assert.ok(errors[0] instanceof KeyFileInvalidError);
  assert.equal(
    errors[0].message,
    `Key store file ${lastUsedPath} is invalid: it is not valid JSON (${(errors[0] as KeyFileInvalidError).problem.slice('it is not valid JSON ('.length, -1)}). ` +
      'The file was left untouched; it only holds last-used times, so deleting it is safe.',
  );
  assert.equal(readFileSync(lastUsedPath, 'utf8'), 'garbage');
  await assert.rejects(cli.list(), (err: unknown) => err instanceof KeyFileInvalidError && err.path === lastUsedPath);

  rmSync(lastUsedPath); // the operator follows the advice; pending times survive for the next flush
  await server.flushLastUsed();
  assert.notEqual((await cli.list())[0]?.lastUsedAt, null);
});

test('authenticate refuses malformed input of any shape without throwing', () => {
  const server = open(freshPath(root, 'data'));
  for (const input of ['', 'Bearer x', 'pcl_', generateApiKey().toUpperCase(), 'x'.repeat(10_000)]) {
    assert.equal(server.authenticate(input), null);
  }
});

test('prepareReload reads keys.json without serving it; commit swaps it in', async () => {
  const dir = freshDir(root);
  const writer = openKeyStore(dir, { watch: false });
  const server = openKeyStore(dir, { watch: false, reloadIntervalMs: 3_600_000 });
  const { key } = await writer.create('later');
  const prepared = await server.prepareReload();
  assert.equal(server.authenticate(key), null, 'read, not yet served');
  prepared.commit();
  assert.equal(server.authenticate(key)?.name, 'later');
  writeFileSync(path.join(dir, 'keys.json'), '{"version":2,"keys":[');
  await assert.rejects(server.prepareReload(), { code: 'key_file_invalid' });
  assert.equal(server.authenticate(key)?.name, 'later', 'the last good keys stay');
  await writer.close();
  await server.close();
});
