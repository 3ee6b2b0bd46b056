// The release as a security team checks it. Two clean clones of the committed
// HEAD, at different paths, built at different moments with a different time
// zone, umask (0022, 0077) and locale: one by `npm run release` with a
// throwaway key, one by the rebuild commands of docs/verify.md (git clone of a
// published repository holding the release tag, npm ci, npm run package).
// Their tarballs, SBOMs and SHA256SUMS are the same bytes; docs/verify.md's
// commands, run as written, print what the page says; a changed byte, a changed
// SHA256SUMS and another key's signature fail; the tarball installs and runs.
// Offline: node_modules is linked from the repository, npm runs --offline.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { before, test } from 'node:test';
import { repositoryRoot } from '../support/repository-root.ts';
import { tempDir } from '../support/temp-dir.ts';
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
const outB = path.join(user, 'out-b');

const shellA: Shell = { cwd: cloneA, umask: '0022', env: { TZ: 'UTC', LANG: 'C' } };
const shellUser: Shell = { cwd: user, umask: '0077', env: { TZ: 'Pacific/Kiritimati', LANG: 'de_DE.UTF-8', REPO: published } };
const shellB: Shell = { ...shellUser, cwd: cloneB };
const tool: Shell = { cwd: tmp, umask: '0022', env: { TZ: 'UTC', LANG: 'C' } };

const rebuild = documented('git clone ').split('\n').filter((line) => line !== '');
let commitTime = 0;
let released = '';
let rebuiltOut = '';
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
  // Both builds at once: the release in clone A, the documented rebuild (clone, npm ci, package) in clone B.
  const [a, b] = await Promise.all([
    shOk(shellA, `npm run --silent release -- --key ${quote(key)} --out ../out-a`),
    shOk(shellUser, `${rebuild[0]}\n${rebuild[1]}`),
  ]);
  released = a.stdout;
  rebuiltOut = b.stdout;
  // B's release from its own fresh build, for its SBOM and SHA256SUMS.
  await shOk(shellB, `node dist/scripts/release/release.js --key ${quote(key)} --out ../out-b`);
  for (const file of RELEASE_FILES) copyFileSync(path.join(outA, file), path.join(user, file));
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
  assert.ok(!released.includes('PRIVATE KEY') && !released.includes(readFileSync(key, 'utf8').split('\n')[1] as string), 'no key material');
});

test('two clean clones at different paths, times, time zones, umasks and locales give the same tarball, SBOM and SHA256SUMS', () => {
  for (const file of [TGZ, SBOM, 'SHA256SUMS']) {
    assert.ok(readFileSync(path.join(outA, file)).equals(readFileSync(path.join(outB, file))), `${file} differs between the clones`);
  }
  assert.ok(readFileSync(path.join(outA, TGZ)).equals(readFileSync(path.join(user, 'rebuilt', TGZ))), 'the documented rebuild gives the released tarball');
  assert.match(rebuiltOut, new RegExp(`^${tarballSha}  \\.\\./rebuilt/${TGZ.replaceAll('.', '\\.')}$`, 'm'), 'npm run package prints the SHA-256 and the file');
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
  const grep = await sh(tool, `grep -rlF -e ${quote(tmp)} -e ${quote(root)} -e ${quote(path.resolve(root, '..'))} ${quote(unpacked)}`);
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
  assert.deepEqual([compared.code, compared.stdout], [0, `${TGZ}: OK\n`]);
  const read = await sh(shellUser, documented('node -e'));
  assert.deepEqual([read.code, read.stderr], [0, '']);
  assert.equal(read.stdout, promisedOutput('node -e').replace("<the tarball's SHA-256, as in SHA256SUMS>", tarballSha));
  assert.ok(read.stdout.includes(`vers:npm/${engines.node}`), 'the Node.js range is the one in package.json');
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

test('the release refuses: no key, a missing key, an encrypted key with no agent, a malformed SOURCE_DATE_EPOCH, uncommitted changes, files not in the commit, a build holding its path', async () => {
  const releaseCli = (args: string, env: Record<string, string> = {}) => sh({ ...shellA, env: { ...shellA.env, ...env } }, `node dist/scripts/release/release.js --out ../refused ${args}`);
  const packageCli = (args: string, env: Record<string, string> = {}) => sh({ ...shellA, env: { ...shellA.env, ...env } }, `node dist/scripts/release/package.js --out ../refused ${args}`);
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
  assert.deepEqual(await packageCli('', { SOURCE_DATE_EPOCH: '2026-01-01' }), {
    code: 1,
    stdout: '',
    stderr: 'package: SOURCE_DATE_EPOCH must be whole seconds since 1970-01-01 UTC, digits only (like 1767225600); got "2026-01-01": fix or unset it\n',
  });
  const dated = await shOk(shellA, `SOURCE_DATE_EPOCH=1767225600 node dist/scripts/release/package.js --out ../dated && TZ=UTC tar -tvzf ../dated/${TGZ} | head -1`);
  assert.match(dated.stdout, / 2026-01-01 00:00 package\/LICENSE\n$/);
  writeFileSync(path.join(cloneA, 'README.md'), `${readFileSync(path.join(cloneA, 'README.md'), 'utf8')}\nchanged\n`);
  assert.deepEqual(await packageCli(''), {
    code: 1,
    stdout: '',
    stderr: "package: the work tree has uncommitted changes to tracked files (README.md): the tarball's bytes would not come from the commit; commit or discard them (--allow-dirty packs anyway, for a local try only)\n",
  });
  assert.equal((await packageCli('--allow-dirty')).code, 0, 'a local try may pack a dirty tree');
  await shOk(shellA, 'git checkout -- README.md');
  writeFileSync(path.join(cloneA, 'docs', 'draft.md'), 'not committed\n');
  assert.deepEqual(await packageCli(''), {
    code: 1,
    stdout: '',
    stderr: "package: npm would pack files that are not the commit's (docs/draft.md): commit or remove them (--allow-dirty packs anyway, for a local try only)\n",
  });
  rmSync(path.join(cloneA, 'docs', 'draft.md'));
  const main = path.join(cloneA, 'dist', 'src', 'cli', 'main.js');
  writeFileSync(main, `${readFileSync(main, 'utf8')}// built in ${cloneA}\n`);
  assert.deepEqual(await packageCli(''), {
    code: 1,
    stdout: '',
    stderr: `package: built files hold the checkout's absolute path ${cloneA} (dist/src/cli/main.js): a rebuild elsewhere would differ; make the build refer to paths relative to the package\n`,
  });
});
