// Processes sharing one data directory's key store: two children and this
// process create keys at once, and none is lost. The file adapter in one
// process is in file-key-store.test.ts.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { openKeyStore, type FileKeyStore as KeyStore } from '../../src/state/file-key-store.ts';
import { freshPath, tempDir } from '../support/temp-dir.ts';

const root = tempDir('store');

const opened: KeyStore[] = [];
after(async () => {
  for (const store of opened) await store.close();
});

const execFileAsync = promisify(execFile);
const STORE_MODULE = new URL(`../../src/state/file-key-store${path.extname(new URL(import.meta.url).pathname)}`, import.meta.url).href;
const CHILD_SCRIPT = `
const [moduleUrl, dir, label, count] = process.argv.slice(1);
const { openKeyStore } = await import(moduleUrl);
const store = openKeyStore(dir, { watch: false });
for (let i = 0; i < Number(count); i++) await store.create(label + ' ' + i);
await store.close();
`;

test('concurrent creates from separate processes lose nothing', async () => {
  const dir = freshPath(root, 'data');
  const store = openKeyStore(dir, { watch: false });
  opened.push(store);
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
