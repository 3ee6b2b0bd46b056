// `portcullis admin tokens create|list|revoke`, in process: output, exit codes,
// the audit records with the CLI actor, and the store it writes (the data
// directory's files through runCli; Redis in admin-tokens-command.system.test.ts).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { runAdminCommand } from '../../src/cli/admin-command.ts';
import { expiryFromFlag, runAdminTokensCommand, TOKENS_CREATE_USAGE, TOKENS_USAGE } from '../../src/cli/admin-tokens-command.ts';
import { runCli } from '../../src/cli/main.ts';
import { hashAdminToken } from '../../src/keys/admin-token.ts';
import { openFileAdminTokenStore } from '../../src/state/file-admin-token-store.ts';
import { recordingAuditTrail, type RecordingAuditTrail } from '../admin/recording-audit-trail.ts';
import { sink } from '../support/collect.ts';
import { freshPath, tempDir } from '../support/temp-dir.ts';

const NOW = Date.parse('2026-11-26T12:00:00.000Z');
const ACTOR = { kind: 'cli' as const, id: 'ops', uid: 1000, name: 'ops' };
const root = tempDir('tokens-cli');
const freshDir = (): string => freshPath(root);

async function run(args: string[], dir: string, audit: RecordingAuditTrail = recordingAuditTrail()) {
  const stdout = sink();
  const stderr = sink();
  let opened = 0;
  const code = await runAdminTokensCommand(args, {
    stdout: stdout.stream,
    stderr: stderr.stream,
    clock: () => NOW,
    actor: ACTOR,
    open: async () => {
      opened++;
      return { tokens: openFileAdminTokenStore(dir), audit, close: async () => undefined };
    },
  });
  return { code, stdout: stdout.text(), stderr: stderr.text(), events: audit.events, opened };
}

test('create prints the token once with a warning, stores its hash, and records token.create with the CLI actor', async () => {
  const dir = freshDir();
  const { code, stdout, stderr, events } = await run(['create', '--name', 'ci deploy', '--scope', 'keys', '--expires', '7d'], dir);
  assert.equal(code, 0, stderr);
  const token = /\n {2}(pca_[A-Za-z0-9_-]{43})\n/.exec(stdout)?.[1] as string;
  assert.ok(token !== undefined, stdout);
  const [record] = await openFileAdminTokenStore(dir).list();
  assert.ok(record !== undefined);
  assert.equal(record.hash, hashAdminToken(token));
  assert.equal(
    stdout,
    'Admin API token created. Copy it now: it cannot be shown again.\n\n' +
      `  ${token}\n\n` +
      `id:         ${record.id}\n` +
      'name:       ci deploy\n' +
      `prefix:     ${token.slice(0, 8)}\n` +
      'scopes:     keys\n' +
      'status:     active\n' +
      'created:    2026-11-26T12:00:00.000Z by cli:ops\n' +
      'expires:    2026-12-03T12:00:00.000Z\n' +
      '\n' +
      'Anyone holding it can read and change API keys until it expires or is revoked;\n' +
      'keep it in a secret store. Send it as "Authorization: Bearer <token>" to the admin listener.\n',
  );
  assert.equal(stderr, '');
  assert.deepEqual(events, [
    {
      actor: ACTOR,
      source: 'cli',
      action: 'token.create',
      target: record.id,
      before: null,
      after: { id: record.id, name: 'ci deploy', prefix: record.prefix, scopes: ['keys'], expiresAt: '2026-12-03T12:00:00.000Z', revokedAt: null },
    },
  ]);
  assert.equal(JSON.stringify(events).includes(token.slice(8)), false);
});

