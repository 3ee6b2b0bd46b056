// The package as a user gets it: the release tarball of the checkout
// (scripts/release/, what `npm run package` writes), installed with
// `npm install -g` into a temporary prefix, and the installed `portcullis` run
// from another directory: --version, keys create, serve, a chat request to the
// demo provider, the dashboard, SIGTERM. The tarball carries what docs/deploy.md
// installs (units, examples, docs, licence), the library's entries with their
// declarations (.d.ts), and nothing that is not the program (no source maps, no
// sources, no tests).
//
// It packs the build the test run made (a release builds first, which would
// empty the dist/ under the other tests); `files` in package.json leaves out
// the source maps and dist/test. No network: the package has no
// dependencies, and npm runs --offline with a cache of its own.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { repositoryRoot } from '../support/repository-root.ts';
import { packRepository } from './packed-project.ts';

const run = promisify(execFile);
const root = repositoryRoot();
const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
/** Any single step (a command, a wait on the server) may take this long. */
const STEP_MS = 30_000;

// The Node.js running this test first on PATH, so the installed command's
// `#!/usr/bin/env node` runs on the line under test (.ci/with-node); npm from
// PATH. Nothing of the npm run that started the tests (npm_* variables: its
// prefix, cache, scripts) leaks into the npm commands here, nor any
// PORTCULLIS_* setting into the installed command.
const baseEnv: Record<string, string> = {};
for (const [name, value] of Object.entries(process.env)) {
  if (value !== undefined && !name.toLowerCase().startsWith('npm_') && !name.startsWith('PORTCULLIS_')) baseEnv[name] = value;
}
baseEnv['PATH'] = `${path.dirname(process.execPath)}${path.delimiter}${process.env['PATH'] ?? ''}`;

async function npmVersion(): Promise<string | undefined> {
  try {
    return (await run('npm', ['--version'], { env: baseEnv, timeout: STEP_MS })).stdout.trim();
  } catch {
    return undefined;
  }
}
const npm = await npmVersion();
const skip = npm === undefined && 'npm is not on PATH: cannot pack or install the package';
if (skip) console.log(`# packed-install: skipped, ${skip}`);

let tmp = '';
let tarball = '';
let packedFiles: string[] = [];
let installed = '';
let work = '';

before(async () => {
  if (skip) return;
  tmp = mkdtempSync(path.join(os.tmpdir(), 'portcullis-packed-'));
  work = path.join(tmp, 'elsewhere');
  mkdirSync(work);
  const npmFlags = ['--cache', path.join(tmp, 'npm-cache'), '--no-audit', '--no-fund', '--no-update-notifier', '--loglevel=error'];
  ({ tarball, files: packedFiles } = await packRepository(root, tmp));
  assert.equal(path.basename(tarball), `portcullis-${version}.tgz`);
  const prefix = path.join(tmp, 'prefix');
  await run('npm', ['install', '--global', '--prefix', prefix, '--offline', ...npmFlags, tarball], { cwd: work, env: baseEnv, timeout: STEP_MS });
  installed = path.join(prefix, 'bin', 'portcullis');
});

after(() => {
  if (tmp !== '') rmSync(tmp, { recursive: true, force: true });
});

test('the tarball holds the program, its declarations, units, examples, docs and licence, and no maps, sources or tests', { skip }, () => {
  assert.equal(path.basename(tarball), `portcullis-${version}.tgz`);
  for (const file of [
    'package.json',
    'LICENSE',
    'README.md',
    'docs/deploy.md',
    'docs/config.md',
    'deploy/portcullis.service',
    'deploy/portcullis.socket',
    'deploy/portcullis-admin.socket',
    'deploy/portcullis.sysusers',
    'deploy/examples/nginx.conf',
    'dist/src/cli/main.js',
    'dist/src/index.js',
    'dist/src/index.d.ts',
    'dist/src/testing.js',
    'dist/src/testing.d.ts',
    'docs/library.md',
    'docs/library/check-config.ts',
    'dist/dashboard/index.html',
  ]) {
    assert.ok(packedFiles.includes(file), `the tarball lacks ${file}: ${packedFiles.join(' ')}`);
  }
  const unwanted = packedFiles.filter(
    (f) =>
      f.endsWith('.map') ||
      // TypeScript: the declarations, and the examples docs/library.md links to.
      (f.endsWith('.ts') && !(f.startsWith('dist/src/') && f.endsWith('.d.ts')) && !/^docs\/library\/[^/]+\.ts$/.test(f)) ||
      /^(src|test|bench|scripts|api|dist\/test|dist\/bench|dist\/scripts|\.ci)\//.test(f) ||
      f.includes('node_modules/'),
  );
  assert.deepEqual(unwanted, [], 'files that are not the program, its declarations, units, docs or licence');
  // Each module of the program comes with its declarations, so a consumer's type check sees every type an entry names.
  // (The browser dashboard's modules are no part of the library: the test build compiles some of them for its tests.)
  const modules = packedFiles.filter((f) => f.startsWith('dist/src/') && !f.startsWith('dist/src/dashboard/') && f.endsWith('.js'));
  const undeclared = modules.filter((f) => !packedFiles.includes(f.replace(/\.js$/, '.d.ts')));
  assert.deepEqual(undeclared, [], 'modules without declarations');
});

