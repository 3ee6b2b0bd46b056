import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { test } from 'node:test';
import { embeddingsAnswerPieces, PIECE_CHARS } from '../../src/embeddings/embeddings-answer-encode.ts';
import type { Vector } from '../../src/embeddings/embeddings-types.ts';

function littleEndianBase64(values: readonly number[]): string {
  const out = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => out.writeFloatLE(v, i * 4));
  return out.toString('base64');
}

const whole = (vectors: readonly Vector[], encoding: 'float' | 'base64', model = 'text-embed', tokens = 9): string =>
  [...embeddingsAnswerPieces(vectors, encoding, model, tokens)].join('');

const EDGE_FLOATS = [0, -0, 2 ** -149, 2 ** -126 - 2 ** -149, 3.4028234663852886e38, Math.fround(0.1), -1.5];

test('keys in OpenAI\'s order; the model escaped; usage prompt and total', () => {
  assert.equal(
    whole([Float32Array.of(1, 0.5)], 'float', 'a"b', 3),
    '{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1,0.5]}],"model":"a\\"b","usage":{"prompt_tokens":3,"total_tokens":3}}',
  );
});

test('base64 from float32: the upstream\'s bits unchanged', () => {
  const v = Float32Array.from(EDGE_FLOATS);
  const parsed = JSON.parse(whole([v, Float32Array.of(1, 2, 3, 4, 5, 6, 7)], 'base64'));
  assert.equal(parsed.data[0].embedding, littleEndianBase64(EDGE_FLOATS));
  assert.equal(parsed.data[1].embedding, littleEndianBase64([1, 2, 3, 4, 5, 6, 7]));
});

test('base64 from doubles: each through Math.fround', () => {
  const doubles = [0.1, 1 / 3, 1e-46, -2.5];
  const parsed = JSON.parse(whole([Float64Array.from(doubles)], 'base64'));
  assert.equal(parsed.data[0].embedding, littleEndianBase64(doubles.map(Math.fround)));
});

test('float from float32: printed as JSON.stringify prints the widened value, -0 with its sign; each parses back to the same float32', () => {
  const v = Float32Array.from(EDGE_FLOATS);
  const text = whole([v], 'float');
  assert.ok(text.includes('"embedding":[0,-0,1.401298464324817e-45,1.1754942106924411e-38,3.4028234663852886e+38,0.10000000149011612,-1.5]'));
  const back = JSON.parse(text).data[0].embedding as number[];
  assert.deepEqual(back.map(Math.fround), Array.from(v));
  assert.ok(Object.is(back[1], -0));
  const positive = Float32Array.from([0, 0.5]);
  assert.ok(whole([positive], 'float').includes(`"embedding":${JSON.stringify(Array.from(positive))}}`));
});

test('float from doubles: the upstream\'s numbers exactly, -0 included', () => {
  const doubles = [0.1, 1e-300, -0, 123456789.123456789, 5e-324];
  const text = whole([Float64Array.from(doubles)], 'float');
  assert.ok(text.includes('"embedding":[0.1,1e-300,-0,123456789.12345679,5e-324]}'));
  const back = JSON.parse(text).data[0].embedding as number[];
  assert.deepEqual(back, [0.1, 1e-300, -0, 123456789.12345679, 5e-324]);
  assert.ok(Object.is(back[2], -0));
});

test('a large answer comes in pieces of about 64 KiB that join to the whole', () => {
  const width = 3072;
  const vectors = Array.from({ length: 64 }, (_, i) => Float32Array.from({ length: width }, (_, j) => Math.sin(i * width + j)));
  for (const encoding of ['float', 'base64'] as const) {
    const pieces = [...embeddingsAnswerPieces(vectors, encoding, 'm', 1)];
    const longestVector = encoding === 'base64' ? 16_384 + 60 : 70_000;
    assert.ok(pieces.length > 2, `${encoding}: ${pieces.length} pieces`);
    for (const piece of pieces.slice(0, -1)) assert.ok(piece.length >= PIECE_CHARS && piece.length < PIECE_CHARS + longestVector, `${encoding}: ${piece.length}`);
    const parsed = JSON.parse(pieces.join(''));
    assert.equal(parsed.data.length, 64);
    assert.deepEqual(parsed.data.map((d: { index: number }) => d.index), Array.from({ length: 64 }, (_, i) => i));
    if (encoding === 'float') assert.deepEqual(parsed.data[63].embedding, Array.from(vectors[63] as Float32Array));
    else assert.equal(parsed.data[63].embedding, Buffer.from((vectors[63] as Float32Array).buffer).toString('base64'));
  }
});

test('no vectors: an empty list', () => {
  assert.equal(whole([], 'base64', 'm', 0), '{"object":"list","data":[],"model":"m","usage":{"prompt_tokens":0,"total_tokens":0}}');
});
