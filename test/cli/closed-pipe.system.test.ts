// A reader that closes the pipe early (`portcullis keys list --json | head -c 0`):
// the command ends quietly with its own exit code, and a change it makes is
// still made and recorded. It used to die of an unhandled EPIPE with a stack
// trace. The compiled CLI as a child process whose
// stdout pipe is closed before it writes anything.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../support/temp-dir.ts';
import { portcullis } from './portcullis-in-process.ts';
import { SERVER_MAIN, skipUnlessCompiled } from './serve-process.ts';

const root = tempDir('closed-pipe');
const dataDir = path.join(root, 'data');
const env = { PATH: process.env['PATH'] ?? '', HOME: root };

/** Runs the CLI with its stdout (and, with `both`, its stderr) a pipe whose reading end is already closed. */
function withClosedPipe(args: string[], both = false): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SERVER_MAIN, ...args, '--data-dir', dataDir], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    if (both) child.stderr.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

test('keys list --json into a closed pipe: exit 0, no stack trace', { skip: skipUnlessCompiled }, async () => {
  // The key to list is made in-process: only the listing needs the closed pipe.
  const made = await portcullis(['keys', 'create', '--name', 'a', '--data-dir', dataDir], { cwd: root, env: { HOME: root } });
  assert.equal(made.code, 0, made.stderr);
  const listed = await withClosedPipe(['keys', 'list', '--json']);
  assert.deepEqual(listed, { code: 0, stderr: `portcullis keys: data directory ${dataDir} (from --data-dir)\n` });
});

test('keys create into closed stdout and stderr: the key is made and recorded, exit 0', { skip: skipUnlessCompiled }, async () => {
  const created = await withClosedPipe(['keys', 'create', '--name', 'b', '--json'], true);
  assert.deepEqual(created, { code: 0, stderr: '' });
  const names = (JSON.parse(readFileSync(path.join(dataDir, 'keys.json'), 'utf8')) as { keys: Array<{ name: string }> }).keys.map((k) => k.name);
  assert.deepEqual(names, ['a', 'b']);
  const actions = readFileSync(path.join(dataDir, 'audit.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { action: string; after: { name: string } }).after.name);
  assert.deepEqual(actions, ['a', 'b']);
});
