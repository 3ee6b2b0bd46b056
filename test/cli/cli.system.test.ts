// The compiled `portcullis` command as a child process, for what only a
// process shows: its exit code and streams, the banner's hint that can be
// typed as printed, and a server that sees keys created and revoked by
// another process without a restart. What each command prints and writes is
// checked in-process (cli.test.ts).
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { eventually } from '../support/eventually.ts';
import { freshDir, tempDir } from '../support/temp-dir.ts';
import { portcullis } from './portcullis-in-process.ts';
import { SERVER_MAIN as MAIN, skipUnlessCompiled as skip, WAIT_MS } from './serve-process.ts';

const tmp = tempDir('cli');
const baseEnv = { PATH: process.env['PATH'] ?? '', HOME: tmp };

function run(args: string[], env: Record<string, string> = {}, cwd = tmp) {
  const r = spawnSync(process.execPath, [MAIN, ...args], { cwd, env: { ...baseEnv, ...env }, encoding: 'utf8', timeout: 20_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('as a process: exit 2 for a usage error, 1 for a config error, 0 with stdout and stderr apart; the keys hint names main.js', { skip }, () => {
  const unknown = run(['frobnicate']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^portcullis: unknown command 'frobnicate'/);
  const missing = path.join(tmp, 'nope.json');
  assert.deepEqual(run(['serve', '--config', missing]), { code: 1, stdout: '', stderr: `portcullis serve: invalid configuration: ${missing}: file not found\n` });
  const here = freshDir(tmp);
  assert.deepEqual(run(['keys', 'list'], {}, here), {
    code: 0,
    stdout: `No API keys yet. Create one with: node ${MAIN} keys create --name NAME\n`,
    stderr: `portcullis keys: data directory ${path.join(here, 'data')} (the default: ./data in the working directory)\n`,
  });
});

function startServe(args: string[], env: Record<string, string> = {}): Promise<{ child: ChildProcess; port: number; banner: string }> {
  // Port 0 for both listeners: the suite passes beside a gateway on the default ports.
  const child = spawn(process.execPath, [MAIN, 'serve', '--port', '0', '--admin-port', '0', ...args], { cwd: tmp, env: { ...baseEnv, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let banner = '';
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${banner}`)), WAIT_MS);
    child.stderr!.on('data', (c: Buffer) => {
      banner += c.toString();
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)\/v1\n/.exec(banner);
      if (m && banner.includes('aliases:')) {
        clearTimeout(timer);
        resolve({ child, port: Number(m[1]), banner });
      }
    });
    child.stdout!.resume();
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${banner}`)));
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.on('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

/** Waits until the server answers `want` for the key: the key store reloads at most once a second. */
async function statusBecomes(url: string, key: string, want: number): Promise<number> {
  let status = 0;
  await eventually(
    async () => {
      status = (await fetch(url, { headers: { authorization: `Bearer ${key}` } })).status;
      return status === want;
    },
    `${url} to answer ${want}`,
    { everyMs: 50 },
  ).catch(() => undefined);
  return status;
}

test('the embedded default serves the demo provider and says how to create a key', { skip, timeout: 30_000 }, async () => {
  const dataDir = path.join(tmp, 'embedded-data');
  const { child, banner } = await startServe([], { PORTCULLIS_DATA_DIR: dataDir });
  assert.match(banner, /aliases: service-chat, service-vision, service-embed \(embeddings\), service-auto\n/);
  assert.match(banner, /not a language model/);
  // Run as `node <path to main.js>` from tmp: the hint is what can be typed there.
  assert.ok(banner.includes(`No API keys yet. Create one with: node ${MAIN} keys create --name my-app\n`), banner);
  assert.equal(await stop(child), 0);
});

test('a running server sees keys created and revoked by the CLI, without a restart; SIGTERM exits 0', { skip, timeout: 60_000 }, async () => {
  const config = path.join(tmp, 'gw.json');
  writeFileSync(config, JSON.stringify({ dataDir: 'shared-data', providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo' } } }));
  const { child, port } = await startServe(['--config', config]);
  try {
    const created = run(['keys', 'create', '--name', 'e2e', '--json', '--config', config]);
    assert.equal(created.code, 0, created.stderr);
    const { id, key } = JSON.parse(created.stdout) as { id: string; key: string };
    const url = `http://127.0.0.1:${port}/v1/models`;
    assert.equal(await statusBecomes(url, key, 200), 200);
    // Listing is read-only: in-process is enough; the changes come from other processes.
    const listed = await portcullis(['keys', 'list', '--json', '--config', config], { cwd: tmp, env: { HOME: tmp } });
    assert.equal(listed.code, 0);
    assert.equal(listed.stdout.includes(key), false);
    assert.deepEqual((JSON.parse(listed.stdout) as { id: string }[]).map((k) => k.id), [id]);
    const revoked = run(['keys', 'revoke', id, '--config', config]);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(await statusBecomes(url, key, 401), 401);
  } finally {
    assert.equal(await stop(child), 0);
  }
});

test("the banner's hint, run exactly as printed, creates the key where the server reads keys", { skip, timeout: 30_000 }, async () => {
  const dataDir = path.join(tmp, "hint data's dir");
  const { child, banner } = await startServe(['--data-dir', dataDir]);
  try {
    const hint = /Create one with: (.*)\n/.exec(banner)?.[1];
    assert.ok(hint !== undefined, banner);
    assert.ok(hint.includes('--data-dir '), hint);
    const r = spawnSync('/bin/sh', ['-c', hint], { cwd: tmp, env: baseEnv, encoding: 'utf8', timeout: 20_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.ok(existsSync(path.join(dataDir, 'keys.json')));
  } finally {
    assert.equal(await stop(child), 0);
  }
});
