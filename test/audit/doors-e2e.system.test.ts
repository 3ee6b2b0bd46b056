// Every door through the real chain with Redis and a running serve: the CLI
// and the gateway append to the one shared list, `portcullis serve` is a
// child process for the server's doors (logins, the admin API with a session
// and with a token, a SIGHUP reload), and `portcullis audit list --json` /
// `audit verify` read back what landed. The compiled bin runs the commands
// whose process matters (set-password reads a piped stdin; audit prints what
// is read back); the other CLI doors run in-process, as doors-e2e.test.ts
// runs them all. No recording fake anywhere.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { request } from '../gateway/harness.ts';
import { SERVER_MAIN, skipUnlessCompiled, spawnServe, type ServeProcess } from '../cli/serve-process.ts';
import { portcullis as inProcess } from '../cli/portcullis-in-process.ts';
import { startRedisServer, type RedisServerHandle } from '../redis/redis-server.ts';
import { tempDir } from '../support/temp-dir.ts';
import { assertNoSecret, CLI_SEQUENCE, cliDoors, PASSWORD, readBack, summary, USER, type Portcullis, type Run } from './doors-e2e-fixtures.ts';

const root = tempDir('audit-e2e');
const cleanup: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const step of cleanup.reverse()) await step();
});

const DEMO = { providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo' } } };

/** The compiled bin in `dir`, as a child process. */
function compiled(dir: string, args: string[], input?: string): Run {
  const r = spawnSync(process.execPath, [SERVER_MAIN, ...args], {
    cwd: dir,
    env: { PATH: process.env['PATH'] ?? '', HOME: dir, USER, LOGNAME: USER },
    encoding: 'utf8',
    timeout: 20_000,
    ...(input === undefined ? {} : { input }),
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** set-password and audit through the compiled bin, every other command in-process. */
function portcullisIn(dir: string): Portcullis {
  return async (args, input) => {
    const throughBin = args[0] === 'audit' || (args[0] === 'admin' && args[1] === 'set-password');
    if (throughBin) return compiled(dir, args, input);
    return inProcess(args, { cwd: dir, env: { HOME: dir, USER, LOGNAME: USER }, ...(input === undefined ? {} : { input }) });
  };
}

describe('Redis backend and a running serve: one shared chain, read back with audit list and verify', { skip: skipUnlessCompiled }, () => {
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

    const portcullis = portcullisIn(dir);
    const { keyId, tokenId, secrets } = await cliDoors(portcullis, flags);
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
    server.child.kill('SIGHUP');
    await server.line((l) => l['msg'] === 'audit' && l['action'] === 'config.reload', 'the reload record in the log stream');
    // Reads are counted for their minute; the shutdown appends the count (or the minute's end, if it comes first).
    for (let i = 0; i < 3; i++) {
      const used = await request(admin, 'GET', '/api/keys', { headers: { authorization: `Bearer ${token.token}` } });
      assert.equal(used.status, 200, used.text);
    }
    server.child.kill('SIGTERM');
    assert.deepEqual(await server.bounded(server.exited, 'serve exits on SIGTERM'), { code: 0, signal: null });

    const { records, verify } = await readBack(portcullis, flags);
    assert.deepEqual(records.map(summary), [
      ...CLI_SEQUENCE(keyId, tokenId),
      ['admin.login_failed', 'anonymous:-', '127.0.0.1', 'admin'],
      ['admin.login', 'password:admin', '127.0.0.1', 'admin'],
      ['key.create', 'password:admin', '127.0.0.1', apiKey.record.id],
      ['token.create', 'password:admin', '127.0.0.1', token.record.id],
      ['config.reload', 'system:serve', 'signal', configFile],
      ...records.slice(12).map(() => ['token.use', `token:${token.record.id}`, '127.0.0.1', token.record.id]),
    ]);
    // Three reads: one counted record, two when a minute ended between them.
    const uses = records.slice(12);
    assert.ok(uses.length === 1 || uses.length === 2, `${uses.length} token.use records`);
    assert.deepEqual(records.map((r) => r.seq), Array.from({ length: records.length }, (_, i) => i + 1));
    assert.deepEqual([records[10]?.after?.['name'], records[10]?.detail], ['[redacted]', { redacted: ['after.name'] }]);
    assert.deepEqual(
      uses.map((r) => [r.actor, r.detail?.['method'], r.detail?.['route'], r.detail?.['statuses'], r.detail?.['redacted']]),
      uses.map((r) => [{ kind: 'token', id: token.record.id, name: '[redacted]' }, 'GET', '/api/keys', { 200: r.detail?.['count'] }, ['actor.name']]),
    );
    assert.equal(uses.reduce((n, r) => n + Number(r.detail?.['count']), 0), 3);
    assert.equal(verify.code, 0, verify.stderr);
    assert.equal(verify.stdout, `audit log in ${redis.url}/0 is whole: ${records.length} records, seq 1 to ${records.length}\nhead: ${records.at(-1)?.hash}\n`);
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
