// What goes in the tarball: modes from git's index, paths under package/, the build path inside a file; the work tree's status; and the command line.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { gzipFixed } from '../../scripts/release/gzip.ts';
import { parseReleaseArgs, releaseTimeNote, statusPaths } from '../../scripts/release/package.ts';
import { binPaths, executablePaths, filesHolding, packedMode, tarFiles } from '../../scripts/release/package-files.ts';

test('modes: 0755 for a bin or a file git records as 100755, 0644 for everything else', () => {
  const bins = binPaths({ bin: { portcullis: './dist/src/cli/main.js' } });
  assert.deepEqual([...bins], ['dist/src/cli/main.js']);
  assert.equal(packedMode({ path: 'dist/src/cli/main.js', executable: false }, bins), 0o755);
  assert.equal(packedMode({ path: 'deploy/x.sh', executable: true }, bins), 0o755);
  assert.equal(packedMode({ path: 'README.md', executable: false }, bins), 0o644);
  assert.deepEqual([...binPaths({ bin: 'cli.js' })], ['cli.js']);
  assert.deepEqual([...binPaths({})], []);
});

test("executable paths are the 100755 entries of git ls-files -s -z, whatever their names hold", () => {
  const listing = ['100644 a1 0\tREADME.md', '100755 b2 0\tdeploy/x.sh', '120000 c3 0\tlink', '100755 d4 0\tdir/with space\tand tab.sh', ''].join('\0');
  assert.deepEqual([...executablePaths(listing)], ['deploy/x.sh', 'dir/with space\tand tab.sh']);
  assert.deepEqual([...executablePaths('')], []);
});

test('entries go under package/', () => {
  const data = Buffer.from('x');
  assert.deepEqual(tarFiles([{ path: 'LICENSE', executable: false, data }], new Set()), [{ path: 'package/LICENSE', mode: 0o644, data }]);
});

test('the work tree status: every path git status --porcelain -z names, renames by both names, sorted', () => {
  const porcelain = [' M README.md', '?? src/scratch.ts', 'R  docs/new.md', 'docs/old.md', 'A  b.txt', ''].join('\0');
  assert.deepEqual(statusPaths(porcelain), ['README.md', 'b.txt', 'docs/new.md', 'docs/old.md', 'src/scratch.ts']);
  assert.deepEqual(statusPaths(''), []);
});

test('the release time note names its origin', () => {
  assert.equal(releaseTimeNote(1764400000, 'commit'), "release time 1764400000 (the commit's time)");
  assert.equal(releaseTimeNote(315532800, 'SOURCE_DATE_EPOCH'), "release time 315532800 from SOURCE_DATE_EPOCH, not the commit's: publish it with the release (the SBOM records it)");
});

test('files holding the build path are named', () => {
  const files = [
    { path: 'a.js', executable: false, data: Buffer.from('const p = "/tmp/x/portcullis/src";') },
    { path: 'b.js', executable: false, data: Buffer.from('relative only') },
  ];
  assert.deepEqual(filesHolding(files, '/tmp/x/portcullis'), ['a.js']);
});

test('gzip: mtime 0, no flags, OS 255, and the data back whole', () => {
  const gz = gzipFixed(Buffer.from('hello'));
  assert.equal(gz.subarray(0, 10).toString('hex'), '1f8b08000000000002ff');
  assert.equal(gunzipSync(gz).toString(), 'hello');
  assert.deepEqual(gzipFixed(Buffer.from('hello')), gz);
});

test('the command line: --out DIR, --key PATH for release only; an option is never taken as a path; --allow-dirty refused; anything else refused by name', () => {
  assert.deepEqual(parseReleaseArgs(['--out', 'x'], false), { out: 'x', key: undefined });
  assert.deepEqual(parseReleaseArgs(['--key', 'k', '--out', 'o'], true), { out: 'o', key: 'k' });
  assert.throws(() => parseReleaseArgs(['--key', 'k'], false), { name: 'ReleaseError', message: 'unknown argument "--key": the options are --out DIR' });
  assert.throws(() => parseReleaseArgs(['--out'], true), { name: 'ReleaseError', message: '--out needs a path after it' });
  assert.throws(() => parseReleaseArgs(['--out', ''], false), { name: 'ReleaseError', message: '--out needs a path after it' });
  assert.throws(() => parseReleaseArgs(['--out', '--key', 'k'], true), { name: 'ReleaseError', message: '--out needs a path after it, not the option --key' });
  assert.throws(() => parseReleaseArgs(['--key', '--out', 'o'], true), { name: 'ReleaseError', message: '--key needs a path after it, not the option --out' });
  assert.throws(() => parseReleaseArgs(['--allow-dirty'], true), {
    name: 'ReleaseError',
    message: "--allow-dirty is refused: a release is of a clean work tree; commit or discard the changes (npm run package packs HEAD's commit for a local try)",
  });
  assert.throws(() => parseReleaseArgs(['--allow-dirty'], false), {
    name: 'ReleaseError',
    message: "--allow-dirty is not needed: npm run package always packs HEAD's commit, never the work tree's changes; leave it out",
  });
  assert.throws(() => parseReleaseArgs(['-o'], true), { name: 'ReleaseError', message: 'unknown argument "-o": the options are --out DIR, --key PATH' });
});
