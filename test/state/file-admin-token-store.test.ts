// The admin token store in the data directory: the shared contract, then what
// only the file has (its mode, its strictness, debris from a crashed writer).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { AdminTokenFileInvalidError } from '../../src/keys/admin-token-errors.ts';
import { openFileAdminTokenStore } from '../../src/state/file-admin-token-store.ts';
import { openFileBackend } from '../../src/state/file-backend.ts';
import { runAdminTokenStoreContract } from './admin-token-store-contract.ts';
import { freshPath, memoryTempDir } from '../support/temp-dir.ts';

// The contract creates a hundred tokens, each written and synced; the syncing is not what it checks.
const root = memoryTempDir('admin-tokens');
const T0 = Date.parse('2026-11-26T12:00:00.000Z');
const input = { name: 'ci', scopes: ['read'], expiresAt: '2026-12-26T12:00:00.000Z', createdBy: 'cli:ops' };

runAdminTokenStoreContract('file', async () => {
  const dir = freshPath(root, 'data');
  return {
    open: () => openFileAdminTokenStore(dir),
    raw: async () => readdirSync(dir).map((name) => readFileSync(path.join(dir, name), 'utf8')).join('\n'),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

test('admin-tokens.json is made with mode 0600 in a 0700 data directory, and no temp file stays', async () => {
  const dir = freshPath(root, 'data');
  const store = openFileAdminTokenStore(dir);
  assert.equal(store.filePath, path.join(path.resolve(dir), 'admin-tokens.json'));
  // Nothing is made by reading.
  assert.deepEqual(await store.list(), []);
  assert.throws(() => statSync(dir));
  await store.create(input, T0);
  assert.equal(statSync(dir).mode & 0o777, 0o700);
  assert.equal(statSync(store.filePath).mode & 0o777, 0o600);
  assert.deepEqual(readdirSync(dir).sort(), ['admin-tokens.json']);
  const doc = JSON.parse(readFileSync(store.filePath, 'utf8')) as { version: number; tokens: unknown[] };
  assert.equal(doc.version, 1);
  assert.equal(doc.tokens.length, 1);
});

test('a broken file is reported, never taken as empty, never overwritten', async () => {
  const dir = freshPath(root, 'data');
  const store = openFileAdminTokenStore(dir);
  await store.create(input, T0);
  writeFileSync(store.filePath, '{"version":1,"tokens":[{}]}');
  await assert.rejects(store.list(), AdminTokenFileInvalidError);
  await assert.rejects(store.findByToken('pca_' + 'A'.repeat(43)), AdminTokenFileInvalidError);
  await assert.rejects(store.create(input, T0), AdminTokenFileInvalidError);
  assert.equal(readFileSync(store.filePath, 'utf8'), '{"version":1,"tokens":[{}]}');
});

test('a change made by another writer is read at the next call (the cache follows the file)', async () => {
  const dir = freshPath(root, 'data');
  const server = openFileAdminTokenStore(dir);
  const { token, record } = await server.create(input, T0);
  assert.equal((await server.findByToken(token))?.revokedAt, null);
  // A CLI run is another store on the same file.
  await openFileAdminTokenStore(dir).revoke(record.id, T0 + 1);
  assert.equal((await server.findByToken(token))?.revokedAt, new Date(T0 + 1).toISOString());
  // The file deleted: no tokens.
  rmSync(server.filePath);
  assert.equal(await server.findByToken(token), null);
});

test('the file backend serves the same tokens as a store on its directory', async () => {
  const dir = freshPath(root, 'data');
  const backend = openFileBackend(dir, { watch: false });
  try {
    const { token } = await backend.tokens.create(input, T0);
    assert.equal((await openFileAdminTokenStore(dir).findByToken(token))?.name, 'ci');
  } finally {
    await backend.close();
  }
});
