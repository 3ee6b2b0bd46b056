// A key's guard on the command line: repeated --guard NAME=ACTION on keys create and
// update, shown by keys show (text only when set, JSON always), stored in keys.json
// only when set, refused in the words of the flag.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { runKeysCommand } from '../../src/cli/keys-command.ts';
import { sink } from '../support/collect.ts';
import { freshPath, tempDir } from '../support/temp-dir.ts';
import { recordingAuditTrail } from '../admin/recording-audit-trail.ts';

const root = tempDir('keys-guard');
const NOW = Date.parse('2026-11-22T05:30:00.000Z');

async function keys(args: string[], dataDir: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = sink();
  const stderr = sink();
  const code = await runKeysCommand(args, { dataDir, stdout: stdout.stream, stderr: stderr.stream, clock: () => NOW, audit: recordingAuditTrail() });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

const idOf = (stdout: string): string => (/^id: +(key_\w{16})$/m.exec(stdout) as RegExpExecArray)[1] as string;
const storedKeys = (dir: string): Array<Record<string, unknown>> => (JSON.parse(readFileSync(path.join(dir, 'keys.json'), 'utf8')) as { keys: Array<Record<string, unknown>> }).keys;

test('create and update --guard: stored, shown, replaced whole, removed with none', async () => {
  const dir = freshPath(root, 'data');
  const created = await keys(['create', '--name', 'guarded', '--guard', 'secrets=block', '--guard', 'email=mask'], dir);
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stdout, /\nguard:   secrets=block, email=mask\n\nClients send it/);
  const id = idOf(created.stdout);
  assert.deepEqual(storedKeys(dir)[0]?.['guard'], { detectors: { secrets: 'block', email: 'mask' } });
  assert.match((await keys(['show', id], dir)).stdout, /\nlimits:    none\nguard:     secrets=block, email=mask\nusage:     none recorded\n$/);

  const updated = await keys(['update', id, '--guard', 'card_number=block'], dir);
  assert.equal(updated.code, 0, updated.stderr);
  assert.match(updated.stdout, /\nguard:     card_number=block\n$/);
  assert.deepEqual((JSON.parse((await keys(['show', id, '--json'], dir)).stdout) as { guard: unknown }).guard, { detectors: { card_number: 'block' } });
  // Another setting leaves the guard as it is.
  assert.match((await keys(['update', id, '--rpm', '5'], dir)).stdout, /\nlimits:    5 rpm\nguard:     card_number=block\n$/);

  const removed = await keys(['update', id, '--guard', 'none'], dir);
  assert.equal(removed.code, 0, removed.stderr);
  assert.match(removed.stdout, /\nlimits:    5 rpm\n$/);
  assert.equal('guard' in (storedKeys(dir)[0] ?? {}), false);
  assert.equal((JSON.parse((await keys(['show', id, '--json'], dir)).stdout) as { guard: unknown }).guard, null);
});

test('a bad --guard: exit 2 naming the flag and the detector, nothing stored', async () => {
  const dir = freshPath(root, 'data');
  const hint = 'Run "portcullis keys create --help" for usage.\n';
  const cases: [string[], string][] = [
    [['--guard', 'emails=block'], '--guard emails: unknown detector; use a group (secrets, personal) or one of private_key, aws_access_key, github_token, slack_token, stripe_key, google_api_key, openai_key, anthropic_key, jwt, portcullis_key, secret_assignment, card_number, iban, email, phone, us_ssn'],
    [['--guard', 'email=hide'], '--guard email: must be one of "off", "log", "mask", "block"'],
    [['--guard', 'email'], '--guard must look like DETECTOR=ACTION (secrets=block, email=mask), or be "none"; got "email"'],
    [['--guard', 'none', '--guard', 'jwt=log'], "--guard none removes the key's guard; give it alone"],
    // A name that is a property of every object is a name like any other: not a detector.
    [['--guard', '__proto__=block'], '--guard __proto__: unknown detector; use a group (secrets, personal) or one of private_key, aws_access_key, github_token, slack_token, stripe_key, google_api_key, openai_key, anthropic_key, jwt, portcullis_key, secret_assignment, card_number, iban, email, phone, us_ssn'],
  ];
  for (const [flags, message] of cases) {
    assert.deepEqual(await keys(['create', '--name', 'x', ...flags], dir), { code: 2, stdout: '', stderr: `portcullis keys create: ${message}\n${hint}` }, flags.join(' '));
  }
});
