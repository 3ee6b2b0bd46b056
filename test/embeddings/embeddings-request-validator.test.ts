import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, test } from 'node:test';
import { embeddingsObserver, MAX_DIMENSIONS, validateEmbeddingsRequest } from '../../src/embeddings/embeddings-request-validator.ts';
import type { EmbeddingLimits } from '../../src/embeddings/embeddings-types.ts';
import { InvalidRequestError, type ErrorBody } from '../../src/errors/api-error.ts';
import { createJsonParser, parseJson } from '../../src/json/parser.ts';

/** Small bounds, so each is easy to cross. */
const LIMITS: EmbeddingLimits = { maxInputs: 3, maxInputBytes: 10, maxInputTokens: 4, maxTotalBytes: 24 };
const DEFAULTS: EmbeddingLimits = { maxInputs: 2048, maxInputBytes: 65_536, maxInputTokens: 8192, maxTotalBytes: 4_194_304 };

type Outcome = { ok: true; value: unknown } | { ok: false; error: ErrorBody; offset: number };

function observe(text: string, chunkSize = Number.POSITIVE_INFINITY, limits = LIMITS): Outcome {
  const bytes = Buffer.from(text, 'utf8');
  const parser = createJsonParser({ observer: embeddingsObserver(limits), rejectDuplicateKeys: true });
  let offset = 0;
  try {
    while (offset < bytes.length) {
      const end = Math.min(bytes.length, offset + chunkSize);
      parser.feed(bytes.subarray(offset, end));
      offset = end;
    }
    return { ok: true, value: parser.end() };
  } catch (err) {
    assert.ok(err instanceof InvalidRequestError, `expected InvalidRequestError, got ${String(err)}`);
    return { ok: false, error: err.toBody(), offset };
  }
}

function lateError(value: unknown, limits = LIMITS): ErrorBody['error'] {
  try {
    validateEmbeddingsRequest(value, limits);
  } catch (err) {
    assert.ok(err instanceof InvalidRequestError, `expected InvalidRequestError, got ${String(err)}`);
    return err.toBody().error;
  }
  assert.fail('the validator accepted the body');
}

interface Rejection {
  name: string;
  text: string;
  /** The observer refuses it while the body arrives. */
  early: boolean;
  param: string | null;
  code: string;
  message: string;
}

const INPUTS_MESSAGE = "Invalid 'input': array too long. Expected at most 3 inputs in one request (the gateway's embeddings.maxInputs); send the inputs in several requests.";
const tokensMessage = (where: string): string =>
  `Invalid '${where}': array too long. Expected at most 4 token ids in one input (the gateway's embeddings.maxInputTokens); shorten the input or split it in several.`;
const TOTAL_MESSAGE =
  "Invalid value for 'input': the inputs come to more than 24 bytes (UTF-8 text, 4 bytes a token id), the most one request takes (the gateway's embeddings.maxTotalBytes); send the inputs in several requests.";