test('create --json; scopes repeated or comma-separated; expiry 30 days by default, or a date, or a time', async () => {
  const dir = freshDir();
  const json = await run(['create', '--name', 'a', '--scope', 'keys', '--scope', 'read', '--json'], dir);
  assert.equal(json.code, 0, json.stderr);
  const body = JSON.parse(json.stdout) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body), ['id', 'name', 'prefix', 'scopes', 'createdAt', 'expiresAt', 'revokedAt', 'status', 'createdBy', 'token']);
  assert.deepEqual(body['scopes'], ['read', 'keys']);
  assert.equal(body['expiresAt'], '2026-12-26T12:00:00.000Z');
  assert.equal(body['createdBy'], 'cli:ops');
  const dated = JSON.parse((await run(['create', '--name', 'b', '--scope', 'read,keys', '--expires', '2027-01-31', '--json'], dir)).stdout) as Record<string, unknown>;
  assert.deepEqual([dated['scopes'], dated['expiresAt']], [['read', 'keys'], '2027-01-31T00:00:00.000Z']);
  const timed = JSON.parse((await run(['create', '--name', 'c', '--scope', 'read', '--expires', '2027-01-31T10:00:00+02:00', '--json'], dir)).stdout) as Record<string, unknown>;
  assert.equal(timed['expiresAt'], '2027-01-31T08:00:00.000Z');
  assert.equal(expiryFromFlag('366d', NOW), new Date(NOW + 366 * 86_400_000).toISOString());
});

test('command line errors exit 2 with a hint, and nothing is stored or recorded', async () => {
  const dir = freshDir();
  const cases: Array<[string[], string]> = [
    [['create', '--scope', 'read'], "missing required option '--name NAME'"],
    [['create', '--name', 'x'], "missing required option '--scope read|keys'"],
    [['create', '--name', 'x', '--scope', 'admin'], '--scope: must be one of "read", "keys"'],
    [['create', '--name', 'x', '--scope', 'read', '--expires', '400d'], '--expires 400d: the number of days must be 1 to 366'],
    [['create', '--name', 'x', '--scope', 'read', '--expires', '2028-06-01'], '--expires 2028-06-01: is more than 366 days ahead (the longest a token may live)'],
    [['create', '--name', 'x', '--scope', 'read', '--expires', '2026-01-01'], '--expires 2026-01-01: is in the past'],
    [['create', '--name', 'x', '--scope', 'read', '--expires', 'soon'], '--expires soon: must be a number of days (30d), a date (2027-01-31, 00:00 UTC) or an ISO 8601 time with a zone (2027-01-31T00:00:00Z)'],
    [['create', '--name', '', '--scope', 'read'], '--name: it is empty'],
    [['create', '--name', 'x', '--scope', 'read', '--bogus'], "unknown option '--bogus'"],
    [['create', '--name'], "option '--name' needs a value (write --name=VALUE for a value starting with '-')"],
    [['revoke'], 'missing token ID'],
    [['revoke', 'tok_a', 'tok_b'], 'expected one token ID, got 2'],
    [['list', 'extra'], "unexpected argument 'extra'"],
  ];
  for (const [args, problem] of cases) {
    const result = await run(args, dir);
    const command = `portcullis admin tokens ${args[0]}`;
    assert.deepEqual([result.code, result.stdout, result.stderr], [2, '', `${command}: ${problem}\nRun "${command} --help" for usage.\n`], args.join(' '));
    assert.deepEqual(result.events, []);
  }
  assert.deepEqual((await run([], dir)).stderr, 'portcullis admin tokens: missing command (create, list or revoke)\nRun "portcullis admin tokens --help" for usage.\n');
  assert.equal((await run(['frob'], dir)).code, 2);
  assert.equal(existsSync(dir), false, 'nothing was made');
});

test('help never opens the store', async () => {
  const dir = freshDir();
  for (const [args, usage] of [[['--help'], TOKENS_USAGE], [['help'], TOKENS_USAGE], [['create', '--help'], TOKENS_CREATE_USAGE], [['create', '--bogus', '-h'], TOKENS_CREATE_USAGE]] as const) {
    const result = await run([...args], dir);
    assert.deepEqual([result.code, result.stdout, result.stderr, result.opened], [0, usage, '', 0]);
  }
});

