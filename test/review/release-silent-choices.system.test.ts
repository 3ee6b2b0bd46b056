// Review: what decides a release's bytes without the commit must be said where
// the releaser sees it. docs/verify.md tells a verifier to set SOURCE_DATE_EPOCH
// "if the release notes say one was set"; a releaser whose shell sets it (a Nix
// shell sets 315532800) must be told, and a signed release of a dirty tree
// (--allow-dirty, "for a local try only") must not look like a clean one.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, test } from 'node:test';
import { promisify } from 'node:util';
import { repositoryRoot } from '../support/repository-root.ts';
import { tempDir } from '../support/temp-dir.ts';

const run = promisify(execFile);
const tmp = tempDir('review-release-silent');
const clone = path.join(tmp, 'clone');
const key = path.join(tmp, 'key');
const env: Record<string, string> = {};
for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.toLowerCase().startsWith('npm_') && !k.startsWith('PORTCULLIS_') && k !== 'SOURCE_DATE_EPOCH') env[k] = v;
env['PATH'] = `${path.dirname(process.execPath)}${path.delimiter}${env['PATH'] ?? ''}`;
env['npm_config_offline'] = 'true';

async function cli(script: string, args: string[], extra: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  return run('node', [`dist/scripts/release/${script}`, ...args], { cwd: clone, env: { ...env, ...extra }, timeout: 300_000 }).then(
    (r) => ({ code: 0, out: r.stdout + r.stderr }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: e.code ?? -1, out: (e.stdout ?? '') + (e.stderr ?? '') }),
  );
}

before(async () => {
  const root = repositoryRoot();
  execFileSync('git', ['clone', '-q', root, clone]);
  symlinkSync(path.join(root, 'node_modules'), path.join(clone, 'node_modules'), 'dir');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', '', '-f', key]);
  await run('npm', ['run', '--silent', 'build'], { cwd: clone, env, timeout: 300_000 });
});

test('a release timed by SOURCE_DATE_EPOCH from the environment says so', async () => {
  const ran = await cli('release.js', ['--key', key, '--out', '../epoch'], { SOURCE_DATE_EPOCH: '315532800' });
  assert.equal(ran.code, 0, ran.out);
  assert.match(ran.out, /SOURCE_DATE_EPOCH/, `the releaser is not told the bytes depend on SOURCE_DATE_EPOCH=315532800, not the commit time:\n${ran.out}`);
});

test('a signed release of a dirty work tree (--allow-dirty) says it is not the commit', async () => {
  const readme = path.join(clone, 'README.md');
  writeFileSync(readme, `${readFileSync(readme, 'utf8')}\nnot committed\n`);
  const ran = await cli('release.js', ['--key', key, '--out', '../out-unclean', '--allow-dirty']);
  assert.equal(ran.code, 0, ran.out);
  assert.match(ran.out, /uncommitted|not the commit|allow-dirty|dirty (work )?tree/i, `a signed, unreproducible release with no warning:\n${ran.out}`);
});

test('in this repository, an untracked src/ file is compiled into dist/src/ and packed: npm run package does not refuse', async () => {
  execFileSync('git', ['checkout', '-q', '--', 'README.md'], { cwd: clone });
  writeFileSync(path.join(clone, 'src', 'scratch.ts'), "export const scratch = 'left over from a local try';\n");
  const ran = await run('npm', ['run', '--silent', 'package', '--', '--out', '../out-untracked'], { cwd: clone, env, timeout: 300_000 }).then(
    (r) => ({ code: 0, out: r.stdout + r.stderr }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: e.code ?? -1, out: (e.stdout ?? '') + (e.stderr ?? '') }),
  );
  const tgz = path.join(tmp, 'out-untracked', 'portcullis-0.1.0.tgz');
  const listed = existsSync(tgz) ? execFileSync('tar', ['-tzf', tgz], { encoding: 'utf8' }).split('\n').filter((l) => l.includes('scratch')) : [];
  assert.deepEqual({ code: ran.code, listed }, { code: 1, listed: [] }, ran.out);
});
