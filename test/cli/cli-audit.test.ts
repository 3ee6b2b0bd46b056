// The CLI's audit trail (src/cli/cli-audit.ts) when the chain cannot take a
// record: a key change, recorded ahead, is not made (exit 1); stderr says so
// in sentences with the whole event — not the gateway's JSON log line.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { runCli } from '../../src/cli/main.ts';
import { sink } from '../support/collect.ts';
import { tempDir } from '../support/temp-dir.ts';

const root = tempDir('cli-audit');

test('an append that fails: the key is not created (its record comes first), stderr names the error and gives the event', async () => {
  const dataDir = path.join(root, 'data');
  // audit.jsonl a directory: every append fails (EISDIR), whoever runs it (root too).
  mkdirSync(path.join(dataDir, 'audit.jsonl'), { recursive: true });
  const stdout = sink();
  const stderr = sink();
  const code = await runCli(['keys', 'create', '--name', 'ci', '--json', '--data-dir', dataDir], { stdout: stdout.stream, stderr: stderr.stream, env: {}, cwd: root });
  assert.equal(code, 1);
  assert.equal(stdout.text(), '');
  assert.equal(existsSync(path.join(dataDir, 'keys.json')), false);
  const lines = stderr.text().split('\n');
  const error = `cannot append to the audit log in ${dataDir}: EISDIR: illegal operation on a directory, open '${path.join(dataDir, 'audit.jsonl')}'`;
  assert.equal(lines[0], `portcullis keys: data directory ${dataDir} (from --data-dir)`);
  assert.equal(lines[1], 'portcullis: error: audit append failed; the change was not made');
  assert.equal(lines[2], '  action: key.create');
  assert.equal(lines[3], `  error: ${error}`);
  assert.match(lines[4] ?? '', /^  event: \{"action":"key.create",.*"target":"key_[0-9A-Za-z]{16}"/);
  assert.equal(lines[5], `portcullis keys create: the change was not made, because its audit record could not be written: ${error}`);
  assert.equal(lines.length, 7);
  assert.equal(lines[6], '');
});
