// What goes in the tarball: modes, paths under package/, files that are not the commit's, the build path inside a file; and the command line.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { gzipFixed } from '../../scripts/release/gzip.ts';
import { parseReleaseArgs } from '../../scripts/release/package.ts';
import { binPaths, filesHolding, filesNotFromCommit, packedMode, tarFiles } from '../../scripts/release/package-files.ts';

test('modes: 0755 for a bin or any execute bit, 0644 for everything else, whatever else the checkout says', () => {
  const bins = binPaths({ bin: { portcullis: './dist/src/cli/main.js' } });
  assert.deepEqual([...bins], ['dist/src/cli/main.js']);
  assert.equal(packedMode({ path: 'dist/src/cli/main.js', statMode: 0o100600 }, bins), 0o755);
  assert.equal(packedMode({ path: 'deploy/x.sh', statMode: 0o100700 }, bins), 0o755);
  assert.equal(packedMode({ path: 'README.md', statMode: 0o100600 }, bins), 0o644);
  assert.equal(packedMode({ path: 'README.md', statMode: 0o100666 }, bins), 0o644);
  assert.deepEqual([...binPaths({ bin: 'cli.js' })], ['cli.js']);
  assert.deepEqual([...binPaths({})], []);
});

test('entries go under package/', () => {
  const data = Buffer.from('x');
  assert.deepEqual(tarFiles([{ path: 'LICENSE', statMode: 0o100644, data }], new Set()), [{ path: 'package/LICENSE', mode: 0o644, data }]);
});

test('outside dist/, a packed file must be tracked and unchanged', () => {
  const packed = ['dist/src/index.js', 'README.md', 'docs/new.md', 'deploy/portcullis.service', 'package.json'];
  assert.deepEqual(filesNotFromCommit(packed, new Set(['README.md', 'deploy/portcullis.service', 'package.json']), new Set(['package.json'])), ['docs/new.md', 'package.json']);
});

test('files holding the build path are named', () => {
  const files = [
    { path: 'a.js', statMode: 0, data: Buffer.from('const p = "/tmp/x/portcullis/src";') },
    { path: 'b.js', statMode: 0, data: Buffer.from('relative only') },
  ];
  assert.deepEqual(filesHolding(files, '/tmp/x/portcullis'), ['a.js']);
});

test('gzip: mtime 0, no flags, OS 255, and the data back whole', () => {
  const gz = gzipFixed(Buffer.from('hello'));
  assert.equal(gz.subarray(0, 10).toString('hex'), '1f8b08000000000002ff');
  assert.equal(gunzipSync(gz).toString(), 'hello');
  assert.deepEqual(gzipFixed(Buffer.from('hello')), gz);
});

test('the command line: --out DIR, --allow-dirty, --key PATH for release only; anything else refused by name', () => {
  assert.deepEqual(parseReleaseArgs(['--out', 'x', '--allow-dirty'], false), { out: 'x', allowDirty: true, key: undefined });
  assert.deepEqual(parseReleaseArgs(['--key', 'k'], true), { out: undefined, allowDirty: false, key: 'k' });
  assert.throws(() => parseReleaseArgs(['--key', 'k'], false), { name: 'ReleaseError', message: 'unknown argument "--key": the options are --out DIR, --allow-dirty' });
  assert.throws(() => parseReleaseArgs(['--out'], true), { message: '--out needs a path after it' });
  assert.throws(() => parseReleaseArgs(['-o'], true), { message: 'unknown argument "-o": the options are --out DIR, --allow-dirty, --key PATH' });
});
