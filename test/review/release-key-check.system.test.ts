// Review of the signing-key checks of `npm run release`: a missing key is
// refused before anything is built (release.ts says so), and a key ssh-keygen
// will not read names the reason, not a line of '@'.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { signingKey } from '../../scripts/release/sign.ts';
import { repositoryRoot } from '../support/repository-root.ts';
import { tempDir } from '../support/temp-dir.ts';

const run = promisify(execFile);
const tmp = tempDir('review-release-key');

test('a private key readable by others is refused naming its permissions, not "@@@@…"', async () => {
  const key = path.join(tmp, 'open-key');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', '', '-f', key]);
  chmodSync(key, 0o644);
  const message = await signingKey(key, {}).then(
    () => 'accepted',
    (error: unknown) => (error as Error).message,
  );
  assert.ok(!message.includes('@@@@'), message);
  assert.match(message, /permission/i);
});

test('npm run release with no key is refused before the build (dist/ is left as it was)', async () => {
  const root = repositoryRoot();
  const clone = path.join(tmp, 'clone');
  execFileSync('git', ['clone', '-q', root, clone]);
  symlinkSync(path.join(root, 'node_modules'), path.join(clone, 'node_modules'), 'dir');
  mkdirSync(path.join(clone, 'dist'));
  writeFileSync(path.join(clone, 'dist', 'marker'), 'an earlier build\n');
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.toLowerCase().startsWith('npm_') && !k.startsWith('PORTCULLIS_')) env[k] = v;
  env['PATH'] = `${path.dirname(process.execPath)}${path.delimiter}${env['PATH'] ?? ''}`;
  const started = Date.now();
  const result = await run('npm', ['run', '--silent', 'release'], { cwd: clone, env, timeout: 300_000 }).then(
    (r) => ({ code: 0, stderr: r.stderr }),
    (e: { code?: number; stderr?: string }) => ({ code: e.code ?? -1, stderr: e.stderr ?? '' }),
  );
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stderr, /no signing key/);
  assert.ok(existsSync(path.join(clone, 'dist', 'marker')), `refused after ${Date.now() - started} ms, but only after a full build emptied dist/ (release.ts: "the key is checked before anything is built")`);
});
