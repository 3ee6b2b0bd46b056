// The CLI's audit trail (src/cli/cli-audit.ts) when the chain cannot take a
// record: the change stands (exit 0), and stderr says so in sentences with the
// whole event to keep — not the gateway's JSON log line. Review R2.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { runCli } from '../../src/cli/main.ts';
import { sink } from '../support/collect.ts';
import { tempDir } from '../support/temp-dir.ts';

const root = tempDir('cli-audit');

test('an append that fails: the key is created, stderr names the error, gives the event and says it is NOT recorded', async () => {
  const dataDir = path.join(root, 'data');
  // audit.jsonl a directory: every append fails (EISDIR), whoever runs it (root too).
  mkdirSync(path.join(dataDir, 'audit.jsonl'), { recursive: true });
  const stdout = sink();
  const stderr = sink();
  const code = await runCli(['keys', 'create', '--name', 'ci', '--json', '--data-dir', dataDir], { stdout: stdout.stream, stderr: stderr.stream, env: {}, cwd: root });
  assert.equal(code, 0);
  const created = JSON.parse(stdout.text()) as { id: string };
  assert.deepEqual((JSON.parse(readFileSync(path.join(dataDir, 'keys.json'), 'utf8')) as { keys: Array<{ id: string }> }).keys.map((k) => k.id), [created.id]);
  const lines = stderr.text().split('\n');
  assert.equal(lines[0], `portcullis keys: data directory ${dataDir} (from --data-dir)`);
  assert.equal(lines[1], 'portcullis: error: audit append failed; the event is only in this log line');
  assert.equal(lines[2], '  action: key.create');
  assert.equal(lines[3], `  error: cannot append to the audit log in ${dataDir}: EISDIR: illegal operation on a directory, open '${path.join(dataDir, 'audit.jsonl')}'`);
  assert.match(lines[4] ?? '', new RegExp(`^  event: \\{"action":"key.create",.*"target":"${created.id}"`));
  assert.equal(lines[5], 'portcullis: this change is made, but it is NOT in the audit log: keep the event above (docs/audit.md, "When a record cannot be appended")');
  assert.equal(lines.length, 7);
  assert.equal(lines[6], '');
});