const REJECTIONS: Rejection[] = [
  { name: 'root an array', text: '[1]', early: true, param: null, code: 'invalid_type', message: 'Invalid type for the request body: expected an object, but got an array instead.' },
  { name: 'root a string', text: '"x"', early: true, param: null, code: 'invalid_type', message: 'Invalid type for the request body: expected an object, but got a string instead.' },
  { name: 'stream is unknown', text: '{"model":"m","stream":true,"input":"a"}', early: true, param: 'stream', code: 'unknown_parameter', message: 'Unrecognized request argument supplied: stream' },
  { name: 'unknown before a bad model', text: '{"model":5,"extra":1,"input":"a"}', early: true, param: 'extra', code: 'unknown_parameter', message: 'Unrecognized request argument supplied: extra' },
  { name: 'a digit-led key waits for the whole body', text: '{"model":"m","input":"a","7":1}', early: false, param: '7', code: 'unknown_parameter', message: 'Unrecognized request argument supplied: 7' },
  { name: 'too many inputs', text: '{"model":"m","input":["a","b","c","d"]}', early: true, param: 'input', code: 'array_above_max_length', message: INPUTS_MESSAGE },
  { name: 'too many token arrays', text: '{"input":[[1],[2],[3],[4]],"model":"m"}', early: true, param: 'input', code: 'array_above_max_length', message: INPUTS_MESSAGE },
  { name: 'one token list too long', text: '{"model":"m","input":[1,2,3,4,5]}', early: true, param: 'input', code: 'array_above_max_length', message: tokensMessage('input') },
  { name: 'a token array too long', text: '{"model":"m","input":[[1],[1,2,3,4,5]]}', early: true, param: 'input[1]', code: 'array_above_max_length', message: tokensMessage('input[1]') },
  { name: 'a long token array before too many inputs', text: '{"model":"m","input":[[1,2,3,4,5],[1],[1],[1]]}', early: true, param: 'input[0]', code: 'array_above_max_length', message: tokensMessage('input[0]') },
  { name: 'too many inputs before an unknown key', text: '{"input":["a","b","c","d"],"zzz":1}', early: true, param: 'input', code: 'array_above_max_length', message: INPUTS_MESSAGE },
  { name: 'model missing', text: '{"input":"a"}', early: false, param: 'model', code: 'missing_required_parameter', message: "Missing required parameter: 'model'." },
  { name: 'input missing', text: '{"model":"m"}', early: false, param: 'input', code: 'missing_required_parameter', message: "Missing required parameter: 'input'." },
  { name: 'model a number', text: '{"model":5,"input":"a"}', early: false, param: 'model', code: 'invalid_type', message: "Invalid type for 'model': expected a string, but got a number instead." },
  { name: 'model empty', text: '{"model":"","input":"a"}', early: false, param: 'model', code: 'invalid_value', message: "Invalid value for 'model': expected a non-empty string." },
  { name: 'model too long', text: `{"model":"${'m'.repeat(257)}","input":"a"}`, early: false, param: 'model', code: 'invalid_value', message: "Invalid value for 'model': expected at most 256 characters." },
  { name: 'input empty string', text: '{"model":"m","input":""}', early: false, param: 'input', code: 'invalid_value', message: "Invalid value for 'input': expected a non-empty string." },
  { name: 'input an empty string in a list', text: '{"model":"m","input":["a",""]}', early: false, param: 'input[1]', code: 'invalid_value', message: "Invalid value for 'input[1]': expected a non-empty string." },
  { name: 'input empty array', text: '{"model":"m","input":[]}', early: false, param: 'input', code: 'array_below_min_length', message: "Invalid 'input': empty array. Expected an array with at least 1 entry." },
  { name: 'input an empty token array', text: '{"model":"m","input":[[1],[]]}', early: false, param: 'input[1]', code: 'array_below_min_length', message: "Invalid 'input[1]': empty array. Expected an array with at least 1 entry." },
  {
    name: 'input an object',
    text: '{"model":"m","input":{}}',
    early: false,
    param: 'input',
    code: 'invalid_type',
    message: "Invalid type for 'input': expected a string, an array of strings, an array of token ids or an array of arrays of token ids, but got an object instead.",
  },
  { name: 'input null', text: '{"model":"m","input":null}', early: false, param: 'input', code: 'invalid_type', message: "Invalid type for 'input': expected a string, an array of strings, an array of token ids or an array of arrays of token ids, but got null instead." },
  { name: 'input[0] a boolean', text: '{"model":"m","input":[true]}', early: false, param: 'input[0]', code: 'invalid_type', message: "Invalid type for 'input[0]': expected a string, a token id or an array of token ids, but got a boolean instead." },
  { name: 'strings then a number', text: '{"model":"m","input":["a",1]}', early: false, param: 'input[1]', code: 'invalid_type', message: "Invalid type for 'input[1]': expected a string, as 'input[0]' is, but got a number instead." },
  { name: 'token arrays then a string', text: '{"model":"m","input":[[1],"a"]}', early: false, param: 'input[1]', code: 'invalid_type', message: "Invalid type for 'input[1]': expected an array of token ids, as 'input[0]' is, but got a string instead." },
  { name: 'tokens then a string', text: '{"model":"m","input":[1,"a"]}', early: false, param: 'input[1]', code: 'invalid_type', message: "Invalid type for 'input[1]': expected a token id (an integer), as the input's first entry is, but got a string instead." },
  { name: 'a decimal token', text: '{"model":"m","input":[[1],[2,3.5]]}', early: false, param: 'input[1][1]', code: 'invalid_type', message: "Invalid type for 'input[1][1]': expected an integer token id, but got a decimal instead." },
  { name: 'a negative token', text: '{"model":"m","input":[-1]}', early: false, param: 'input[0]', code: 'invalid_value', message: "Invalid value for 'input[0]': -1. Expected an integer from 0 to 2147483647." },
  { name: 'a token past int32', text: '{"model":"m","input":[[0],[2147483648]]}', early: false, param: 'input[1][0]', code: 'invalid_value', message: "Invalid value for 'input[1][0]': 2147483648. Expected an integer from 0 to 2147483647." },
  { name: 'a nested array in token arrays', text: '{"model":"m","input":[[[1]]]}', early: false, param: 'input[0][0]', code: 'invalid_type', message: "Invalid type for 'input[0][0]': expected a token id (an integer), as the input's first entry is, but got an array instead." },
  {
    name: 'a text past maxInputBytes',
    text: '{"model":"m","input":["a","éééééé"]}',
    early: false,
    param: 'input[1]',
    code: 'invalid_value',
    message: "Invalid value for 'input[1]': 12 bytes of UTF-8 text. Expected at most 10 bytes in one input (the gateway's embeddings.maxInputBytes); shorten the input or split it in several.",
  },
  {
    name: 'a single text past maxInputBytes',
    text: '{"model":"m","input":"abcdefghijk"}',
    early: false,
    param: 'input',
    code: 'invalid_value',
    message: "Invalid value for 'input': 11 bytes of UTF-8 text. Expected at most 10 bytes in one input (the gateway's embeddings.maxInputBytes); shorten the input or split it in several.",
  },
  // 10 + 10 + 10 bytes: past 24 at the third.
  { name: 'texts past maxTotalBytes', text: '{"model":"m","input":["abcdefghij","abcdefghij","abcdefghij"]}', early: false, param: 'input', code: 'invalid_value', message: TOTAL_MESSAGE },
  // 4 + 4 tokens of 4 bytes = 32.
  { name: 'tokens past maxTotalBytes', text: '{"model":"m","input":[[1,2,3,4],[1,2,3,4]]}', early: false, param: 'input', code: 'invalid_value', message: TOTAL_MESSAGE },
  { name: 'encoding_format unknown', text: '{"model":"m","input":"a","encoding_format":"int8"}', early: false, param: 'encoding_format', code: 'invalid_value', message: "Invalid value for 'encoding_format': 'int8'. Supported values are: 'float' and 'base64'." },
  { name: 'encoding_format a number', text: '{"model":"m","input":"a","encoding_format":1}', early: false, param: 'encoding_format', code: 'invalid_type', message: "Invalid type for 'encoding_format': expected a string, but got a number instead." },
  { name: 'dimensions 0', text: '{"model":"m","input":"a","dimensions":0}', early: false, param: 'dimensions', code: 'invalid_value', message: "Invalid value for 'dimensions': 0. Expected an integer from 1 to 65536." },
  { name: 'dimensions too large', text: '{"model":"m","input":"a","dimensions":65537}', early: false, param: 'dimensions', code: 'invalid_value', message: "Invalid value for 'dimensions': 65537. Expected an integer from 1 to 65536." },
  { name: 'dimensions decimal', text: '{"model":"m","input":"a","dimensions":1.5}', early: false, param: 'dimensions', code: 'invalid_type', message: "Invalid type for 'dimensions': expected an integer, but got a decimal instead." },
  { name: 'dimensions a string', text: '{"model":"m","input":"a","dimensions":"256"}', early: false, param: 'dimensions', code: 'invalid_type', message: "Invalid type for 'dimensions': expected an integer, but got a string instead." },
  { name: 'user too long', text: `{"model":"m","input":"a","user":"${'u'.repeat(257)}"}`, early: false, param: 'user', code: 'invalid_value', message: "Invalid value for 'user': expected at most 256 characters." },
  { name: 'user an object', text: '{"model":"m","input":"a","user":{}}', early: false, param: 'user', code: 'invalid_type', message: "Invalid type for 'user': expected a string, but got an object instead." },
  { name: 'document order: input before model', text: '{"input":[],"model":""}', early: false, param: 'input', code: 'array_below_min_length', message: "Invalid 'input': empty array. Expected an array with at least 1 entry." },
];

