// The Vercel AI SDK's embed and embedMany (`ai` with
// `@ai-sdk/openai-compatible`'s embeddingModel) against the gateway and a fake
// upstream: what the SDK sends, the vectors exactly, usage, the SDK's own split
// (maxEmbeddingsPerCall) and the gateway's (maxInputsPerCall) together, and
// refusals as the SDK's APICallError; the example of docs/embeddings.md as
// shown, against the embedded demo alias service-embed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, embed, embedMany, wrapEmbeddingModel } from 'ai';
import { embeddedConfigValue } from '../../src/config/config-loader.ts';
import { demoEmbedding } from '../../src/providers/demo-embeddings.ts';
import { startGateway, type TestGateway } from '../gateway/harness.ts';
import { answering, startEmbeddingsRig, type EmbeddingsRig } from '../gateway/embeddings-fixtures.ts';
import { fakeVector } from '../support/fake-embeddings.ts';
import { loadSnippet } from './client-snippets.ts';
import { recordingFetch } from './recording-fetch.ts';

const TEST_TIMEOUT = { timeout: 20_000 };

let rig: EmbeddingsRig;
before(async () => {
  rig = await startEmbeddingsRig({
    alias: { maxInputsPerCall: 2, acceptsDimensions: true },
    aliases: { 'fixed-embed': { kind: 'embeddings', provider: 'fake', model: 'fixed-model' } },
  });
});
after(() => rig.close());

function provider() {
  const recorder = recordingFetch();
  const portcullis = createOpenAICompatible({ name: 'portcullis', baseURL: `${rig.gw.baseUrl}/v1`, apiKey: rig.gw.key, fetch: recorder.fetch });
  return { portcullis, requests: recorder.requests };
}

/** The inputs of each upstream call, in the order of their first input. */
function upstreamParts(): string[][] {
  return rig.upstream.requests.map((r) => (r.body as { input: string[] }).input).sort((a, b) => a[0]!.localeCompare(b[0]!));
}

test('embed: one value, sent as floats, the vector exactly and its usage', TEST_TIMEOUT, async () => {
  rig.answer = answering({ width: 10, tokensPerInput: 7 });
  rig.upstream.requests.length = 0;
  const { portcullis, requests } = provider();
  const result = await embed({ model: portcullis.embeddingModel('text-embed'), value: 'sunny day at the beach', maxRetries: 0 });
  assert.deepEqual(requests.map((r) => [r.url, r.body]), [[`${rig.gw.baseUrl}/v1/embeddings`, { model: 'text-embed', input: ['sunny day at the beach'], encoding_format: 'float' }]]);
  assert.deepEqual(rig.upstream.requests.map((r) => r.body), [{ model: 'upstream-embed', input: ['sunny day at the beach'], encoding_format: 'base64' }]);
  assert.deepEqual(result.embedding, fakeVector('sunny day at the beach', 10));
  assert.deepEqual(result.usage, { tokens: 7 });
});

test("embedMany: the gateway's split alone (one SDK call, three upstream calls), vectors in order, usage summed", TEST_TIMEOUT, async () => {
  rig.answer = answering({ width: 4, shuffle: true, tokensPerInput: 3 });
  rig.upstream.requests.length = 0;
  const values = ['v0', 'v1', 'v2', 'v3', 'v4'];
  const { portcullis, requests } = provider();
  const result = await embedMany({ model: portcullis.embeddingModel('text-embed'), values, maxRetries: 0 });
  assert.deepEqual(requests.map((r) => r.body), [{ model: 'text-embed', input: values, encoding_format: 'float' }]);
  assert.deepEqual(upstreamParts(), [['v0', 'v1'], ['v2', 'v3'], ['v4']]);
  assert.deepEqual(result.embeddings, values.map((v) => fakeVector(v, 4)));
  assert.deepEqual(result.usage, { tokens: 15 });
});

