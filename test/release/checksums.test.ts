// SHA256SUMS exactly as sha256sum writes it: digest, two spaces, name, sorted by name.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sha256Hex, sha256Sums } from '../../scripts/release/checksums.ts';

test('one line per file, sorted by name, lowercase digest, two spaces, a final newline', () => {
  const sums = sha256Sums(new Map([['portcullis-0.1.0.tgz', Buffer.from('abc')], ['portcullis-0.1.0.cdx.json', Buffer.from('')]]));
  assert.equal(
    sums,
    'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  portcullis-0.1.0.cdx.json\n' +
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  portcullis-0.1.0.tgz\n',
  );
  assert.equal(sha256Hex(Buffer.from('abc')), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

test('names with a slash, backslash or line break are refused (sha256sum would escape them)', () => {
  for (const name of ['dir/file', 'a\\b', 'a\nb', '']) {
    assert.throws(() => sha256Sums(new Map([[name, Buffer.from('x')]])), { message: `${JSON.stringify(name)}: a SHA256SUMS entry is a bare file name` });
  }
});