describe('refusals: exact param, code and message; early and late alike', () => {
  for (const fixture of REJECTIONS) {
    test(`${fixture.early ? 'early' : 'late '}: ${fixture.name}`, () => {
      const late = lateError(parseJson(fixture.text));
      assert.deepEqual(late, { message: fixture.message, type: 'invalid_request_error', param: fixture.param, code: fixture.code });
      const whole = observe(fixture.text);
      if (!fixture.early) {
        assert.deepEqual(whole, { ok: true, value: JSON.parse(fixture.text) });
        return;
      }
      assert.equal(whole.ok, false, 'the observer let the body through');
      assert.deepEqual(!whole.ok && whole.error.error, late);
      // Byte by byte, the same error, before the last byte.
      const bytewise = observe(fixture.text, 1);
      assert.equal(bytewise.ok, false);
      assert.deepEqual(!bytewise.ok && bytewise.error.error, late);
      assert.ok(!bytewise.ok && bytewise.offset < Buffer.byteLength(fixture.text), 'refused only at the end');
    });
  }

  test('split at every index, each early fixture fails the same way', () => {
    for (const fixture of REJECTIONS) {
      if (!fixture.early) continue;
      const late = lateError(parseJson(fixture.text));
      const bytes = Buffer.from(fixture.text, 'utf8');
      for (let cut = 1; cut < bytes.length; cut++) {
        const parser = createJsonParser({ observer: embeddingsObserver(LIMITS) });
        assert.throws(
          () => {
            parser.feed(bytes.subarray(0, cut));
            parser.feed(bytes.subarray(cut));
            parser.end();
          },
          (err: unknown) => err instanceof InvalidRequestError && JSON.stringify(err.toBody().error) === JSON.stringify(late),
          `${fixture.name} split at ${cut}`,
        );
      }
    }
  });

  test('a repeated input key starts the observer over: a token list, then a list of texts', () => {
    // Without rejectDuplicateKeys the second `input` wins; its bound is maxInputs, not the first's.
    const text = '{"model":"m","input":[1,2,3],"input":["a","b","c","d"]}';
    const parser = createJsonParser({ observer: embeddingsObserver(LIMITS) });
    assert.throws(() => parser.feed(Buffer.from(text)), (err: unknown) => err instanceof InvalidRequestError && err.message === INPUTS_MESSAGE);
  });
});

