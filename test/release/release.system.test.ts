// The release as a security team checks it. Two clones of the committed HEAD,
// at different paths, built one after the other with a different time zone,
// umask (0022, 0077), locale and git settings (the user's clone has
// core.autocrlf=true, core.fileMode=false and an execute bit git ignores): one
// by `npm run release` with a throwaway key, one by the rebuild commands of
// docs/verify.md (git clone of a published repository holding the release
// tag, npm ci, npm run package). Their tarballs and SBOMs are the same bytes,
// so SHA256SUMS checks the rebuild; docs/verify.md's
// commands, run as written, print what the page says; a changed byte, a changed
// SHA256SUMS and another key's signature fail; the tarball installs and runs.
// Offline: node_modules is linked from the repository, npm runs --offline.
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { before, test } from 'node:test';
import { repositoryRoot } from '../support/repository-root.ts';
import { tempDir } from '../support/temp-dir.ts';
import { versFromEngines } from '../../scripts/release/sbom.ts';
import { fencedBlocks, linkNodeModules, manifestOf, quote, sh, shOk, type Shell } from './release-checkout.ts';

const root = repositoryRoot();
const { version, engines } = manifestOf(root);
const TGZ = `portcullis-${version}.tgz`;
const SBOM = `portcullis-${version}.cdx.json`;
const RELEASE_FILES = [TGZ, SBOM, 'SHA256SUMS', 'SHA256SUMS.sig'];
const docs = readFileSync(path.join(root, 'docs', 'verify.md'), 'utf8');
const blocks = fencedBlocks(docs);
const shBlocks = blocks.filter((b) => b.lang === 'sh').map((b) => b.body);

/** The one sh block of docs/verify.md that starts with `start`. */
function documented(start: string): string {
  const found = shBlocks.filter((b) => b.startsWith(start));
  assert.equal(found.length, 1, `docs/verify.md has one sh block starting ${JSON.stringify(start)}`);
  return found[0] as string;
}

/** The plain block of docs/verify.md right after the sh block starting `start`: the output it promises. */
function promisedOutput(start: string): string {
  const at = blocks.findIndex((b) => b.lang === 'sh' && b.body.startsWith(start));
  const next = blocks[at + 1];
  assert.ok(at >= 0 && next !== undefined && next.lang === '', `docs/verify.md shows the output of ${JSON.stringify(start)} in a plain block after it`);
  return next.body;
}

const tmp = tempDir('release');
const keys = path.join(tmp, 'keys');
const key = path.join(keys, 'release');
const otherKey = path.join(keys, 'other');
const published = path.join(tmp, 'published.git');
const cloneA = path.join(tmp, 'a', 'portcullis');
const outA = path.join(tmp, 'a', 'out-a');
// The user's directory: deeper, with a space, under another parent.
const user = path.join(tmp, 'user', 'security review', 'release');
const cloneB = path.join(user, 'portcullis-rebuild');
const rebuilt = path.join(user, 'rebuilt');

const shellA: Shell = { cwd: cloneA, umask: '0022', env: { TZ: 'UTC', LANG: 'C' } };
// The user's git settings, as a global config would give them: CRLF work trees, execute bits ignored.
const userGit = { GIT_CONFIG_COUNT: '2', GIT_CONFIG_KEY_0: 'core.autocrlf', GIT_CONFIG_VALUE_0: 'true', GIT_CONFIG_KEY_1: 'core.fileMode', GIT_CONFIG_VALUE_1: 'false' };
const shellUser: Shell = { cwd: user, umask: '0077', env: { TZ: 'Pacific/Kiritimati', LANG: 'de_DE.UTF-8', REPO: published, ...userGit } };
const shellB: Shell = { ...shellUser, cwd: cloneB };
const tool: Shell = { cwd: tmp, umask: '0022', env: { TZ: 'UTC', LANG: 'C' } };

const rebuild = documented('git clone ').split('\n').filter((line) => line !== '');
let commitTime = 0;
let released = '';
let releasedErr = '';
let rebuiltOut = '';
let rebuiltErr = '';
let tarballSha = '';

