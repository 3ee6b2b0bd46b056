import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, test } from 'node:test';
import { decodeBase64Vector, decodeEmbeddingsAnswer, encodeBase64Vector, vectorValues } from '../../src/embeddings/embeddings-answer-decode.ts';
import { Base64Vector } from '../../src/embeddings/embeddings-types.ts';
import { UpstreamError } from '../../src/errors/api-error.ts';

/** The expectation made apart from the codec: each value written little-endian with DataView. */
function littleEndianBase64(values: readonly number[]): string {
  const view = new DataView(new ArrayBuffer(values.length * 4));
  values.forEach((v, i) => view.setFloat32(i * 4, v, true));
  return Buffer.from(view.buffer).toString('base64');
}

function bitsOf(values: ArrayLike<number>): string {
  const out = Buffer.alloc(values.length * 4);
  for (let i = 0; i < values.length; i++) out.writeFloatLE(values[i] as number, i * 4);
  return out.toString('hex');
}

const MAX_FLOAT32 = 3.4028234663852886e38;
const SMALLEST_SUBNORMAL = 2 ** -149;
const LARGEST_SUBNORMAL = 2 ** -126 - 2 ** -149;
const EDGE_VALUES = [0, -0, 1, -1.5, SMALLEST_SUBNORMAL, -SMALLEST_SUBNORMAL, LARGEST_SUBNORMAL, 2 ** -126, MAX_FLOAT32, -MAX_FLOAT32, Math.fround(0.1), Math.fround(1 / 3)];

describe('base64 vectors', () => {
  test('a known vector: 1.0 is AACAPw== (bytes 00 00 80 3f), as DataView writes it', () => {
    assert.equal(encodeBase64Vector(Float32Array.of(1)), 'AACAPw==');
    assert.equal(littleEndianBase64([1]), 'AACAPw==');
    assert.equal(encodeBase64Vector(Float32Array.of(1, -2, 0.5, -0)), littleEndianBase64([1, -2, 0.5, -0]));
    assert.equal(encodeBase64Vector(Float32Array.of(1, -2, 0.5, -0)), 'AACAPwAAAMAAAAA/AAAAgA==');
  });

  test('edge values round-trip bit for bit: -0, subnormals, the largest float32', () => {
    const encoded = encodeBase64Vector(Float32Array.from(EDGE_VALUES));
    assert.equal(encoded, littleEndianBase64(EDGE_VALUES));
    const decoded = decodeBase64Vector(encoded);
    assert.ok(decoded !== null);
    assert.equal(bitsOf(decoded), bitsOf(EDGE_VALUES));
    assert.ok(Object.is(decoded[1], -0));
    assert.equal(decoded[4], SMALLEST_SUBNORMAL);
    assert.equal(decoded[8], MAX_FLOAT32);
  });

  test('every padding length decodes: 1, 2 and 3 floats (==, = and none)', () => {
    for (const values of [[1.25], [1.25, -3], [1.25, -3, 7e-40]]) {
      const text = littleEndianBase64(values);
      const decoded = decodeBase64Vector(text);
      assert.ok(decoded !== null, text);
      assert.deepEqual(Array.from(decoded), values.map(Math.fround));
    }
  });

  test('a decoded vector owns an aligned buffer, even for a short one', () => {
    const decoded = decodeBase64Vector('AACAPw==');
    assert.ok(decoded !== null);
    assert.deepEqual([decoded.byteOffset, decoded.buffer.byteLength], [0, 4]);
  });

  test('a double is rounded as Math.fround rounds it', () => {
    const doubles = Float64Array.of(0.1, 1e-46, 1e39, -1e-50, 16777217);
    assert.equal(encodeBase64Vector(doubles), littleEndianBase64(Array.from(doubles, Math.fround)));
    assert.equal(encodeBase64Vector(Float64Array.of(0.1)), littleEndianBase64([0.1]));
  });

  test('an encoded view of a larger buffer encodes only its own values', () => {
    const whole = Float32Array.of(9, 1, 2, 9);
    assert.equal(encodeBase64Vector(whole.subarray(1, 3)), littleEndianBase64([1, 2]));
  });

  test('every malformed kind is refused', () => {
    const malformed: Array<[string, string]> = [
      ['3 bytes, not a whole float', 'AAAA'],
      ['5 bytes', 'AAAAAAA='],
      ['length not a multiple of 4', 'AACAPw='],
      ['padding left out', 'AACAPw'],
      ['too much padding', 'AACAPw==='],
      ['padding in the middle', 'AA==AACAPw=='],
      ['padding first', '=AACAPw='],
      ['a space', 'AACA Pw=='],
      ['a line break', 'AACAPw==\n'],
      ['URL-safe alphabet (-)', 'AAC-Pw=='],
      ['URL-safe alphabet (_)', 'AAC_Pw=='],
      ['a non-ASCII character', 'AACAPé=='],
      ['a NUL', 'AACAP\u0000=='],
      ['bits past the data (==)', 'AACAPx=='],
      ['bits past the data (=)', littleEndianBase64([1, 2]).replace(/.=$/, (m) => `${String.fromCharCode(m.charCodeAt(0) + 1)}=`)],
    ];
    for (const [name, text] of malformed) assert.equal(decodeBase64Vector(text), null, name);
    // The canonical neighbours of the last two do decode.
    assert.notEqual(decodeBase64Vector('AACAPw=='), null);
    assert.notEqual(decodeBase64Vector(littleEndianBase64([1, 2])), null);
  });

  test('the empty string is zero floats (an answer refuses an empty vector)', () => {
    assert.deepEqual(decodeBase64Vector(''), new Float32Array(0));
  });
});

