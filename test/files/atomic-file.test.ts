import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { isTempFileOf, removeStaleTempFiles, syncDirectory, writeFileAtomic } from '../../src/files/atomic-file.ts';
import { FileIoError } from '../../src/files/errors.ts';
import { freshDir, tempDir } from '../support/temp-dir.ts';

const root = tempDir('atomic');

test('writeFileAtomic creates and replaces the file with mode 0600 and leaves no temp file', async () => {
  const dir = freshDir(root);
  const file = path.join(dir, 'keys.json');
  await writeFileAtomic(file, 'first\n');
  assert.equal(readFileSync(file, 'utf8'), 'first\n');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const firstInode = statSync(file).ino;
  await writeFileAtomic(file, 'second\n');
  assert.equal(readFileSync(file, 'utf8'), 'second\n');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.notEqual(statSync(file).ino, firstInode, 'replaced by rename, not rewritten in place');
  assert.deepEqual(readdirSync(dir), ['keys.json']);
});

test('writeFileAtomic keeps mode 0600 even under a permissive umask', async () => {
  const dir = freshDir(root);
  const file = path.join(dir, 'keys.json');
  const previous = process.umask(0);
  try {
    await writeFileAtomic(file, 'x');
  } finally {
    process.umask(previous);
  }
  assert.equal(statSync(file).mode & 0o777, 0o600);
});

test('a failed rename leaves the target alone and removes the temp file', async () => {
  const dir = freshDir(root);
  const target = path.join(dir, 'keys.json');
  mkdirSync(target); // renaming a file over a directory fails
  writeFileSync(path.join(target, 'inside'), 'kept');
  await assert.rejects(
    writeFileAtomic(target, 'new'),
    (err: unknown) => err instanceof FileIoError && err.code === 'file_io_error' && err.path === target && err.message.startsWith(`Could not write ${target}: `),
  );
  assert.deepEqual(readdirSync(dir), ['keys.json']);
  assert.equal(readFileSync(path.join(target, 'inside'), 'utf8'), 'kept');
});

test('writing into a missing directory is a FileIoError naming the file', async () => {
  const file = path.join(root, 'missing-dir', 'keys.json');
  await assert.rejects(
    writeFileAtomic(file, 'x'),
    (err: unknown) =>
      err instanceof FileIoError &&
      err.path === file &&
      err.message.startsWith(`Could not create a temporary file next to ${file}: ENOENT`) &&
      (err.cause as NodeJS.ErrnoException).code === 'ENOENT',
  );
});

test('syncDirectory of a missing directory is a FileIoError', async () => {
  const dir = path.join(root, 'nope');
  await assert.rejects(syncDirectory(dir), (err: unknown) => err instanceof FileIoError && err.path === dir);
});

test('isTempFileOf recognises only temp files of that target', () => {
  assert.equal(isTempFileOf('keys.json', 'keys.json.123.0a1b2c3d4e5f.tmp'), true);
  assert.equal(isTempFileOf('keys.json', 'keys.json.tmp'), false);
  assert.equal(isTempFileOf('keys.json', 'keys.json.lock'), false);
  assert.equal(isTempFileOf('keys.json', 'keys-last-used.json.1.ab.tmp'), false);
  assert.equal(isTempFileOf('keys.json', 'keys.json.lock.1.ab.stale'), false);
  assert.equal(isTempFileOf('keys-last-used.json', 'keys-last-used.json.1.ab.tmp'), true);
});

test('removeStaleTempFiles removes a crashed writer\'s temp files and nothing else', async () => {
  const dir = freshDir(root);
  for (const name of ['keys.json', 'keys.json.lock', 'keys.json.999.0a1b2c3d4e5f.tmp', 'keys.json.1.ff.tmp', 'keys-last-used.json.1.ab.tmp', 'other.tmp']) {
    writeFileSync(path.join(dir, name), 'x');
  }
  assert.deepEqual((await removeStaleTempFiles(path.join(dir, 'keys.json'))).sort(), ['keys.json.1.ff.tmp', 'keys.json.999.0a1b2c3d4e5f.tmp']);
  assert.deepEqual(readdirSync(dir).sort(), ['keys-last-used.json.1.ab.tmp', 'keys.json', 'keys.json.lock', 'other.tmp']);
  assert.deepEqual(await removeStaleTempFiles(path.join(dir, 'keys.json')), []);
});

test('removeStaleTempFiles in a missing directory is a FileIoError', async () => {
  const dir = path.join(root, 'absent');
  await assert.rejects(removeStaleTempFiles(path.join(dir, 'keys.json')), (err: unknown) => err instanceof FileIoError && err.path === dir);
});