describe('accepted requests', () => {
  test('a single string: one input, its shape, the defaults', () => {
    assert.deepEqual(validateEmbeddingsRequest({ model: 'text-embed', input: 'héllo' }, DEFAULTS), {
      model: 'text-embed',
      inputs: ['héllo'],
      shape: 'string',
      encoding: 'float',
      encodingGiven: false,
      dimensions: null,
      user: null,
      promptBound: 6 + 4,
    });
  });

  test('strings, every setting given', () => {
    const request = validateEmbeddingsRequest({ input: ['a', '漢字'], model: 'm', encoding_format: 'base64', dimensions: 256, user: 'u-1' }, DEFAULTS);
    assert.deepEqual(request, { model: 'm', inputs: ['a', '漢字'], shape: 'strings', encoding: 'base64', encodingGiven: true, dimensions: 256, user: 'u-1', promptBound: 1 + 4 + 6 + 4 });
  });

  test('one token list is one input; token arrays are one input each', () => {
    const one = validateEmbeddingsRequest({ model: 'm', input: [0, 1, 2147483647] }, DEFAULTS);
    assert.deepEqual([one.shape, one.inputs, one.promptBound], ['tokens', [[0, 1, 2147483647]], 3 + 4]);
    const many = validateEmbeddingsRequest({ model: 'm', input: [[5], [6, 7]], encoding_format: 'float' }, DEFAULTS);
    assert.deepEqual([many.shape, many.inputs, many.promptBound, many.encodingGiven], ['token_arrays', [[5], [6, 7]], 1 + 4 + 2 + 4, true]);
  });

  test('null encoding_format, dimensions and user are absent', () => {
    const request = validateEmbeddingsRequest({ model: 'm', input: 'a', encoding_format: null, dimensions: null, user: null }, DEFAULTS);
    assert.deepEqual([request.encoding, request.encodingGiven, request.dimensions, request.user], ['float', false, null, null]);
  });

  test('exactly at every bound passes; one past each fails', () => {
    const atBounds = { maxInputs: 3, maxInputBytes: 4, maxInputTokens: 2, maxTotalBytes: 12 };
    assert.equal(validateEmbeddingsRequest({ model: 'm', input: ['abcd', 'abcd', 'abcd'] }, atBounds).promptBound, 3 * 8);
    assert.equal(validateEmbeddingsRequest({ model: 'm', input: [1, 2] }, atBounds).promptBound, 6);
    assert.equal(validateEmbeddingsRequest({ model: 'm', input: 'a', dimensions: MAX_DIMENSIONS }, atBounds).dimensions, 65_536);
    assert.equal(validateEmbeddingsRequest({ model: 'm', input: 'a', user: 'u'.repeat(256) }, atBounds).user?.length, 256);
    assert.equal(lateError({ model: 'm', input: ['abcd', 'abcd', 'abcd', 'a'] }, atBounds).code, 'array_above_max_length');
    assert.equal(lateError({ model: 'm', input: ['abcde'] }, atBounds).code, 'invalid_value');
    assert.equal(lateError({ model: 'm', input: [1, 2, 3] }, atBounds).code, 'array_above_max_length');
    assert.equal(lateError({ model: 'm', input: [[1, 2], [1, 2]] }, { ...atBounds, maxTotalBytes: 15 }).code, 'invalid_value');
  });

  test('the inputs are the body\'s own values and the body is not changed', () => {
    const tokens = [1, 2];
    const body = { model: 'm', input: [tokens] };
    const before = JSON.stringify(body);
    const request = validateEmbeddingsRequest(body, DEFAULTS);
    assert.equal(request.inputs[0], tokens);
    assert.equal(JSON.stringify(body), before);
  });

  test('an own property holding undefined is absent', () => {
    assert.equal(validateEmbeddingsRequest({ model: 'm', input: 'a', dimensions: undefined }, DEFAULTS).dimensions, null);
  });

  test('2,048 inputs of 1 kB pass at the defaults; the observer lets them through', () => {
    const text = JSON.stringify({ model: 'm', input: Array.from({ length: 2048 }, (_, i) => `${i} ${'x'.repeat(1000)}`) });
    const outcome = observe(text, 65_536, DEFAULTS);
    assert.equal(outcome.ok, true);
    const request = validateEmbeddingsRequest(outcome.ok ? outcome.value : null, DEFAULTS);
    assert.equal(request.inputs.length, 2048);
  });
});
