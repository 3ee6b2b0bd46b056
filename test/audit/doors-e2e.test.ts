// Issue 17, review R2: every audited action through the real chain, end to end.
// The compiled `portcullis` runs as a child process (dist/src/cli/main.js) for
// each CLI door, `portcullis serve` as a child process for the server's doors
// (logins, the admin API with a session and with a token, a SIGHUP reload),
// and `portcullis audit list --json` / `audit verify` read back what landed:
// with the data directory's file, and with Redis (one shared list that the CLI
// and the gateway both append to). No recording fake anywhere.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import type { AuditRecord } from '../../src/audit/audit-record.ts';
import { request } from '../gateway/harness.ts';
import { SERVER_MAIN, skipUnlessCompiled, spawnServe, type ServeProcess } from '../cli/serve-process.ts';
import { startRedisServer, type RedisServerHandle } from '../redis/redis-server.ts';

const root = mkdtempSync(path.join(os.tmpdir(), 'portcullis-audit-e2e-'));
const cleanup: Array<() => Promise<void> | void> = [() => rmSync(root, { recursive: true, force: true })];
after(async () => {
  for (const step of cleanup.reverse()) await step();
});

const PASSWORD = 'correct horse battery staple';
const DEMO = { providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo' } } };
const USER = os.userInfo().username;
const CLI_ACTOR = { kind: 'cli', id: USER, uid: os.userInfo().uid };

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function portcullis(dir: string, args: string[], input?: string, extraEnv: Record<string, string> = {}): Run {
  const r = spawnSync(process.execPath, [SERVER_MAIN, ...args], {
    cwd: dir,
    env: { PATH: process.env['PATH'] ?? '', HOME: dir, USER, LOGNAME: USER, ...extraEnv },
    encoding: 'utf8',
    timeout: 20_000,
    ...(input === undefined ? {} : { input }),
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function ok(run: Run, what: string): Run {
  assert.equal(run.status, 0, `${what}: exit ${run.status}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`);
  return run;
}

/** The CLI's keys and tokens doors, each once; returns every secret it printed. */
function cliDoors(dir: string, flags: string[]): { keyId: string; tokenId: string; secrets: string[] } {
  const created = JSON.parse(ok(portcullis(dir, ['keys', 'create', '--name', 'e2e', '--json', ...flags]), 'keys create').stdout) as { key: string; id: string };
  const keyId = created.id;
  ok(portcullis(dir, ['keys', 'update', keyId, '--name', 'e2e-renamed', ...flags]), 'keys update');
  const rotated = JSON.parse(ok(portcullis(dir, ['keys', 'rotate', keyId, '--json', ...flags]), 'keys rotate').stdout) as { key: string };
  ok(portcullis(dir, ['keys', 'revoke', keyId, ...flags]), 'keys revoke');
  ok(portcullis(dir, ['admin', 'set-password', ...flags], `${PASSWORD}\n${PASSWORD}\n`), 'admin set-password');
  const token = JSON.parse(ok(portcullis(dir, ['admin', 'tokens', 'create', '--name', 'ci', '--scope', 'read', '--json', ...flags]), 'tokens create').stdout) as { token: string; id: string };
  ok(portcullis(dir, ['admin', 'tokens', 'revoke', token.id, ...flags]), 'tokens revoke');
  return { keyId, tokenId: token.id, secrets: [created.key, rotated.key, token.token, PASSWORD] };
}

/** `audit list --json` oldest first, and `audit verify`'s verdict. */
function readBack(dir: string, flags: string[]): { records: AuditRecord[]; verify: Run } {
  const listed = ok(portcullis(dir, ['audit', 'list', '--json', '--limit', '1000', ...flags]), 'audit list');
  const records = listed.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as AuditRecord)
    .reverse();
  return { records, verify: portcullis(dir, ['audit', 'verify', ...flags]) };
}

const summary = (r: AuditRecord): [string, string, string, string | null] => [r.action, `${r.actor.kind}:${r.actor.id}`, r.source, r.target];
const CLI_SEQUENCE = (keyId: string, tokenId: string): Array<[string, string, string, string | null]> => [
  ['key.create', `cli:${USER}`, 'cli', keyId],
  ['key.update', `cli:${USER}`, 'cli', keyId],
  ['key.rotate', `cli:${USER}`, 'cli', keyId],
  ['key.revoke', `cli:${USER}`, 'cli', keyId],
  ['admin.password_set', `cli:${USER}`, 'cli', 'admin'],
  ['token.create', `cli:${USER}`, 'cli', tokenId],
  ['token.revoke', `cli:${USER}`, 'cli', tokenId],
];

function assertNoSecret(text: string, secrets: readonly string[], where: string): void {
  for (const secret of secrets) assert.ok(!text.includes(secret), `${where} holds a secret (${secret.slice(0, 8)}...)`);
}

describe('every door through the compiled CLI and serve, read back with audit list and verify', { skip: skipUnlessCompiled }, () => {
  test('file backend: each CLI action leaves exactly one record in audit.jsonl', () => {
    const dir = path.join(root, 'file');
    mkdirSync(dir);
    const flags = ['--data-dir', path.join(dir, 'data')];
    const { keyId, tokenId, secrets } = cliDoors(dir, flags);
    const { records, verify } = readBack(dir, flags);
    assert.deepEqual(records.map(summary), CLI_SEQUENCE(keyId, tokenId));
    assert.deepEqual(records.map((r) => r.seq), [1, 2, 3, 4, 5, 6, 7]);
    for (const r of records) assert.deepEqual(r.actor, CLI_ACTOR);
    assert.equal(verify.status, 0, verify.stderr);
    assert.equal(verify.stdout, `audit log in ${path.join(dir, 'data')} is whole: 7 records, seq 1 to 7\nhead: ${records[6]?.hash}\n`);
    for (const name of readdirSync(path.join(dir, 'data'))) assertNoSecret(readFileSync(path.join(dir, 'data', name), 'utf8'), secrets.slice(0, 3), name === 'audit.jsonl' ? 'audit.jsonl' : name);
    assertNoSecret(readFileSync(path.join(dir, 'data', 'audit.jsonl'), 'utf8'), secrets, 'audit.jsonl');
  });

  test('a key named like a key is still recorded, the name redacted (it used to leave no record)', () => {
    const dir = path.join(root, 'named-like-a-key');
    mkdirSync(dir);
    const flags = ['--data-dir', path.join(dir, 'data')];
    const name = 'pcl_' + 'A'.repeat(24);
    const created = JSON.parse(ok(portcullis(dir, ['keys', 'create', '--name', name, '--json', ...flags]), 'keys create').stdout) as { id: string };
    const { records, verify } = readBack(dir, flags);
    assert.deepEqual(
      records.map((r) => [r.action, r.target, r.after?.['name'], r.detail]),
      [['key.create', created.id, '[redacted]', { redacted: ['after.name'] }]],
    );
    assert.equal(verify.status, 0, verify.stderr);
    assert.ok(!readFileSync(path.join(dir, 'data', 'audit.jsonl'), 'utf8').includes(name));
  });

  test('run with sudo: keys, set-password and tokens name the same actor, with the sudo user in the detail', () => {
    const dir = path.join(root, 'sudo');
    mkdirSync(dir);
    const flags = ['--data-dir', path.join(dir, 'data')];
    const sudo = { SUDO_USER: 'alice', SUDO_UID: '1001' };
    ok(portcullis(dir, ['keys', 'create', '--name', 'k', ...flags], undefined, sudo), 'keys create');
    ok(portcullis(dir, ['admin', 'set-password', ...flags], `${PASSWORD}\n${PASSWORD}\n`, sudo), 'admin set-password');
    const token = JSON.parse(ok(portcullis(dir, ['admin', 'tokens', 'create', '--name', 'ci', '--scope', 'read', '--json', ...flags], undefined, sudo), 'tokens create').stdout) as { id: string };
    ok(portcullis(dir, ['admin', 'tokens', 'revoke', token.id, ...flags], undefined, sudo), 'tokens revoke');
    const { records, verify } = readBack(dir, flags);
    assert.deepEqual(records.map((r) => r.action), ['key.create', 'admin.password_set', 'token.create', 'token.revoke']);
    for (const r of records) {
      assert.deepEqual([r.actor, r.source, r.detail], [{ ...CLI_ACTOR, name: 'alice' }, 'cli', { sudoUser: 'alice', sudoUid: 1001 }], r.action);
    }
    assert.equal(verify.status, 0, verify.stderr);
  });

  describe('Redis backend and a running serve: one shared chain', () => {
    let redis: RedisServerHandle;
    let server: ServeProcess;

    test('the CLI and the gateway append to the one Redis list; audit list and verify see both', async () => {
      redis = await startRedisServer();
      cleanup.push(() => redis.stop());
      const dir = path.join(root, 'redis');
      mkdirSync(dir);
      const configFile = path.join(dir, 'portcullis.json');
      const config = { dataDir: path.join(dir, 'data'), listen: { host: '127.0.0.1', port: 0 }, admin: { port: 0 }, state: { backend: 'redis', redis: { url: redis.url, keyPrefix: 'e2e:' } }, ...DEMO };
      writeFileSync(configFile, JSON.stringify(config));
      const flags = ['--config', configFile];

      const { keyId, tokenId, secrets } = cliDoors(dir, flags);
      // Nothing of the chain in the data directory: the records are in Redis.
      assert.deepEqual(readdirSync(path.join(dir, 'data')).filter((n) => n.startsWith('audit')), []);

      server = spawnServe({ args: ['--config', configFile], cwd: dir });
      cleanup.push(() => server.kill());
      const listening = await server.line((l) => l['msg'] === 'listening', 'listening');
      const admin = String(listening['admin']);
      const json = { 'content-type': 'application/json' };
      // A token named like a token: its creation and every use used to be refused by the
      // trail's secret guard, so they left no record at all; now the name is redacted.
      const TOKEN_NAME = 'pca_' + 'R'.repeat(20);

      const wrong = await request(admin, 'POST', '/api/login', { headers: json, body: JSON.stringify({ password: 'not the password' }) });
      assert.equal(wrong.status, 401, wrong.text);
      const login = await request(admin, 'POST', '/api/login', { headers: json, body: JSON.stringify({ password: PASSWORD }) });
      assert.equal(login.status, 200, login.text);
      const cookie = String(login.headers['set-cookie']).split(';')[0] as string;
      const csrf = (JSON.parse(login.text) as { csrfToken: string }).csrfToken;
      const session = { ...json, cookie, 'x-csrf-token': csrf };
      const made = await request(admin, 'POST', '/api/keys', { headers: session, body: JSON.stringify({ name: 'from-api' }) });
      assert.equal(made.status, 201, made.text);
      const apiKey = JSON.parse(made.text) as { key: string; record: { id: string } };
      const minted = await request(admin, 'POST', '/api/tokens', { headers: session, body: JSON.stringify({ name: TOKEN_NAME, scopes: ['read'], expiresAt: new Date(Date.now() + 86_400_000).toISOString() }) });
      assert.equal(minted.status, 201, minted.text);
      const token = JSON.parse(minted.text) as { token: string; record: { id: string } };
      const used = await request(admin, 'GET', '/api/keys', { headers: { authorization: `Bearer ${token.token}` } });
      assert.equal(used.status, 200, used.text);
      server.child.kill('SIGHUP');
      await server.line((l) => l['msg'] === 'audit' && l['action'] === 'config.reload', 'the reload record in the log stream');

      const { records, verify } = readBack(dir, flags);
      assert.deepEqual(records.map(summary), [
        ...CLI_SEQUENCE(keyId, tokenId),
        ['admin.login_failed', 'anonymous:-', '127.0.0.1', 'admin'],
        ['admin.login', 'password:admin', '127.0.0.1', 'admin'],
        ['key.create', 'password:admin', '127.0.0.1', apiKey.record.id],
        ['token.create', 'password:admin', '127.0.0.1', token.record.id],
        ['token.use', `token:${token.record.id}`, '127.0.0.1', token.record.id],
        ['config.reload', 'system:serve', 'signal', configFile],
      ]);
      assert.deepEqual(records.map((r) => r.seq), Array.from({ length: 13 }, (_, i) => i + 1));
      assert.deepEqual([records[10]?.after?.['name'], records[10]?.detail], ['[redacted]', { redacted: ['after.name'] }]);
      assert.deepEqual([records[11]?.actor, records[11]?.detail], [{ kind: 'token', id: token.record.id, name: '[redacted]' }, { method: 'GET', path: '/api/keys', status: 200, redacted: ['actor.name'] }]);
      assert.equal(verify.status, 0, verify.stderr);
      assert.equal(verify.stdout, `audit log in ${redis.url}/0 is whole: 13 records, seq 1 to 13\nhead: ${records[12]?.hash}\n`);
      assertNoSecret(JSON.stringify(records), [...secrets, apiKey.key, token.token, TOKEN_NAME], 'the Redis chain');

      // The gateway's log stream carries its own records (seq and hash), not the CLI's.
      const streamed = server.lines().filter((l) => l['msg'] === 'audit');
      assert.deepEqual(
        streamed.map((l) => [l['seq'], l['action'], l['hash']]),
        records.slice(7).map((r) => [r.seq, r.action, r.hash]),
      );
      assertNoSecret(server.stdout() + server.stderr(), [...secrets, apiKey.key, token.token], "the gateway's output");
    });
  });
});