test("embedMany with maxEmbeddingsPerCall: the SDK's split of 3, then the gateway's of 2 within each, vectors in order", TEST_TIMEOUT, async () => {
  rig.answer = answering({ width: 4, tokensPerInput: 1 });
  rig.upstream.requests.length = 0;
  const values = ['w0', 'w1', 'w2', 'w3', 'w4', 'w5', 'w6'];
  const { portcullis, requests } = provider();
  const model = wrapEmbeddingModel({ model: portcullis.embeddingModel('text-embed'), middleware: { overrideMaxEmbeddingsPerCall: () => 3 } });
  const result = await embedMany({ model, values, maxParallelCalls: 2, maxRetries: 0 });
  const sent = requests.map((r) => (r.body as { input: string[] }).input).sort((a, b) => a[0]!.localeCompare(b[0]!));
  assert.deepEqual(sent, [['w0', 'w1', 'w2'], ['w3', 'w4', 'w5'], ['w6']]);
  assert.deepEqual(upstreamParts(), [['w0', 'w1'], ['w2'], ['w3', 'w4'], ['w5'], ['w6']]);
  assert.deepEqual(result.embeddings, values.map((v) => fakeVector(v, 4)));
  assert.deepEqual(result.usage, { tokens: 7 });
});

test('dimensions: sent by embed, forwarded, the vector that wide', TEST_TIMEOUT, async () => {
  rig.answer = answering();
  rig.upstream.requests.length = 0;
  const { portcullis, requests } = provider();
  const result = await embed({ model: portcullis.embeddingModel('text-embed'), value: 'x', dimensions: 3, maxRetries: 0 });
  assert.deepEqual(requests.map((r) => r.body), [{ model: 'text-embed', input: ['x'], encoding_format: 'float', dimensions: 3 }]);
  assert.deepEqual(rig.upstream.requests.map((r) => r.body), [{ model: 'upstream-embed', input: ['x'], encoding_format: 'base64', dimensions: 3 }]);
  assert.deepEqual(result.embedding, fakeVector('x', 3));
});

test("dimensions on a model that does not take it: an APICallError with the gateway's 400", TEST_TIMEOUT, async () => {
  rig.upstream.requests.length = 0;
  const { portcullis } = provider();
  const error = await embed({ model: portcullis.embeddingModel('fixed-embed'), value: 'x', dimensions: 3, maxRetries: 0 }).then(
    () => assert.fail('expected a refusal'),
    (e: unknown) => e,
  );
  assert.ok(APICallError.isInstance(error));
  assert.equal(error.statusCode, 400);
  assert.equal(error.isRetryable, false);
  assert.deepEqual((JSON.parse(error.responseBody ?? '') as { error: { code: string; param: string } }).error, {
    message: "'dimensions' is not supported by model 'fixed-embed': its upstream model returns vectors of one fixed width. Leave 'dimensions' out, or use a model that takes it.",
    type: 'invalid_request_error',
    param: 'dimensions',
    code: 'unsupported_parameter',
  });
  assert.match(error.message, /^'dimensions' is not supported by model 'fixed-embed'/);
  assert.equal(rig.upstream.requests.length, 0);
});

test('a chat model named to embed: the 400 model_kind_mismatch naming the embeddings models', TEST_TIMEOUT, async () => {
  const { portcullis } = provider();
  const error = await embed({ model: portcullis.embeddingModel('service-chat'), value: 'x', maxRetries: 0 }).then(
    () => assert.fail('expected a refusal'),
    (e: unknown) => e,
  );
  assert.ok(APICallError.isInstance(error));
  assert.equal(error.statusCode, 400);
  const message = "'service-chat' is a chat model; embeddings take one of: text-embed, fixed-embed.";
  assert.deepEqual(JSON.parse(error.responseBody ?? ''), { error: { message, type: 'invalid_request_error', param: 'model', code: 'model_kind_mismatch' } });
  assert.equal(error.message, message);
});

describe('ai-sdk-embeddings.mjs against the embedded demo', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ configValue: embeddedConfigValue() as Record<string, unknown> });
  });
  after(() => gw.close());

  test('embed and embedMany as shown: the demo vectors exactly, usage, their similarity', TEST_TIMEOUT, async () => {
    const run = await loadSnippet('ai-sdk-embeddings.mjs');
    const sunny = Array.from(demoEmbedding('sunny day at the beach', 256));
    const rainy = Array.from(demoEmbedding('rainy afternoon in the city', 256));
    const result = (await run({ baseURL: `${gw.baseUrl}/v1`, apiKey: gw.key })) as { similarity: number };
    const dot = sunny.reduce((sum, v, i) => sum + v * rainy[i]!, 0);
    assert.ok(Math.abs(result.similarity - dot) < 1e-6, `similarity ${result.similarity}, dot product ${dot}`);
    // ceil(22 bytes / 4); ceil(22 / 4) + ceil(27 / 4)
    assert.deepEqual(result, { embedding: sunny, tokens: 6, embeddings: [sunny, rainy], manyTokens: 13, similarity: result.similarity });
  });
});
