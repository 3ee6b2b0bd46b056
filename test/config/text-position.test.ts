import assert from 'node:assert/strict';
import { test } from 'node:test';
import { positionAt } from '../../src/config/text-position.ts';

const at = (text: string, offset: number) => positionAt(Buffer.from(text), offset);

test('line and column from 1; a newline starts the next line', () => {
  assert.deepEqual(at('{"a":1}', 0), { line: 1, column: 1 });
  assert.deepEqual(at('{"a":1}', 6), { line: 1, column: 7 });
  assert.deepEqual(at('{\n  x', 4), { line: 2, column: 3 });
  assert.deepEqual(at('{\r\n  x', 5), { line: 2, column: 3 });
});

test('columns count characters: a two-byte and a four-byte character are one column each', () => {
  // "é" is 2 bytes, "😀" is 4: the x after them is byte 7 and column 4.
  assert.deepEqual(at('é😀x', 6), { line: 1, column: 3 });
  assert.deepEqual(at('é😀x', 7), { line: 1, column: 4 });
});

test('an offset past the end is the end of the text', () => {
  assert.deepEqual(at('{\n', 99), { line: 2, column: 1 });
  assert.deepEqual(at('', 0), { line: 1, column: 1 });
});