test('the installed portcullis runs from another directory: --version, keys create, serve, a chat request, SIGTERM', { skip }, async () => {
  const env = { ...baseEnv, HOME: work, PORTCULLIS_DATA_DIR: path.join(tmp, 'data') };

  const shown = await run(installed, ['--version'], { cwd: work, env, timeout: STEP_MS });
  assert.equal(shown.stdout, `portcullis ${version} (Node.js ${process.version})\n`);

  const created = await run(installed, ['keys', 'create', '--name', 'x', '--json'], { cwd: work, env, timeout: STEP_MS });
  const { key } = JSON.parse(created.stdout) as { key: string };
  assert.match(key, /^pcl_/);

  const server = spawn(installed, ['serve', '--port', '0', '--admin-port', '0', '--host', '127.0.0.1'], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  server.stdout.setEncoding('utf8').on('data', (text: string) => (out += text));
  server.stderr.setEncoding('utf8').on('data', (text: string) => (err += text));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => server.on('exit', (code, signal) => resolve({ code, signal })));
  const output = (): string => `\nstdout:\n${out}\nstderr:\n${err}`;
  try {
    const listeningLine = (): { msg?: unknown; api?: unknown; admin?: unknown } | undefined =>
      out
        .split('\n')
        .slice(0, -1)
        .map((line) => JSON.parse(line) as { msg?: unknown; api?: unknown; admin?: unknown })
        .find((line) => line.msg === 'listening');
    const started = Date.now();
    let listening = listeningLine();
    while (listening === undefined) {
      if (server.exitCode !== null || server.signalCode !== null) assert.fail(`serve exited before listening${output()}`);
      if (Date.now() - started > STEP_MS) assert.fail(`no listening line within ${STEP_MS} ms${output()}`);
      await new Promise((r) => setTimeout(r, 20));
      listening = listeningLine();
    }
    const api = String(listening.api);
    assert.match(api, /^http:\/\/127\.0\.0\.1:\d+$/, output());
    assert.match(err, new RegExp(`listening on ${api.replace(/[.]/g, '\\.')}/v1`), output());

    const answer = await fetch(`${api}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'service-chat', messages: [{ role: 'user', content: 'Hello from the tarball' }] }),
      signal: AbortSignal.timeout(STEP_MS),
    });
    const body = (await answer.json()) as { model?: unknown; choices?: Array<{ message?: { content?: unknown } }> };
    assert.equal(answer.status, 200, JSON.stringify(body));
    assert.equal(body.model, 'service-chat');
    assert.match(String(body.choices?.[0]?.message?.content), /Hello from the tarball/);

    // The dashboard comes from the package's dist/dashboard.
    const page = await fetch(`${String(listening.admin)}/`, { signal: AbortSignal.timeout(STEP_MS) });
    assert.equal(page.status, 200, `${String(listening.admin)}/ answered ${page.status}${output()}`);
    assert.match(await page.text(), /<html/i);

    server.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([
      exited,
      new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error(`no exit within ${STEP_MS} ms of SIGTERM${output()}`)), STEP_MS))),
    ]).finally(() => clearTimeout(timer));
    assert.deepEqual(ended, { code: 0, signal: null }, output());
  } finally {
    if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
  }
});

test('unpacked as docs/deploy.md does, the unit finds its program, working directory and documentation', { skip }, async () => {
  // tar -xzf portcullis-X.tgz -C /opt/portcullis --strip-components=1, with a temporary folder for /opt/portcullis.
  const opt = path.join(tmp, 'opt-portcullis');
  mkdirSync(opt);
  await run('tar', ['-xzf', tarball, '-C', opt, '--strip-components=1', '--no-same-owner'], { env: baseEnv, timeout: STEP_MS });
  const unit = readFileSync(path.join(root, 'deploy', 'portcullis.service'), 'utf8');
  const setting = (name: string): string => {
    const value = new RegExp(`^${name}=(.*)$`, 'm').exec(unit)?.[1];
    assert.ok(value !== undefined, `deploy/portcullis.service has no ${name}=`);
    return value;
  };
  const onTarget = (file: string): string => {
    assert.ok(file === '/opt/portcullis' || file.startsWith('/opt/portcullis/'), `${file} is not under /opt/portcullis`);
    return path.join(opt, file.slice('/opt/portcullis'.length));
  };
  assert.ok(existsSync(onTarget(setting('WorkingDirectory'))), 'WorkingDirectory= exists');
  const [node, main, command] = setting('ExecStart').split(' ');
  assert.equal(node, '/usr/bin/node');
  assert.equal(command, 'serve');
  const shown = await run(process.execPath, [onTarget(main ?? ''), '--version'], { cwd: onTarget('/opt/portcullis'), env: { ...baseEnv, HOME: work }, timeout: STEP_MS });
  assert.equal(shown.stdout, `portcullis ${version} (Node.js ${process.version})\n`);
  for (const unitFile of ['portcullis.service', 'portcullis.socket', 'portcullis-admin.socket']) {
    const documentation = /^Documentation=(.*)$/m.exec(readFileSync(path.join(root, 'deploy', unitFile), 'utf8'))?.[1];
    assert.ok(documentation !== undefined, `${unitFile} has Documentation=`);
    for (const uri of documentation.split(' ')) {
      assert.match(uri, /^file:\/\/\//, `${unitFile}: ${uri}`);
      assert.ok(existsSync(onTarget(uri.slice('file://'.length))), `${unitFile}: Documentation=${uri} is in the unpacked package`);
    }
  }
});
