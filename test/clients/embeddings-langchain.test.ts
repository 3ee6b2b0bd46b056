// LangChain's OpenAIEmbeddings (`@langchain/openai`, on the `openai` SDK)
// against the gateway and a fake upstream: what it sends (the SDK's base64
// unless encodingFormat says otherwise, newlines replaced by spaces,
// dimensions when set), its batchSize split and the gateway's, the vectors
// exactly, and a refusal as LangChain surfaces it; the example of
// docs/embeddings.md as shown, against the embedded demo alias service-embed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { OpenAIEmbeddings, type OpenAIEmbeddingsParams } from '@langchain/openai';
import { embeddedConfigValue } from '../../src/config/config-loader.ts';
import { demoEmbedding } from '../../src/providers/demo-embeddings.ts';
import { startGateway, type TestGateway } from '../gateway/harness.ts';
import { answering, startEmbeddingsRig, type EmbeddingsRig } from '../gateway/embeddings-fixtures.ts';
import { base64Of, fakeVector } from '../support/fake-embeddings.ts';
import { loadSnippet } from './client-snippets.ts';
import { recordingFetch } from './recording-fetch.ts';

const TEST_TIMEOUT = { timeout: 20_000 };

let rig: EmbeddingsRig;
before(async () => {
  rig = await startEmbeddingsRig({
    alias: { maxInputsPerCall: 3, acceptsDimensions: true },
    aliases: { 'fixed-embed': { kind: 'embeddings', provider: 'fake', model: 'fixed-model' } },
  });
});
after(() => rig.close());

function embeddings(fields: Partial<OpenAIEmbeddingsParams> = {}) {
  const recorder = recordingFetch();
  const model = new OpenAIEmbeddings({
    model: 'text-embed',
    apiKey: rig.gw.key,
    maxRetries: 0,
    timeout: 10_000,
    ...fields,
    configuration: { baseURL: `${rig.gw.baseUrl}/v1`, fetch: recorder.fetch },
  });
  return { model, requests: recorder.requests };
}

/** The float32 bits of each value: equal arrays here are equal bit for bit. */
function bits(values: readonly number[]): string {
  return Buffer.from(new Float32Array(values).buffer).toString('hex');
}

function inputsOf(requests: ReadonlyArray<{ body: unknown }>): string[][] {
  return requests.map((r) => (r.body as { input: string[] }).input).sort((a, b) => a[0]!.localeCompare(b[0]!));
}

test('embedQuery: a single string, newlines as spaces, base64 from the SDK decoded to the exact vector', TEST_TIMEOUT, async () => {
  rig.answer = answering({ width: 8 });
  rig.upstream.requests.length = 0;
  const { model, requests } = embeddings();
  const vector = await model.embedQuery('hello\nworld');
  assert.deepEqual(requests.map((r) => [r.url, r.body]), [[`${rig.gw.baseUrl}/v1/embeddings`, { model: 'text-embed', input: 'hello world', encoding_format: 'base64' }]]);
  assert.deepEqual(rig.upstream.requests.map((r) => r.body), [{ model: 'upstream-embed', input: 'hello world', encoding_format: 'base64' }]);
  assert.deepEqual(vector, fakeVector('hello world', 8));
  assert.equal(bits(vector), bits(fakeVector('hello world', 8)));
});

test("embedDocuments: LangChain's batchSize split, then the gateway's within a batch, vectors in order", TEST_TIMEOUT, async () => {
  rig.answer = answering({ width: 4, shuffle: true });
  rig.upstream.requests.length = 0;
  const texts = ['d0', 'd1', 'd2', 'd3', 'd4'];
  const { model, requests } = embeddings({ batchSize: 4 });
  const vectors = await model.embedDocuments(texts);
  assert.deepEqual(inputsOf(requests), [['d0', 'd1', 'd2', 'd3'], ['d4']]);
  for (const r of requests) assert.deepEqual(Object.keys(r.body as object), ['model', 'input', 'encoding_format']);
  assert.deepEqual(inputsOf(rig.upstream.requests), [['d0', 'd1', 'd2'], ['d3'], ['d4']]);
  assert.deepEqual(vectors.map(bits), texts.map((t) => bits(fakeVector(t, 4))));
});

test('dimensions and encodingFormat "float": both sent as set, numbers back exactly', TEST_TIMEOUT, async () => {
  rig.answer = answering();
  rig.upstream.requests.length = 0;
  const { model, requests } = embeddings({ dimensions: 3, encodingFormat: 'float' });
  const vectors = await model.embedDocuments(['a', 'b']);
  assert.deepEqual(requests.map((r) => r.body), [{ model: 'text-embed', input: ['a', 'b'], dimensions: 3, encoding_format: 'float' }]);
  assert.deepEqual(rig.upstream.requests.map((r) => r.body), [{ model: 'upstream-embed', input: ['a', 'b'], encoding_format: 'base64', dimensions: 3 }]);
  assert.deepEqual(vectors, [fakeVector('a', 3), fakeVector('b', 3)]);
});

test('encodingFormat "base64": LangChain hands back the base64 strings undecoded (the SDK decodes only when it chose base64)', TEST_TIMEOUT, async () => {
  rig.answer = answering({ width: 4 });
  const { model } = embeddings({ encodingFormat: 'base64' });
  const vector = (await model.embedQuery('q')) as unknown;
  assert.equal(vector, base64Of(fakeVector('q', 4)));
});

test("dimensions on a model that does not take it: the SDK's BadRequestError, status, code and param", TEST_TIMEOUT, async () => {
  rig.upstream.requests.length = 0;
  const { model } = embeddings({ model: 'fixed-embed', dimensions: 3 });
  const error = await model.embedQuery('x').then(
    () => assert.fail('expected a refusal'),
    (e: unknown) => e as { status?: number; code?: string; param?: string; constructor: { name: string } },
  );
  assert.deepEqual({ name: error.constructor.name, status: error.status, code: error.code, param: error.param }, {
    name: 'BadRequestError',
    status: 400,
    code: 'unsupported_parameter',
    param: 'dimensions',
  });
  assert.equal(rig.upstream.requests.length, 0);
});

describe('langchain-embeddings.mjs against the embedded demo', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ configValue: embeddedConfigValue() as Record<string, unknown> });
  });
  after(() => gw.close());

  test('embedQuery and embedDocuments as shown: the demo vectors exactly', TEST_TIMEOUT, async () => {
    const run = await loadSnippet('langchain-embeddings.mjs');
    assert.deepEqual(await run({ baseURL: `${gw.baseUrl}/v1`, apiKey: gw.key }), {
      query: Array.from(demoEmbedding('What did the cat sit on?', 256)),
      documents: [Array.from(demoEmbedding('The cat sat on the mat.', 256)), Array.from(demoEmbedding('A dog slept on the rug.', 256))],
    });
  });
});