test('list (table and JSON) and revoke; a second revoke and an unknown id exit 1', async () => {
  const dir = freshDir();
  assert.equal((await run(['list'], dir)).stdout, 'No admin API tokens. Create one with "portcullis admin tokens create --name NAME --scope read".\n');
  const id = (JSON.parse((await run(['create', '--name', 'reader', '--scope', 'read', '--json'], dir)).stdout) as { id: string; prefix: string }).id;
  const prefix = (await openFileAdminTokenStore(dir).list())[0]?.prefix as string;
  assert.equal(
    (await run(['list'], dir)).stdout,
    'ID                    NAME    PREFIX    SCOPES  STATUS  EXPIRES               CREATED BY\n' +
      `${id}  reader  ${prefix}  read    active  2026-12-26T12:00:00Z  cli:ops\n`,
  );
  const audit = recordingAuditTrail();
  const revoked = await run(['revoke', id], dir, audit);
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.equal(revoked.stdout, `Revoked admin API token ${id} ("reader", prefix ${prefix}).\nRunning servers refuse it from their next request.\n`);
  const fields = { id, name: 'reader', prefix, scopes: ['read'], expiresAt: '2026-12-26T12:00:00.000Z', revokedAt: null };
  assert.deepEqual(audit.events, [{ actor: ACTOR, source: 'cli', action: 'token.revoke', target: id, before: fields, after: { ...fields, revokedAt: '2026-11-26T12:00:00.000Z' } }]);
  const listed = JSON.parse((await run(['list', '--json'], dir)).stdout) as Array<{ status: string; revokedAt: string }>;
  assert.deepEqual([listed.length, listed[0]?.status, listed[0]?.revokedAt], [1, 'revoked', '2026-11-26T12:00:00.000Z']);
  const again = await run(['revoke', id], dir);
  assert.deepEqual([again.code, again.stderr], [1, `portcullis admin tokens revoke: Admin API token '${id}' was already revoked at 2026-11-26T12:00:00.000Z.\n`]);
  assert.deepEqual(again.events, []);
  const unknown = await run(['revoke', 'pca_notanid'], dir);
  assert.equal(unknown.code, 1);
  assert.equal(unknown.stderr, 'portcullis admin tokens revoke: No admin API token has that id (ids look like tok_ followed by 16 letters or digits). List them with "portcullis admin tokens list" or GET /api/tokens.\n');
});

test('a broken admin-tokens.json exits 1 naming the file', async () => {
  const dir = freshDir();
  await run(['create', '--name', 'x', '--scope', 'read'], dir);
  writeFileSync(path.join(dir, 'admin-tokens.json'), '{"version":9,"tokens":[]}');
  const result = await run(['list'], dir);
  assert.equal(result.code, 1);
  assert.equal(result.stderr, `portcullis admin tokens list: Admin token store ${path.join(path.resolve(dir), 'admin-tokens.json')} is invalid: "version" is 9, this version of portcullis reads version 1. Nothing was changed; repair it or restore it from a backup.\n`);
});

test('portcullis admin tokens through main.ts writes the data directory the config names', async () => {
  const dir = freshDir();
  const out = sink();
  const err = sink();
  const code = await runCli(['--data-dir', dir, 'admin', 'tokens', 'create', '--name', 'main', '--scope', 'read', '--json'], { stdout: out.stream, stderr: err.stream, env: {}, cwd: root });
  assert.equal(code, 0, err.text());
  const { token } = JSON.parse(out.text()) as { token: string };
  assert.equal((await openFileAdminTokenStore(dir).findByToken(token))?.name, 'main');
  assert.equal(readFileSync(path.join(dir, 'admin-tokens.json'), 'utf8').includes(token.slice(8)), false);
  // The dispatcher: `admin tokens` without a backend to open says so.
  const noBackend = sink();
  assert.equal(await runAdminCommand(['tokens', 'list'], { dataDir: '', stdin: process.stdin, stdout: sink().stream, stderr: noBackend.stream, audit: recordingAuditTrail() }), 1);
  assert.equal(noBackend.text(), 'portcullis admin tokens list: Could not open the admin token store: no data directory is configured\n');
});
