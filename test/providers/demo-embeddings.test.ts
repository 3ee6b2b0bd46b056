import assert from 'node:assert/strict';
import { test } from 'node:test';
import { demoEmbedding, demoPromptTokens } from '../../src/providers/demo-embeddings.ts';

function norm(v: Float32Array): number {
  let sum = 0;
  for (const x of v) sum += x * x;
  return Math.sqrt(sum);
}

test('the same input, the same vector; other inputs, other vectors', () => {
  const a = demoEmbedding('hello world', 256);
  assert.deepEqual(demoEmbedding('hello world', 256), a);
  assert.notDeepEqual(demoEmbedding('hello world!', 256), a);
  assert.deepEqual(demoEmbedding([1, 2, 3], 8), demoEmbedding([1, 2, 3], 8));
  assert.notDeepEqual(demoEmbedding([1, 2, 3], 8), demoEmbedding([1, 2, 4], 8));
  // Texts and token lists are hashed apart.
  assert.notDeepEqual(demoEmbedding('1', 8), demoEmbedding([1], 8));
  // A narrower vector is not a prefix that happens to be normalised differently: each width is its own unit vector.
  assert.equal(demoEmbedding('x', 3).length, 3);
});

test('pinned values: a function of the input alone (SHA-256 seed, xoshiro128**), the same on every host and run', () => {
  assert.deepEqual(Array.from(demoEmbedding('portcullis', 4)), [0.3948010802268982, -0.6647694110870361, 0.24729828536510468, 0.5840010643005371]);
  assert.deepEqual(Array.from(demoEmbedding([1, 2, 3], 3)), [0.5776187777519226, -0.4138292372226715, -0.7036347985267639]);
});

test('unit length within float32 rounding, for every width from 1 to 64 and at 3,072', () => {
  for (const width of [...Array.from({ length: 64 }, (_, i) => i + 1), 3072]) {
    const v = demoEmbedding(`text ${width}`, width);
    assert.equal(v.length, width);
    assert.ok(Math.abs(norm(v) - 1) < 1e-6, `width ${width}: ${norm(v)}`);
  }
  // Width 1 is ±1 exactly.
  assert.equal(Math.abs(demoEmbedding('a', 1)[0] as number), 1);
});

test('values spread over both signs (not a constant vector)', () => {
  const v = demoEmbedding('spread', 256);
  const positive = Array.from(v).filter((x) => x > 0).length;
  assert.ok(positive > 64 && positive < 192, `${positive} positive of 256`);
});

test('a width that is not a positive integer is a programming error', () => {
  for (const width of [0, -1, 1.5, Number.NaN]) assert.throws(() => demoEmbedding('a', width), RangeError);
});

test('prompt tokens: UTF-8 bytes / 4 rounded up, at least 1, for a text; the count of a token list', () => {
  assert.equal(demoPromptTokens('a'), 1);
  assert.equal(demoPromptTokens('abcd'), 1);
  assert.equal(demoPromptTokens('abcde'), 2);
  assert.equal(demoPromptTokens('漢字'), 2); // 6 bytes
  assert.equal(demoPromptTokens('🦀'), 1); // 4 bytes
  assert.equal(demoPromptTokens([7, 8, 9]), 3);
  assert.equal(demoPromptTokens([]), 0);
});
