// The signing key is checked first: `npm run release` with no key is refused
// before any build (it compiles only the release scripts, so an earlier build
// in dist/ is left as it was), and a key ssh-keygen will not read names the
// fix: chmod 600 for a key others can read, else ssh-keygen's last word.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { signingKey } from '../../scripts/release/sign.ts';
import { repositoryRoot } from '../support/repository-root.ts';
import { tempDir } from '../support/temp-dir.ts';

const run = promisify(execFile);
const tmp = tempDir('release-key');
const env: Record<string, string> = {};
for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.toLowerCase().startsWith('npm_') && !k.startsWith('PORTCULLIS_') && k !== 'SSH_AUTH_SOCK') env[k] = v;
env['PATH'] = `${path.dirname(process.execPath)}${path.delimiter}${env['PATH'] ?? ''}`;

test('a private key readable by others is refused with the chmod that fixes it', async () => {
  const key = path.join(tmp, 'open-key');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', '', '-f', key]);
  chmodSync(key, 0o644);
  await assert.rejects(signingKey(key, env), { name: 'ReleaseError', message: `the signing key ${key} is readable by other users and ssh-keygen refuses it: chmod 600 ${key}` });
  chmodSync(key, 0o600);
  assert.equal((await signingKey(key, env)).publicKey, readFileSync(`${key}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' '));
});

test("a file that is not a key is refused with ssh-keygen's last line, not its first", async () => {
  const notKey = path.join(tmp, 'not-a-key');
  writeFileSync(notKey, 'hello\n', { mode: 0o600 });
  const message = await signingKey(notKey, env).then(
    () => 'accepted',
    (error: unknown) => (error as Error).message,
  );
  const last = await run('ssh-keygen', ['-y', '-P', '', '-f', notKey], { env }).then(
    () => 'none',
    (e: { stderr: string }) => e.stderr.trim().split('\n').at(-1)?.trim() ?? 'none',
  );
  assert.equal(message, `the signing key ${notKey} is not an OpenSSH private key ssh-keygen can read (${last}): give the private key file`);
});

test('npm run release with no key is refused before any build: dist/ is left as it was and no clone is made', async () => {
  const root = repositoryRoot();
  const clone = path.join(tmp, 'clone');
  execFileSync('git', ['clone', '-q', root, clone]);
  symlinkSync(path.join(root, 'node_modules'), path.join(clone, 'node_modules'), 'dir');
  mkdirSync(path.join(clone, 'dist'));
  writeFileSync(path.join(clone, 'dist', 'marker'), 'an earlier build\n');
  const clones = path.join(tmp, 'clones');
  mkdirSync(clones);
  const result = await run('npm', ['run', '--silent', 'release'], { cwd: clone, env: { ...env, TMPDIR: clones }, timeout: 300_000 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }),
  );
  assert.deepEqual(result, {
    code: 1,
    stdout: '',
    stderr: 'release: no signing key: give an OpenSSH private key with --key PATH or PORTCULLIS_RELEASE_KEY=PATH (make one with: ssh-keygen -t ed25519 -f release-key)\n',
  });
  // Only the release scripts were compiled; the program (dist/src) was not built.
  assert.deepEqual(readdirSync(path.join(clone, 'dist')).sort(), ['marker', 'scripts']);
  assert.deepEqual(readdirSync(path.join(clone, 'dist', 'scripts')), ['release']);
  assert.ok(existsSync(path.join(clone, 'dist', 'scripts', 'release', 'release.js')));
  // npm on Node 22 and later keeps its compile cache in the temporary folder too: only a release clone counts.
  assert.deepEqual(readdirSync(clones).filter((name) => name.startsWith('portcullis-release-')), [], 'no clone was made');
});