before(async () => {
  mkdirSync(keys);
  await shOk(tool, `ssh-keygen -q -t ed25519 -N '' -C '' -f ${quote(key)} && ssh-keygen -q -t ed25519 -N '' -C '' -f ${quote(otherKey)}`);
  const head = (await shOk({ ...tool, cwd: root }, 'git rev-parse HEAD')).stdout.trim();
  commitTime = Number((await shOk({ ...tool, cwd: root }, 'git log -1 --format=%ct HEAD')).stdout.trim());
  // The repository as published: the release tag on the committed HEAD.
  await shOk(tool, `git clone -q --bare ${quote(root)} ${quote(published)} && git -C ${quote(published)} tag v${version} ${head}`);
  mkdirSync(path.dirname(cloneA), { recursive: true });
  await shOk(tool, `git clone -q --branch v${version} ${quote(published)} ${quote(cloneA)}`);
  linkNodeModules(root, cloneA);
  mkdirSync(user, { recursive: true });
  assert.equal(rebuild.length, 3, `the rebuild is three lines: ${JSON.stringify(rebuild)}`);
  // One build after the other: the release in clone A, then the documented rebuild (clone, npm ci, package) in clone B.
  const a = await shOk(shellA, `npm run --silent release -- --key ${quote(key)} --out ../out-a`);
  released = a.stdout;
  releasedErr = a.stderr;
  await shOk(shellUser, rebuild[0] as string);
  // An execute bit the user's core.fileMode=false hides from git: the work tree looks clean.
  chmodSync(path.join(cloneB, 'docs', 'verify.md'), 0o755);
  assert.equal((await shOk(shellB, 'git status --porcelain')).stdout, '');
  assert.ok(readFileSync(path.join(cloneB, 'README.md'), 'utf8').includes('\r\n'), 'the user\'s clone has CRLF line ends');
  const b = await shOk(shellUser, rebuild[1] as string);
  rebuiltOut = b.stdout;
  rebuiltErr = b.stderr;
  for (const file of RELEASE_FILES) copyFileSync(path.join(outA, file), path.join(user, file));
  // Clone A's own build, for npm's file list of the checkout.
  await shOk(shellA, 'npm run --silent build');
  tarballSha = (await shOk(tool, `sha256sum ${quote(path.join(outA, TGZ))}`)).stdout.split(' ')[0] as string;
});

