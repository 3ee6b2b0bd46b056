// The ustar writer: every header field at its offset with the exact bytes,
// the checksum as tar computes it, long paths through the prefix field or
// refused, entries in bytewise order, padding and the end-of-archive blocks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareBytewise, splitPath, TarEntryError, ustarArchive, ustarHeader } from '../../scripts/release/tar.ts';

const field = (header: Buffer, offset: number, length: number): string => header.subarray(offset, offset + length).toString('latin1');

test('a header holds path, mode, owners 0, size, mtime, typeflag 0, the ustar magic and empty owner names', () => {
  const header = ustarHeader({ path: 'package/dist/src/cli/main.js', mode: 0o755, size: 12471 }, 1767225600);
  assert.equal(header.length, 512);
  assert.equal(field(header, 0, 100), `package/dist/src/cli/main.js${'\0'.repeat(72)}`);
  assert.equal(field(header, 100, 8), '0000755\0');
  assert.equal(field(header, 108, 8), '0000000\0');
  assert.equal(field(header, 116, 8), '0000000\0');
  assert.equal(field(header, 124, 12), '00000030267\0');
  assert.equal(field(header, 136, 12), '15125334400\0');
  assert.equal(field(header, 156, 1), '0');
  assert.equal(field(header, 157, 100), '\0'.repeat(100), 'no link name');
  assert.equal(field(header, 257, 8), 'ustar\u000000');
  assert.equal(field(header, 265, 32), '\0'.repeat(32), 'uname empty');
  assert.equal(field(header, 297, 32), '\0'.repeat(32), 'gname empty');
  assert.equal(field(header, 329, 16), '0000000\u00000000000\0');
  assert.equal(field(header, 345, 167), '\0'.repeat(167), 'no prefix, and the rest of the block zero');
});

test('the checksum field is the sum of the header bytes with the field as spaces: six octal digits, NUL, space', () => {
  const header = ustarHeader({ path: 'package/LICENSE', mode: 0o644, size: 10943 }, 0);
  const asSpaces = Buffer.from(header);
  asSpaces.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of asSpaces) sum += byte;
  assert.equal(field(header, 148, 8), `${sum.toString(8).padStart(6, '0')}\0 `);
  assert.equal(field(header, 148, 8), '011622\0 ');
});

test('a path over 100 bytes is split at a slash into prefix and name', () => {
  const dir = `package/${'d'.repeat(120)}`;
  const long = `${dir}/file.js`;
  assert.deepEqual(splitPath(long), { prefix: dir, name: 'file.js' });
  const header = ustarHeader({ path: long, mode: 0o644, size: 0 }, 0);
  assert.equal(field(header, 0, 8), 'file.js\0');
  assert.equal(field(header, 345, dir.length + 1), `${dir}\0`);
  // The first slash whose rest fits the name field: the prefix as short as it can be.
  const deep = `package/${'a'.repeat(60)}/${'b'.repeat(60)}/c.js`;
  assert.deepEqual(splitPath(deep), { prefix: `package/${'a'.repeat(60)}`, name: `${'b'.repeat(60)}/c.js` });
  assert.deepEqual(splitPath('package/short.js'), { prefix: '', name: 'package/short.js' });
  assert.deepEqual(splitPath(`package/${'x'.repeat(92)}`), { prefix: '', name: `package/${'x'.repeat(92)}` }, '100 bytes exactly fits the name field');
});

test('a path no split fits is refused, naming the path, its length and what to change', () => {
  const name = `package/${'n'.repeat(101)}`;
  assert.throws(() => splitPath(name), {
    name: 'TarEntryError',
    message: `${name}: a ustar path is at most 100 bytes, or a directory part of at most 155 bytes and a rest of at most 100 bytes after a '/'; this one is 109 bytes: shorten the path`,
  });
  const prefixTooLong = `${'p'.repeat(156)}/x.js`;
  assert.throws(() => splitPath(prefixTooLong), TarEntryError);
});

test('absolute, empty-part and dot-dot paths are refused', () => {
  for (const bad of ['/etc/passwd', 'package/../x', 'package//x', './x', '']) {
    assert.throws(() => ustarHeader({ path: bad, mode: 0o644, size: 0 }, 0), { name: 'TarEntryError', message: `${JSON.stringify(bad)}: an archive path must be relative, with no empty, '.' or '..' part` });
  }
});

test('the archive: entries in bytewise order, data padded to 512, two zero blocks at the end', () => {
  const archive = ustarArchive(
    [
      { path: 'package/b', mode: 0o644, data: Buffer.from('bb') },
      { path: 'package/B', mode: 0o644, data: Buffer.from('B') },
      { path: 'package/a/z', mode: 0o755, data: Buffer.alloc(512, 0x41) },
    ],
    7,
  );
  assert.equal(archive.length, 512 * (3 * 2 + 2));
  const names = [0, 1024, 2048].map((offset) => field(archive, offset, 100).replace(/\0+$/, ''));
  assert.deepEqual(names, ['package/B', 'package/a/z', 'package/b'], 'uppercase before lowercase, as bytes compare');
  assert.equal(field(archive, 512, 1), 'B');
  assert.ok(archive.subarray(513, 1024).every((b) => b === 0), 'padding is zeros');
  assert.ok(archive.subarray(1536, 2048).every((b) => b === 0x41), 'a full block of data needs no padding');
  assert.equal(field(archive, 2048 + 512, 2), 'bb');
  assert.ok(archive.subarray(archive.length - 1024).every((b) => b === 0));
  assert.equal(field(archive, 1024 + 100, 8), '0000755\0');
  assert.equal(field(archive, 136, 12), '00000000007\0');
});

test('the archive is the same whatever order the entries come in, and refuses a path twice', () => {
  const files = [
    { path: 'package/x', mode: 0o644, data: Buffer.from('1') },
    { path: 'package/é', mode: 0o644, data: Buffer.from('2') },
    { path: 'package/y', mode: 0o644, data: Buffer.from('3') },
  ];
  assert.deepEqual(ustarArchive(files, 1), ustarArchive([...files].reverse(), 1));
  assert.throws(() => ustarArchive([...files, { path: 'package/x', mode: 0o644, data: Buffer.from('4') }], 1), { name: 'TarEntryError', message: 'package/x: listed twice' });
});

test('bytewise order differs from locale order', () => {
  assert.deepEqual(['b', 'a', 'B', 'é', 'e', '_'].sort(compareBytewise), ['B', '_', 'a', 'b', 'e', 'é']);
});
