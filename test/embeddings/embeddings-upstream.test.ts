import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateEmbeddingsRequest } from '../../src/embeddings/embeddings-request-validator.ts';
import { splitInputs, upstreamEmbeddingsBody } from '../../src/embeddings/embeddings-upstream.ts';

const LIMITS = { maxInputs: 2048, maxInputBytes: 65_536, maxInputTokens: 8192, maxTotalBytes: 4_194_304 };
const TARGET = { model: 'text-embedding-3-small', encoding: 'base64' as const, dimensions: true };

test('a single string and a single token list are sent as given', () => {
  const text = validateEmbeddingsRequest({ model: 'alias', input: 'hello' }, LIMITS);
  assert.equal(upstreamEmbeddingsBody(text, 0, 1, TARGET), '{"model":"text-embedding-3-small","input":"hello","encoding_format":"base64"}');
  const tokens = validateEmbeddingsRequest({ model: 'alias', input: [1, 2, 3] }, LIMITS);
  assert.equal(upstreamEmbeddingsBody(tokens, 0, 1, { ...TARGET, encoding: 'float' }), '{"model":"text-embedding-3-small","input":[1,2,3],"encoding_format":"float"}');
});

test('a list stays a list, sliced to the part; dimensions to a target that takes it; user as given', () => {
  const request = validateEmbeddingsRequest({ model: 'alias', input: ['a', 'b', 'c'], dimensions: 256, user: 'u-7', encoding_format: 'float' }, LIMITS);
  assert.equal(upstreamEmbeddingsBody(request, 1, 3, TARGET), '{"model":"text-embedding-3-small","input":["b","c"],"encoding_format":"base64","dimensions":256,"user":"u-7"}');
  assert.equal(upstreamEmbeddingsBody(request, 0, 1, { ...TARGET, dimensions: false }), '{"model":"text-embedding-3-small","input":["a"],"encoding_format":"base64","user":"u-7"}');
  const arrays = validateEmbeddingsRequest({ model: 'alias', input: [[1], [2, 3]] }, LIMITS);
  assert.equal(upstreamEmbeddingsBody(arrays, 1, 2, TARGET), '{"model":"text-embedding-3-small","input":[[2,3]],"encoding_format":"base64"}');
});

test('a part outside the inputs is a programming error', () => {
  const request = validateEmbeddingsRequest({ model: 'alias', input: ['a', 'b'] }, LIMITS);
  for (const [start, end] of [[0, 0], [1, 3], [-1, 1], [2, 2], [0.5, 1]]) {
    assert.throws(() => upstreamEmbeddingsBody(request, start as number, end as number, TARGET), RangeError);
  }
});

test('splitInputs: in order, at most max each, the last part shorter', () => {
  assert.deepEqual(splitInputs(1, 512), [[0, 1]]);
  assert.deepEqual(splitInputs(512, 512), [[0, 512]]);
  assert.deepEqual(splitInputs(513, 512), [[0, 512], [512, 513]]);
  assert.deepEqual(splitInputs(2048, 512), [[0, 512], [512, 1024], [1024, 1536], [1536, 2048]]);
  assert.deepEqual(splitInputs(5, 2), [[0, 2], [2, 4], [4, 5]]);
  assert.deepEqual(splitInputs(3, 1), [[0, 1], [1, 2], [2, 3]]);
  assert.throws(() => splitInputs(0, 1), RangeError);
  assert.throws(() => splitInputs(3, 0), RangeError);
  assert.throws(() => splitInputs(3, 1.5), RangeError);
});
