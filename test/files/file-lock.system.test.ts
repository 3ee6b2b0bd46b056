// The lock file as another process sees it: a tight loop in a second process
// reading it between any two of our system calls finds whole content or no
// file, never an empty or half-written one. The lock's behaviour in one
// process is in file-lock.test.ts.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { withFileLock } from '../../src/files/file-lock.ts';
import { freshPath, tempDir } from '../support/temp-dir.ts';

const root = tempDir('lock');
function freshLockPath(): string {
  return `${freshPath(root, 'keys.json')}.lock`;
}

const FAST = { staleMs: 30_000, timeoutMs: 2_000 };

// A lock file left empty by a CLI killed between creating and writing it
// blocked every key change for staleMs (30 s). Now the content is put in place
// whole (claim file, then link).
test('the lock file never appears empty or half written: another process polling it sees whole content or nothing', async () => {
  const lockPath = freshLockPath();
  const stopPath = `${lockPath}-stop`;
  // A tight synchronous loop in another process: it reads between any two of our system calls.
  const poller = spawn(process.execPath, [
    '-e',
    `const fs = require('node:fs'); const seen = {}; const until = Date.now() + 20000; process.stdout.write('ready ');
     while (!fs.existsSync(process.argv[2]) && Date.now() < until) {
       let text; try { text = fs.readFileSync(process.argv[1], 'utf8'); } catch { continue; }
       let kind; try { kind = Object.keys(JSON.parse(text)).join(','); } catch { kind = text === '' ? '<empty>' : '<cut short>'; }
       seen[kind] = (seen[kind] ?? 0) + 1;
     }
     process.stdout.write(JSON.stringify(seen));`,
    lockPath,
    stopPath,
  ]);
  let out = '';
  const ready = new Promise((resolve) => poller.stdout.once('data', resolve));
  poller.stdout.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise((resolve) => poller.on('close', resolve));
  await ready;
  try {
    for (let i = 0; i < 300; i++) await withFileLock(lockPath, FAST, async () => undefined);
  } finally {
    writeFileSync(stopPath, '');
    await exited;
  }
  assert.ok(out.startsWith('ready '), out);
  const seen = JSON.parse(out.slice('ready '.length)) as Record<string, number>;
  assert.deepEqual(Object.keys(seen), ['pid,hostname,token,acquiredAt'], out);
  rmSync(stopPath);
  assert.deepEqual(readdirSync(root).filter((n) => n.startsWith(path.basename(lockPath))), [], 'no lock, claim or break file left');
});
