// The compiled `portcullis` command as a child process: help, usage errors,
// config errors, and a server that sees keys created and revoked by the CLI
// without a restart.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';

function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return dir;
}
const MAIN = path.join(repoRoot(), 'dist', 'src', 'cli', 'main.js');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'portcullis-cli-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const baseEnv = { PATH: process.env['PATH'] ?? '', HOME: tmp };

function run(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [MAIN, ...args], { cwd: tmp, env: { ...baseEnv, ...env }, encoding: 'utf8', timeout: 20_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('help on the command and each subcommand exits 0', { skip: !existsSync(MAIN) && 'run npm run build first' }, () => {
  const top = run(['--help']);
  assert.equal(top.code, 0);
  assert.match(top.stdout, /^Usage: portcullis <command> \[options\]/);
  const serve = run(['serve', '--help']);
  assert.equal(serve.code, 0);
  assert.match(serve.stdout, /^Usage: portcullis serve /);
  const keys = run(['keys', '--help']);
  assert.equal(keys.code, 0);
  assert.match(keys.stdout, /^Usage: portcullis keys /);
  const create = run(['keys', 'create', '--help']);
  assert.equal(create.code, 0);
});

test('--version, -V and version print the package version and the Node.js version', { skip: !existsSync(MAIN) && 'build first' }, () => {
  const { version } = JSON.parse(readFileSync(path.join(path.dirname(MAIN), '../../../package.json'), 'utf8')) as { version: string };
  assert.match(version, /^\d+\.\d+\.\d+/);
  for (const flag of ['--version', '-V', 'version']) {
    assert.deepEqual(run([flag]), { code: 0, stdout: `portcullis ${version} (Node.js ${process.version})\n`, stderr: '' });
  }
});

test('usage errors exit 2 and say what is wrong', { skip: !existsSync(MAIN) && 'build first' }, () => {
  const none = run([]);
  assert.equal(none.code, 2);
  const unknown = run(['frobnicate']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^portcullis: unknown command 'frobnicate'/);
  const badFlag = run(['serve', '--bogus']);
  assert.equal(badFlag.code, 2);
  assert.match(badFlag.stderr, /--bogus/);
  const badPort = run(['serve', '--port', '99999']);
  assert.equal(badPort.code, 2);
  assert.match(badPort.stderr, /--port must be an integer from 0 to 65535/);
  const noValue = run(['keys', 'list', '--config']);
  assert.equal(noValue.code, 2);
  assert.match(noValue.stderr, /--config needs a file path/);
});

test('config errors exit 1 and name the file and setting', { skip: !existsSync(MAIN) && 'build first' }, () => {
  const missing = path.join(tmp, 'nope.json');
  const r = run(['serve', '--config', missing]);
  assert.equal(r.code, 1);
  assert.equal(r.stderr, `portcullis serve: invalid configuration: ${missing}: file not found\n`);
  const file = path.join(tmp, 'needs-key.json');
  writeFileSync(file, JSON.stringify({ providers: { up: { type: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: 'UP_KEY' } }, aliases: { a: { provider: 'up' } } }));
  const env = run(['serve', '--config', file, '--port', '0']);
  assert.equal(env.code, 1);
  assert.equal(env.stderr, `portcullis serve: invalid configuration: ${file}: providers.up.apiKeyEnv: environment variable UP_KEY is not set or empty\n`);
  const viaEnv = run(['keys', 'list'], { PORTCULLIS_CONFIG: missing });
  assert.equal(viaEnv.code, 1);
  assert.match(viaEnv.stderr, /nope\.json: file not found/);
});

function startServe(args: string[], env: Record<string, string> = {}): Promise<{ child: ChildProcess; port: number; banner: string }> {
  // Port 0 for both listeners: the suite passes beside a gateway on the default ports.
  const child = spawn(process.execPath, [MAIN, 'serve', '--port', '0', '--admin-port', '0', ...args], { cwd: tmp, env: { ...baseEnv, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let banner = '';
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${banner}`)), 15_000);
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

async function statusWithin(url: string, key: string, want: number): Promise<number> {
  let status = 0;
  // Bounded: the key store reloads at most once a second.
  for (let i = 0; i < 40; i++) {
    status = (await fetch(url, { headers: { authorization: `Bearer ${key}` } })).status;
    if (status === want) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return status;
}

test('the embedded default serves the demo provider and says how to create a key', { skip: !existsSync(MAIN) && 'build first', timeout: 30_000 }, async () => {
  const dataDir = path.join(tmp, 'embedded-data');
  const { child, banner } = await startServe([], { PORTCULLIS_DATA_DIR: dataDir });
  assert.match(banner, /aliases: service-chat, service-vision, service-auto\n/);
  assert.match(banner, /not a language model/);
  // Run as `node <path to main.js>` from tmp: the hint is what can be typed there.
  assert.ok(banner.includes(`No API keys yet. Create one with: node ${MAIN} keys create --name my-app\n`), banner);
  assert.equal(await stop(child), 0);
});

test('a running server sees keys created and revoked by the CLI, without a restart; SIGTERM exits 0', { skip: !existsSync(MAIN) && 'build first', timeout: 60_000 }, async () => {
  const config = path.join(tmp, 'gw.json');
  writeFileSync(config, JSON.stringify({ dataDir: 'shared-data', providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo' } } }));
  const { child, port } = await startServe(['--config', config]);
  try {
    const created = run(['keys', 'create', '--name', 'e2e', '--json', '--config', config]);
    assert.equal(created.code, 0, created.stderr);
    const { id, key } = JSON.parse(created.stdout) as { id: string; key: string };
    const url = `http://127.0.0.1:${port}/v1/models`;
    assert.equal(await statusWithin(url, key, 200), 200);
    const listed = run(['keys', 'list', '--json', '--config', config]);
    assert.equal(listed.code, 0);
    assert.equal(listed.stdout.includes(key), false);
    assert.deepEqual((JSON.parse(listed.stdout) as { id: string }[]).map((k) => k.id), [id]);
    const revoked = run(['keys', 'revoke', id, '--config', config]);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(await statusWithin(url, key, 401), 401);
  } finally {
    assert.equal(await stop(child), 0);
  }
});

test('the data directory: --data-dir, then PORTCULLIS_DATA_DIR, then the config, then ./data; every command says which; read-only commands never create it', { skip: !existsSync(MAIN) && 'build first' }, () => {
  const here = mkdtempSync(path.join(tmp, 'where-'));
  const inHere = (args: string[], env: Record<string, string> = {}) => {
    const r = spawnSync(process.execPath, [MAIN, ...args], { cwd: here, env: { ...baseEnv, ...env }, encoding: 'utf8', timeout: 20_000 });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  // Read-only in an empty directory: nothing is made.
  for (const sub of [['keys', 'list'], ['keys', 'usage'], ['keys', 'show', 'key_AAAAAAAAAAAAAAAA']]) {
    const r = inHere(sub);
    assert.ok(r.stderr.startsWith(`portcullis keys: data directory ${path.join(here, 'data')} (the default: ./data in the working directory)\n`), r.stderr);
    assert.equal(existsSync(path.join(here, 'data')), false, sub.join(' '));
  }
  assert.equal(inHere(['keys', 'list']).stdout, `No API keys yet. Create one with: node ${MAIN} keys create --name NAME\n`);
  const config = path.join(here, 'gw.json');
  writeFileSync(config, JSON.stringify({ dataDir: 'from-config', providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo' } } }));
  const cases: Array<[string[], Record<string, string>, string, string]> = [
    [['--config', config, 'keys', 'create', '--name', 'a'], {}, path.join(here, 'from-config'), `from ${config}`],
    [['--config', config, 'keys', 'create', '--name', 'b'], { PORTCULLIS_DATA_DIR: 'from-env' }, path.join(here, 'from-env'), 'from PORTCULLIS_DATA_DIR'],
    [['--config', config, '--data-dir', 'from-flag', 'keys', 'create', '--name', 'c'], { PORTCULLIS_DATA_DIR: 'from-env' }, path.join(here, 'from-flag'), 'from --data-dir'],
  ];
  for (const [args, env, dir, origin] of cases) {
    const r = inHere(args, env);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, `portcullis keys: data directory ${dir} (${origin})\n`);
    assert.ok(existsSync(path.join(dir, 'keys.json')), dir);
  }
  assert.deepEqual(inHere(['keys', 'list', '--data-dir']), {
    code: 2,
    stdout: '',
    stderr: inHere(['--data-dir']).stderr,
  });
  assert.match(inHere(['--data-dir']).stderr, /^portcullis: --data-dir needs a directory\n/);
});

test("the banner's hint, run exactly as printed, creates the key where the server reads keys", { skip: !existsSync(MAIN) && 'build first', timeout: 30_000 }, async () => {
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
