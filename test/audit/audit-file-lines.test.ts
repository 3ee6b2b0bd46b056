import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { after, test } from 'node:test';
import { forEachLine, forEachLineBackward, lastNewlineBefore, OverlongLineError } from '../../src/audit/audit-file-lines.ts';
import { freshPath, tempDir } from '../support/temp-dir.ts';

const root = tempDir('audit-lines');

async function read(content: string | Buffer) {
  const file = freshPath(root, 'f');
  writeFileSync(file, content);
  const handle = await open(file, 'r');
  try {
    const forward: Array<[string, number, boolean]> = [];
    await forEachLine(handle, (text, line, terminated) => {
      forward.push([text, line, terminated]);
      return true;
    });
    const backward: string[] = [];
    await forEachLineBackward(handle, (await handle.stat()).size, (text) => {
      backward.push(text);
      return true;
    });
    return { forward, backward };
  } finally {
    await handle.close();
  }
}

test('lines of every size around the 64 KiB chunk, forward and backward, match a plain split', async () => {
  // Lengths chosen so line ends fall before, on and after chunk boundaries (65536).
  const lengths = [0, 1, 65_534, 65_535, 65_536, 2, 30_000, 40_000, 65_000, 7, 0, 12_345];
  const lines = lengths.map((n, i) => String.fromCharCode(97 + (i % 26)).repeat(n));
  const { forward, backward } = await read(lines.join('\n') + '\n');
  assert.deepEqual(forward, lines.map((text, i) => [text, i + 1, true]));
  assert.deepEqual(backward, [...lines].reverse());
});

test('multi-byte UTF-8 split across a chunk boundary is read whole', async () => {
  // 'ab\n' then a line of exactly 65536 bytes whose last character (4 bytes) spans offset 65536.
  const second = 'x'.repeat(65_529) + '€😀';
  assert.equal(Buffer.byteLength(second), 65_536);
  const { forward, backward } = await read(`ab\n${second}\nzweite Zeile ü\n`);
  assert.deepEqual(forward.map(([t]) => t), ['ab', second, 'zweite Zeile ü']);
  assert.deepEqual(backward, ['zweite Zeile ü', second, 'ab']);
});

test('an unterminated last line: forward reports it unterminated, backward skips it', async () => {
  const { forward, backward } = await read('one\ntwo\nthr');
  assert.deepEqual(forward, [['one', 1, true], ['two', 2, true], ['thr', 3, false]]);
  assert.deepEqual(backward, ['two', 'one']);
});

test('a line over 64 KiB is refused both ways', async () => {
  const file = path.join(root, 'long');
  writeFileSync(file, 'ok\n' + 'y'.repeat(65_537) + '\nok\n');
  const handle = await open(file, 'r');
  try {
    await assert.rejects(forEachLine(handle, () => true), (e: unknown) => e instanceof OverlongLineError && e.line === 2);
    await assert.rejects(forEachLineBackward(handle, (await handle.stat()).size, () => true), OverlongLineError);
    assert.equal(await lastNewlineBefore(handle, 65_540), null, 'no newline within a record\'s length');
    assert.equal(await lastNewlineBefore(handle, 65_540, 65_540), 2);
    assert.equal(await lastNewlineBefore(handle, 65_541, 10), 65_540);
  } finally {
    await handle.close();
  }
});

test('stopping early reads no further', async () => {
  const file = path.join(root, 'stop');
  writeFileSync(file, 'a\nb\nc\n');
  const handle = await open(file, 'r');
  try {
    const seen: string[] = [];
    await forEachLine(handle, (text) => (seen.push(text), false));
    await forEachLineBackward(handle, 6, (text) => (seen.push(text), false));
    assert.deepEqual(seen, ['a', 'c']);
  } finally {
    await handle.close();
  }
});