test('npm run release prints the tarball and its SHA-256, the files it wrote, and the allowed_signers line of the key', async () => {
  const publicKey = readFileSync(`${key}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
  assert.equal(
    released,
    `${tarballSha}  ../out-a/${TGZ}\n` +
      `wrote ../out-a/${SBOM}, ../out-a/SHA256SUMS, ../out-a/SHA256SUMS.sig (namespace portcullis-release)\n` +
      'the allowed_signers line to publish where users already trust you (not beside the tarball):\n' +
      `release@portcullis namespaces="portcullis-release" ${publicKey}\n`,
  );
  assert.equal(releasedErr, `release: release time ${commitTime} (the commit's time)\n`);
  assert.ok(!released.includes('PRIVATE KEY') && !released.includes(readFileSync(key, 'utf8').split('\n')[1] as string), 'no key material');
});

test('two clones at different paths, times, time zones, umasks, locales and git settings give the same tarball and SBOM', async () => {
  for (const file of [TGZ, SBOM]) {
    assert.ok(readFileSync(path.join(outA, file)).equals(readFileSync(path.join(rebuilt, file))), `${file} differs between the release and the documented rebuild`);
  }
  const sbomSha = (await shOk(tool, `sha256sum ${quote(path.join(outA, SBOM))}`)).stdout.split(' ')[0] as string;
  // npm ci's own lines come first; npm run package prints the two files and their SHA-256.
  assert.ok(rebuiltOut.endsWith(`\n${tarballSha}  ../rebuilt/${TGZ}\n${sbomSha}  ../rebuilt/${SBOM}\n`), rebuiltOut);
  assert.ok(rebuiltErr.endsWith(`package: release time ${commitTime} (the commit's time)\n`), rebuiltErr);
  assert.equal(readFileSync(path.join(outA, 'SHA256SUMS'), 'utf8').split('\n').filter((l) => l.endsWith(`  ${TGZ}`)).join(), `${tarballSha}  ${TGZ}`);
});

test("the tarball: npm's file list under package/, sorted bytewise, owners 0, modes 0644 or 0755, the commit's time, a fixed gzip header, no build path", async () => {
  const listing = JSON.parse((await shOk(shellA, 'npm pack --dry-run --json --ignore-scripts')).stdout) as Array<{ files: Array<{ path: string }> }>;
  const npmFiles = (listing[0]?.files ?? []).map((f) => f.path).sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
  assert.ok(npmFiles.includes('dist/src/cli/main.js') && npmFiles.includes('docs/verify.md') && npmFiles.includes('package.json'));
  const tracked = (await shOk(shellA, 'git ls-files -s')).stdout.split('\n');
  const executable = new Set(['dist/src/cli/main.js', ...tracked.filter((l) => l.startsWith('100755 ')).map((l) => l.split('\t')[1] as string)]);
  const table = (await shOk(tool, `tar --numeric-owner -tvzf ${quote(path.join(outA, TGZ))}`)).stdout.trimEnd().split('\n');
  const when = new Date(commitTime * 1000).toISOString().slice(0, 16).replace('T', ' ');
  const paths: string[] = [];
  for (const line of table) {
    const match = /^(\S+) 0\/0 +\d+ (\d{4}-\d\d-\d\d \d\d:\d\d) (.+)$/.exec(line);
    assert.ok(match, `a regular file owned by 0/0: ${line}`);
    const file = (match[3] as string).replace(/^package\//, '');
    paths.push(file);
    assert.equal(match[1], executable.has(file) ? '-rwxr-xr-x' : '-rw-r--r--', file);
    assert.equal(match[2], when, file);
  }
  assert.deepEqual(paths, npmFiles);
  assert.ok(table.every((line) => / package\//.test(line)));
  assert.equal(readFileSync(path.join(outA, TGZ)).subarray(0, 10).toString('hex'), '1f8b08000000000002ff');
  const unpacked = path.join(tmp, 'unpacked');
  mkdirSync(unpacked);
  await shOk(tool, `tar -xzf ${quote(path.join(outA, TGZ))} -C ${quote(unpacked)}`);
  // The clones' folder and the repository's own path; not the repository's parent, which may be /tmp itself.
  const grep = await sh(tool, `grep -rlF -e ${quote(tmp)} -e ${quote(root)} ${quote(unpacked)}`);
  assert.deepEqual([grep.code, grep.stdout], [1, ''], 'no file holds a build path');
});

test("docs/verify.md's commands, as written, verify the signature, the checksums, the rebuild, and print the SBOM", async () => {
  // The one substitution: "your allowed_signers" is the line the release printed.
  const line = released.trimEnd().split('\n').at(-1) as string;
  writeFileSync(path.join(user, 'allowed_signers'), `${line}\n`);
  const fingerprint = (await shOk(tool, `ssh-keygen -lf ${quote(`${key}.pub`)}`)).stdout.split(' ')[1];
  const verify = await sh(shellUser, documented('ssh-keygen -Y verify'));
  assert.deepEqual([verify.code, verify.stdout], [0, `Good "portcullis-release" signature for release@portcullis with ED25519 key ${fingerprint}\n`]);
  const sums = await sh(shellUser, documented('sha256sum -c SHA256SUMS'));
  assert.deepEqual([sums.code, sums.stdout], [0, `${SBOM}: OK\n${TGZ}: OK\n`]);
  assert.equal(promisedOutput('sha256sum -c SHA256SUMS'), sums.stdout);
  const compared = await sh(shellUser, rebuild[2] as string);
  assert.deepEqual([compared.code, compared.stdout], [0, `${SBOM}: OK\n${TGZ}: OK\n`]);
  // A rebuild that lacks a file fails: no --ignore-missing.
  const partial = path.join(user, 'rebuilt-partial');
  mkdirSync(partial);
  copyFileSync(path.join(rebuilt, TGZ), path.join(partial, TGZ));
  const missing = await sh({ ...shellUser, cwd: partial }, (rebuild[2] as string).replace('cd rebuilt && ', ''));
  assert.deepEqual([missing.code, missing.stdout], [1, `${SBOM}: FAILED open or read\n${TGZ}: OK\n`]);
  const read = await sh(shellUser, documented('node -e'));
  assert.deepEqual([read.code, read.stderr], [0, '']);
  const head = (await shOk({ ...tool, cwd: cloneA }, 'git rev-parse HEAD')).stdout.trim();
  assert.equal(
    read.stdout,
    promisedOutput('node -e')
      .replace("<the tarball's SHA-256, as in SHA256SUMS>", tarballSha)
      .replace('<the commit id>', head)
      .replace('<the release time>', String(commitTime)),
  );
  assert.ok(read.stdout.includes(versFromEngines(engines.node)), 'the Node.js range is the one in package.json');
  assert.equal(documented('npm run release'), 'npm run release -- --key ~/.ssh/portcullis-release\n');
  assert.ok(docs.includes(`\`${TGZ}\``) && docs.includes(`--branch v${version} `), `docs/verify.md names version ${version}`);
});

test('a changed tarball byte fails the checksums; a changed SHA256SUMS and another key fail the signature', async () => {
  const copy = path.join(tmp, 'tampered');
  mkdirSync(copy);
  for (const file of [...RELEASE_FILES, 'allowed_signers']) copyFileSync(path.join(user, file), path.join(copy, file));
  const here: Shell = { ...shellUser, cwd: copy };
  const tarball = readFileSync(path.join(copy, TGZ));
  const middle = tarball.length >> 1;
  tarball[middle] = (tarball[middle] as number) ^ 0x01;
  writeFileSync(path.join(copy, TGZ), tarball);
  const sums = await sh(here, documented('sha256sum -c SHA256SUMS'));
  assert.deepEqual([sums.code, sums.stdout, sums.stderr], [1, `${SBOM}: OK\n${TGZ}: FAILED\n`, 'sha256sum: WARNING: 1 computed checksum did NOT match\n']);
  const verifyCommand = documented('ssh-keygen -Y verify');
  writeFileSync(path.join(copy, 'SHA256SUMS'), readFileSync(path.join(copy, 'SHA256SUMS'), 'utf8').replace(tarballSha, '0'.repeat(64)));
  const changed = await sh(here, verifyCommand);
  assert.deepEqual([changed.code, changed.stdout], [255, 'Could not verify signature.\n']);
  assert.match(changed.stderr, /^Signature verification failed: incorrect signature\r?\n/);
  copyFileSync(path.join(user, 'SHA256SUMS'), path.join(copy, 'SHA256SUMS'));
  await shOk(here, `rm SHA256SUMS.sig && ssh-keygen -q -Y sign -n portcullis-release -f ${quote(otherKey)} SHA256SUMS`);
  const other = await sh(here, verifyCommand);
  assert.deepEqual([other.code, other.stdout, other.stderr], [255, 'Could not verify signature.\n', '']);
});

test('the SBOM is valid CycloneDX 1.6 by the official schema, and npm sbom agrees there is no runtime dependency', async () => {
  const require = createRequire(import.meta.url);
  const { Ajv } = require('ajv') as typeof import('ajv');
  const addFormats = require('ajv-formats') as (ajv: InstanceType<typeof Ajv>) => void;
  const schemas = path.join(path.dirname(require.resolve('@cyclonedx/cyclonedx-library/package.json')), 'res', 'schema');
  const load = (file: string): Record<string, unknown> => JSON.parse(readFileSync(path.join(schemas, file), 'utf8')) as Record<string, unknown>;
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  // Formats of JSON Schema 2019 that ajv-formats leaves out: checked as the WHATWG URL parser and RFC 6531 see them, roughly.
  ajv.addFormat('iri-reference', (value: string) => URL.canParse(value, 'https://base.invalid/'));
  ajv.addFormat('idn-email', /^[^\s@]+@[^\s@]+$/u);
  // The bom schema names its neighbours by their file names.
  for (const file of ['spdx.SNAPSHOT.schema.json', 'jsf-0.82.SNAPSHOT.schema.json', 'cryptography-defs.SNAPSHOT.schema.json']) {
    ajv.addSchema({ ...load(file), $id: `http://cyclonedx.org/schema/${file}` });
  }
  const validate = ajv.compile(load('bom-1.6.SNAPSHOT.schema.json'));
  const sbom = JSON.parse(readFileSync(path.join(outA, SBOM), 'utf8')) as Record<string, unknown>;
  assert.equal(validate(sbom), true, JSON.stringify(validate.errors, null, 2));
  // The validator can fail: a licence id SPDX does not know is refused.
  const wrong = structuredClone(sbom) as { metadata: { component: { licenses: Array<{ license: { id: string } }> } } };
  (wrong.metadata.component.licenses[0] as { license: { id: string } }).license.id = 'Apache-2.0-or-whatever';
  assert.equal(validate(wrong), false);
  // From the lockfile, npm's declared graph: the clone's linked node_modules would show the build's packages as extraneous.
  const npmSbom = JSON.parse((await shOk(shellA, 'npm sbom --sbom-format cyclonedx --omit dev --package-lock-only')).stdout) as { components?: unknown[]; metadata: { component: { name: string } } };
  assert.equal(npmSbom.metadata.component.name, 'portcullis');
  assert.deepEqual(npmSbom.components ?? [], [], 'npm lists no runtime dependency');
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
  for (const kind of ['dependencies', 'optionalDependencies', 'peerDependencies', 'bundleDependencies']) assert.equal(manifest[kind], undefined, kind);
  assert.deepEqual((sbom as { components: Array<{ type: string }> }).components.map((c) => c.type), ['platform']);
});

test('npm install of the release tarball into a prefix gives a portcullis that runs from another directory', async () => {
  const prefix = path.join(tmp, 'prefix');
  const elsewhere = path.join(tmp, 'elsewhere');
  mkdirSync(elsewhere);
  const at: Shell = { ...tool, cwd: elsewhere };
  await shOk(at, `npm install --global --prefix ${quote(prefix)} --cache ${quote(path.join(tmp, 'npm-cache'))} --loglevel=error ${quote(path.join(outA, TGZ))}`);
  const ran = await shOk(at, `${quote(path.join(prefix, 'bin', 'portcullis'))} --version`);
  assert.equal(ran.stdout, `portcullis ${version} (Node.js ${process.version})\n`);
});

test('release refuses: no key, a missing key, an encrypted key with no agent, --allow-dirty, a malformed SOURCE_DATE_EPOCH, a work tree with changes', async () => {
  const releaseCli = (args: string, env: Record<string, string> = {}) => sh({ ...shellA, env: { ...shellA.env, ...env } }, `node dist/scripts/release/release.js --out ../refused ${args}`);
  assert.deepEqual(await releaseCli(''), {
    code: 1,
    stdout: '',
    stderr: 'release: no signing key: give an OpenSSH private key with --key PATH or PORTCULLIS_RELEASE_KEY=PATH (make one with: ssh-keygen -t ed25519 -f release-key)\n',
  });
  const missing = path.join(keys, 'absent');
  assert.deepEqual(await releaseCli('', { PORTCULLIS_RELEASE_KEY: missing }), { code: 1, stdout: '', stderr: `release: the signing key ${missing} does not exist: fix --key or PORTCULLIS_RELEASE_KEY\n` });
  const locked = path.join(keys, 'locked');
  await shOk(tool, `ssh-keygen -q -t ed25519 -N 'a passphrase' -C '' -f ${quote(locked)}`);
  assert.deepEqual(await releaseCli(`--key ${quote(locked)}`), {
    code: 1,
    stdout: '',
    stderr: `release: the signing key ${locked} is encrypted and no ssh-agent can sign with it: run ssh-agent, ssh-add ${locked}, and keep locked.pub beside it (or use an unencrypted key on an offline machine)\n`,
  });
  assert.deepEqual(await releaseCli(`--key ${quote(key)} --allow-dirty`), {
    code: 1,
    stdout: '',
    stderr: "release: --allow-dirty is refused: a release is of a clean work tree; commit or discard the changes (npm run package packs HEAD's commit for a local try)\n",
  });
  assert.deepEqual(await releaseCli(`--key ${quote(key)}`, { SOURCE_DATE_EPOCH: '2026-01-01' }), {
    code: 1,
    stdout: '',
    stderr: 'release: SOURCE_DATE_EPOCH must be whole seconds since 1970-01-01 UTC, digits only (like 1767225600); got "2026-01-01": fix or unset it\n',
  });
  writeFileSync(path.join(cloneA, 'README.md'), `${readFileSync(path.join(cloneA, 'README.md'), 'utf8')}\nchanged\n`);
  writeFileSync(path.join(cloneA, 'docs', 'draft.md'), 'not committed\n');
  writeFileSync(path.join(cloneA, 'src', 'scratch.ts'), "export const scratch = 'left over from a local try';\n");
  assert.deepEqual(await releaseCli(`--key ${quote(key)}`), {
    code: 1,
    stdout: '',
    stderr: "release: the work tree has changes or untracked files (README.md, docs/draft.md, src/scratch.ts): a release packs HEAD's commit, and the releaser must see what is released; commit, discard or ignore them\n",
  });
});

test("npm run package of a work tree with changes packs HEAD's commit, says so, and says where the release time came from", async () => {
  // After the refusals above: README.md changed, docs/draft.md and src/scratch.ts untracked in clone A.
  assert.equal((await shOk(shellA, 'git status --porcelain --untracked-files=all')).stdout, ' M README.md\n?? docs/draft.md\n?? src/scratch.ts\n');
  const dated = await sh({ ...shellA, env: { ...shellA.env, SOURCE_DATE_EPOCH: '1767225600' } }, 'node dist/scripts/release/package.js --out ../dated');
  assert.equal(dated.code, 0, dated.stderr);
  assert.equal(
    dated.stderr,
    "package: the work tree's changes are NOT in the tarball (README.md, docs/draft.md, src/scratch.ts): it packs HEAD's commit; commit them to pack them\n" +
      "package: release time 1767225600 from SOURCE_DATE_EPOCH, not the commit's: publish it with the release (the SBOM records it)\n",
  );
  const tarball = path.join(tmp, 'a', 'dated', TGZ);
  assert.match(dated.stdout, new RegExp(`^[0-9a-f]{64}  \\.\\./dated/${TGZ.replaceAll('.', '\\.')}\n[0-9a-f]{64}  \\.\\./dated/${SBOM.replaceAll('.', '\\.')}\n$`));
  const listing = (await shOk(tool, `TZ=UTC tar -tvzf ${quote(tarball)}`)).stdout;
  assert.match(listing.split('\n')[0] as string, / 2026-01-01 00:00 package\/LICENSE$/);
  assert.ok(!listing.includes('draft.md') && !listing.includes('scratch'), 'the untracked files are not packed, nor built');
  assert.ok(listing.includes(' package/dist/src/cli/main.js\n'), 'the program is packed');
  const readme = (await shOk(tool, `tar -xzOf ${quote(tarball)} package/README.md`)).stdout;
  assert.equal(readme, (await shOk({ ...tool, cwd: cloneA }, 'git show HEAD:README.md')).stdout, "the commit's README.md is packed");
  await shOk(shellA, 'git checkout -- README.md && rm docs/draft.md src/scratch.ts');
});