const ABSENT = Symbol('absent');

function answer(data: unknown, usage: unknown = { prompt_tokens: 7, total_tokens: 7 }): string {
  return JSON.stringify(usage === ABSENT ? { object: 'list', data } : { object: 'list', data, model: 'x', usage });
}

function refusal(text: string, count: number, width: number | null): string {
  try {
    decodeEmbeddingsAnswer(text, count, width);
  } catch (err) {
    assert.ok(err instanceof UpstreamError, `expected UpstreamError, got ${String(err)}`);
    const body = err.toBody().error;
    assert.equal(err.status, 502);
    assert.deepEqual([body.code, body.type], ['bad_upstream_response', 'upstream_error']);
    return body.message;
  }
  assert.fail('the answer was accepted');
}

const b64 = (values: readonly number[]): string => littleEndianBase64(values);
const entry = (index: unknown, embedding: unknown): Record<string, unknown> => ({ object: 'embedding', index, embedding });

describe('decodeEmbeddingsAnswer', () => {
  test('float and base64 entries, any order, reassembled by index; usage read', () => {
    // JSON.stringify writes -0 as 0: the upstream's -0.0 is put in by hand.
    const text = answer([entry(1, b64([0.5, -0, 2])), entry(0, [0.1, 'MINUS_ZERO', 1e-300])]).replace('"MINUS_ZERO"', '-0.0');
    const decoded = decodeEmbeddingsAnswer(text, 2, null);
    assert.equal(decoded.promptTokens, 7);
    const [first, second] = decoded.vectors;
    assert.ok(first instanceof Float64Array && second instanceof Base64Vector);
    assert.deepEqual(Array.from(first), [0.1, -0, 1e-300]);
    assert.ok(Object.is(first[1], -0));
    // A base64 vector is kept as its text, its width known; its values are the text's.
    assert.equal(second.text, b64([0.5, -0, 2]));
    assert.equal(second.length, 3);
    assert.equal(bitsOf(vectorValues(second)), bitsOf([0.5, -0, 2]));
  });

  test('the same answer as bytes: read alike, whatever non-ASCII text it holds elsewhere', () => {
    const text = answer([entry(0, b64([1, 2]))]).replace('"object":"list"', '"object":"liste \u00e9","model":"modèle ✓"');
    const fromText = decodeEmbeddingsAnswer(text, 1, null);
    const fromBytes = decodeEmbeddingsAnswer(Buffer.from(text, 'utf8'), 1, null);
    assert.deepEqual(fromBytes, fromText);
    assert.throws(() => decodeEmbeddingsAnswer(Buffer.from('{"data":[ \u00e9'), 1, null), { code: 'bad_upstream_response' });
  });

  test('a float answer up to the largest float32 is taken, a double just below the rounding bound too', () => {
    const below = 3.4028235677973362e38;
    assert.equal(Math.fround(below), MAX_FLOAT32);
    const decoded = decodeEmbeddingsAnswer(`{"data":[{"index":0,"embedding":[${MAX_FLOAT32},-${below}]}]}`, 1, null);
    assert.deepEqual(Array.from(decoded.vectors[0] as Float64Array), [MAX_FLOAT32, -below]);
  });

  test('usage: absent, null, or without prompt_tokens is null; zero is kept', () => {
    const data = [entry(0, [1])];
    assert.equal(decodeEmbeddingsAnswer(answer(data, ABSENT), 1, null).promptTokens, null);
    assert.equal(decodeEmbeddingsAnswer(answer(data, null), 1, null).promptTokens, null);
    assert.equal(decodeEmbeddingsAnswer(answer(data, { total_tokens: 3 }), 1, null).promptTokens, null);
    assert.equal(decodeEmbeddingsAnswer(answer(data, { prompt_tokens: null }), 1, null).promptTokens, null);
    assert.equal(decodeEmbeddingsAnswer(answer(data, { prompt_tokens: 0 }), 1, null).promptTokens, 0);
  });

  test('the given width is required of every vector', () => {
    assert.equal(decodeEmbeddingsAnswer(answer([entry(0, [1, 2, 3])]), 1, 3).vectors[0]?.length, 3);
  });

  const P = "The upstream provider's embeddings answer";
  const faults: Array<[string, string, number, number | null, string]> = [
    ['not JSON', '{"data":', 1, null, 'The upstream provider returned a response that is not valid JSON.'],
    ['not an object', '[]', 1, null, `${P} has no 'data' array.`],
    ['no data', '{"object":"list"}', 1, null, `${P} has no 'data' array.`],
    ['data an object', '{"data":{}}', 1, null, `${P} has no 'data' array.`],
    ['too few', answer([entry(0, [1])]), 2, null, `${P} holds 1 embeddings for 2 inputs.`],
    ['too many', answer([entry(0, [1]), entry(1, [1])]), 1, null, `${P} holds 2 embeddings for 1 inputs.`],
    ['an entry not an object', answer([entry(0, [1]), [1]]), 2, null, `${P} has an entry that is not an object (data[1]).`],
    ['index missing', answer([{ embedding: [1] }]), 1, null, `${P} has an 'index' that is not an integer from 0 to 0 (data[0]).`],
    ['index a string', answer([entry('0', [1])]), 1, null, `${P} has an 'index' that is not an integer from 0 to 0 (data[0]).`],
    ['index a decimal', answer([entry(0, [1]), entry(0.5, [1])]), 2, null, `${P} has an 'index' that is not an integer from 0 to 1 (data[1]).`],
    ['index out of range', answer([entry(0, [1]), entry(2, [1])]), 2, null, `${P} has an 'index' that is not an integer from 0 to 1 (data[1]).`],
    ['index negative', answer([entry(-1, [1])]), 1, null, `${P} has an 'index' that is not an integer from 0 to 0 (data[0]).`],
    ['index twice', answer([entry(1, [1]), entry(1, [1])]), 2, null, `${P} has index 1 more than once (data[1]).`],
    ['embedding missing', answer([{ index: 0 }]), 1, null, `${P} has an 'embedding' that is neither an array of numbers nor a base64 string (data[0]).`],
    ['embedding an object', answer([entry(0, { 0: 1 })]), 1, null, `${P} has an 'embedding' that is neither an array of numbers nor a base64 string (data[0]).`],
    ['a string value in an array', answer([entry(0, [1, '2'])]), 1, null, `${P} has a value that is not a finite number (data[0].embedding[1]).`],
    ['a null value in an array', answer([entry(0, [null])]), 1, null, `${P} has a value that is not a finite number (data[0].embedding[0]).`],
    ['an infinite value in an array (1e999)', '{"data":[{"index":0,"embedding":[1,1e999]}]}', 1, null, `${P} has a value outside the range of a float32 (data[0].embedding[1]).`],
    ['a value a float32 cannot hold (3.5e38, an infinity in base64)', '{"data":[{"index":0,"embedding":[0.5,-3.5e38]}]}', 1, null, `${P} has a value outside the range of a float32 (data[0].embedding[1]).`],
    ['the least magnitude that rounds to an infinity', `{"data":[{"index":0,"embedding":[${2 ** 128 - 2 ** 103}]}]}`, 1, null, `${P} has a value outside the range of a float32 (data[0].embedding[0]).`],
    ['malformed base64', answer([entry(0, b64([1])), entry(1, 'AACAPw=')]), 2, null, `${P} has an 'embedding' that is not base64 of little-endian float32 values (data[1]).`],
    ['base64 of 3 bytes', answer([entry(0, 'AAAA')]), 1, null, `${P} has an 'embedding' that is not base64 of little-endian float32 values (data[0]).`],
    ['NaN in base64', answer([entry(0, b64([1, Number.NaN]))]), 1, null, `${P} has a value that is not a finite number (data[0].embedding[1]).`],
    ['Infinity in base64', answer([entry(0, b64([Number.POSITIVE_INFINITY]))]), 1, null, `${P} has a value that is not a finite number (data[0].embedding[0]).`],
    ['-Infinity in base64', answer([entry(0, b64([2, 3, Number.NEGATIVE_INFINITY]))]), 1, null, `${P} has a value that is not a finite number (data[0].embedding[2]).`],
    ['an empty array', answer([entry(0, [])]), 1, null, `${P} has an empty 'embedding' (data[0]).`],
    ['an empty base64 string', answer([entry(0, '')]), 1, null, `${P} has an empty 'embedding' (data[0]).`],
    ['widths differ', answer([entry(0, [1, 2]), entry(1, b64([1, 2, 3]))]), 2, null, `${P} has an embedding of 3 dimensions where 2 were expected (data[1]).`],
    ['width not the given one', answer([entry(0, [1, 2])]), 1, 3, `${P} has an embedding of 2 dimensions where 3 were expected (data[0]).`],
    ['usage a number', answer([entry(0, [1])], 5), 1, null, `${P} has a 'usage' that is not an object.`],
    ['prompt_tokens negative', answer([entry(0, [1])], { prompt_tokens: -1 }), 1, null, `${P} has a 'usage.prompt_tokens' that is not a non-negative integer.`],
    ['prompt_tokens a decimal', answer([entry(0, [1])], { prompt_tokens: 1.5 }), 1, null, `${P} has a 'usage.prompt_tokens' that is not a non-negative integer.`],
    ['prompt_tokens a string', answer([entry(0, [1])], { prompt_tokens: '5' }), 1, null, `${P} has a 'usage.prompt_tokens' that is not a non-negative integer.`],
    ['prompt_tokens past 2^53', answer([entry(0, [1])], { prompt_tokens: 2 ** 53 }), 1, null, `${P} has a 'usage.prompt_tokens' that is not a non-negative integer.`],
  ];
  for (const [name, text, count, width, message] of faults) {
    test(`refused: ${name}`, () => {
      assert.equal(refusal(text, count, width), message);
    });
  }

  test('a refusal never carries upstream content', () => {
    const secret = 'SECRET-UPSTREAM-TEXT';
    const message = refusal(answer([entry(0, secret)]), 1, null);
    assert.ok(!message.includes(secret));
  });

  test('the JSON error keeps its cause', () => {
    try {
      decodeEmbeddingsAnswer('nope', 1, null);
      assert.fail('accepted');
    } catch (err) {
      assert.ok(err instanceof UpstreamError && err.cause instanceof SyntaxError);
    }
  });
});
