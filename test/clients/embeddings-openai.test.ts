// The `openai` SDK's embeddings.create against the gateway, a fake upstream
// behind it in each of the two upstream encodings: what the SDK sends (base64
// unless told otherwise, then decoded by the SDK itself), the vectors it hands
// back bit for bit, batching, `dimensions` allowed and refused, a wrong-width
// answer, and the embedded demo alias service-embed with the example of
// docs/embeddings.md as shown and the curl answers quoted there and in the README.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { embeddedConfigValue } from '../../src/config/config-loader.ts';
import { demoEmbedding } from '../../src/providers/demo-embeddings.ts';
import { startGateway, type TestGateway } from '../gateway/harness.ts';
import { answering, postEmbeddings, startEmbeddingsRig, type EmbeddingsRig } from '../gateway/embeddings-fixtures.ts';
import { base64Of, fakeVector } from '../support/fake-embeddings.ts';
import { loadSnippet, repositoryRoot } from './client-snippets.ts';
import { recordingFetch } from './recording-fetch.ts';

const TEST_TIMEOUT = { timeout: 20_000 };

function client(gw: TestGateway) {
  const recorder = recordingFetch();
  const openai = new OpenAI({ baseURL: `${gw.baseUrl}/v1`, apiKey: gw.key, fetch: recorder.fetch, maxRetries: 0, timeout: 10_000 });
  return { openai, requests: recorder.requests };
}

/** The float32 bits of each value: equal arrays here are equal bit for bit. */
function bits(values: readonly number[]): string {
  return Buffer.from(new Float32Array(values).buffer).toString('hex');
}

for (const upstreamEncoding of ['base64', 'float'] as const) {
  describe(`an upstream asked for ${upstreamEncoding}`, () => {
    let rig: EmbeddingsRig;
    before(async () => {
      rig = await startEmbeddingsRig({
        provider: { embeddingsEncoding: upstreamEncoding },
        alias: { maxInputsPerCall: 2, acceptsDimensions: true },
        aliases: { 'fixed-embed': { kind: 'embeddings', provider: 'fake', model: 'fixed-model' } },
      });
    });
    after(() => rig.close());

    test('no encoding_format: the SDK sends base64 and decodes it to the upstream float32 values exactly', TEST_TIMEOUT, async () => {
      rig.answer = answering({ width: 12 });
      rig.upstream.requests.length = 0;
      const { openai, requests } = client(rig.gw);
      const answer = await openai.embeddings.create({ model: 'text-embed', input: ['alpha', 'beta'] });
      assert.deepEqual(requests.map((r) => r.body), [{ model: 'text-embed', input: ['alpha', 'beta'], encoding_format: 'base64' }]);
      assert.deepEqual(rig.upstream.requests.map((r) => r.body), [{ model: 'upstream-embed', input: ['alpha', 'beta'], encoding_format: upstreamEncoding }]);
      assert.deepEqual(answer, {
        object: 'list',
        data: [
          { object: 'embedding', index: 0, embedding: fakeVector('alpha', 12) },
          { object: 'embedding', index: 1, embedding: fakeVector('beta', 12) },
        ],
        model: 'text-embed',
        usage: { prompt_tokens: 6, total_tokens: 6 },
      });
      assert.deepEqual(answer.data.map((d) => bits(d.embedding)), [bits(fakeVector('alpha', 12)), bits(fakeVector('beta', 12))]);
    });

    test('encoding_format "float": sent as given, numbers back exactly', TEST_TIMEOUT, async () => {
      rig.answer = answering({ width: 6 });
      const { openai, requests } = client(rig.gw);
      const answer = await openai.embeddings.create({ model: 'text-embed', input: 'one text', encoding_format: 'float' });
      assert.deepEqual(requests.map((r) => r.body), [{ model: 'text-embed', input: 'one text', encoding_format: 'float' }]);
      assert.deepEqual(answer.data, [{ object: 'embedding', index: 0, embedding: fakeVector('one text', 6) }]);
    });

    test('encoding_format "base64": the raw strings, as OpenAI writes them', TEST_TIMEOUT, async () => {
      rig.answer = answering({ width: 6 });
      const { openai } = client(rig.gw);
      const answer = await openai.embeddings.create({ model: 'text-embed', input: ['a', 'b'], encoding_format: 'base64' });
      assert.deepEqual(answer.data.map((d) => d.embedding), [base64Of(fakeVector('a', 6)), base64Of(fakeVector('b', 6))]);
    });

    test('an upstream that answers the other encoding whatever it is asked: the same vectors', TEST_TIMEOUT, async () => {
      rig.answer = answering({ width: 5, encoding: upstreamEncoding === 'base64' ? 'float' : 'base64' });
      const { openai } = client(rig.gw);
      const decoded = await openai.embeddings.create({ model: 'text-embed', input: ['x', 'y'] });
      assert.deepEqual(decoded.data.map((d) => bits(d.embedding)), [bits(fakeVector('x', 5)), bits(fakeVector('y', 5))]);
      const floats = await openai.embeddings.create({ model: 'text-embed', input: 'x', encoding_format: 'float' });
      assert.deepEqual(floats.data[0]?.embedding, fakeVector('x', 5));
      const raw = await openai.embeddings.create({ model: 'text-embed', input: 'x', encoding_format: 'base64' });
      assert.equal(raw.data[0]?.embedding, base64Of(fakeVector('x', 5)));
    });

    test('more inputs than the target takes per call: one SDK request, three upstream calls, vectors in order', TEST_TIMEOUT, async () => {
      rig.answer = answering({ width: 4, shuffle: true, tokensPerInput: 2 });
      rig.upstream.requests.length = 0;
      const inputs = ['t0', 't1', 't2', 't3', 't4'];
      const { openai, requests } = client(rig.gw);
      const answer = await openai.embeddings.create({ model: 'text-embed', input: inputs });
      assert.equal(requests.length, 1);
      const sent = rig.upstream.requests.map((r) => (r.body as { input: string[] }).input).sort((a, b) => a[0]!.localeCompare(b[0]!));
      assert.deepEqual(sent, [['t0', 't1'], ['t2', 't3'], ['t4']]);
      assert.deepEqual(answer.data.map((d) => d.index), [0, 1, 2, 3, 4]);
      assert.deepEqual(answer.data.map((d) => bits(d.embedding)), inputs.map((t) => bits(fakeVector(t, 4))));
      assert.deepEqual(answer.usage, { prompt_tokens: 10, total_tokens: 10 });
    });

    test('dimensions: forwarded to a model that takes it, the vectors that wide', TEST_TIMEOUT, async () => {
      rig.answer = answering();
      rig.upstream.requests.length = 0;
      const { openai, requests } = client(rig.gw);
      const answer = await openai.embeddings.create({ model: 'text-embed', input: 'x', dimensions: 3 });
      assert.deepEqual(requests.map((r) => r.body), [{ model: 'text-embed', input: 'x', dimensions: 3, encoding_format: 'base64' }]);
      assert.deepEqual(rig.upstream.requests.map((r) => r.body), [{ model: 'upstream-embed', input: 'x', encoding_format: upstreamEncoding, dimensions: 3 }]);
      assert.deepEqual(answer.data[0]?.embedding, fakeVector('x', 3));
    });

    test('dimensions on a model that does not take it: the typed 400, nothing sent upstream', TEST_TIMEOUT, async () => {
      rig.upstream.requests.length = 0;
      const { openai } = client(rig.gw);
      const error = await openai.embeddings.create({ model: 'fixed-embed', input: 'x', dimensions: 3 }).then(
        () => assert.fail('expected a refusal'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof OpenAI.BadRequestError);
      assert.deepEqual({ status: error.status, type: error.type, code: error.code, param: error.param }, {
        status: 400,
        type: 'invalid_request_error',
        code: 'unsupported_parameter',
        param: 'dimensions',
      });
      assert.match(error.message, /^400 'dimensions' is not supported by model 'fixed-embed'/);
      assert.equal(rig.upstream.requests.length, 0);
    });

    test('an upstream vector of the wrong width: an APIError 502, no vectors', TEST_TIMEOUT, async () => {
      rig.answer = (req, res) => {
        const body = req.body as { input: string[] };
        const data = body.input.map((t, index) => ({ object: 'embedding', index, embedding: fakeVector(t, index === 0 ? 4 : 5) }));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data, model: 'm' }));
      };
      const { openai } = client(rig.gw);
      const error = await openai.embeddings.create({ model: 'text-embed', input: ['a', 'b'] }).then(
        () => assert.fail('expected a 502'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof OpenAI.InternalServerError);
      assert.deepEqual({ status: error.status, type: error.type, code: error.code }, { status: 502, type: 'upstream_error', code: 'bad_upstream_response' });
    });
  });
}

describe('Azure OpenAI as docs/embeddings.md configures it', () => {
  let rig: EmbeddingsRig;
  let gw: TestGateway;
  before(async () => {
    rig = await startEmbeddingsRig();
    const origin = new URL(rig.upstream.baseUrl).origin;
    const azure = { type: 'openai', apiKeyEnv: 'FAKE_UPSTREAM_KEY', apiKeyHeader: 'api-key', retry: { maxAttempts: 1 } };
    gw = await startGateway({
      configValue: {
        providers: {
          demo: { type: 'demo' },
          'azure-embed-small': { ...azure, baseUrl: `${origin}/openai/deployments/embed-small?api-version=2024-10-21` },
          azure: { ...azure, baseUrl: `${origin}/openai/v1` },
        },
        aliases: {
          'service-chat': { provider: 'demo', model: 'portcullis-demo' },
          'classic-embed': { kind: 'embeddings', provider: 'azure-embed-small', model: 'text-embedding-3-small' },
          'v1-embed': { kind: 'embeddings', provider: 'azure', model: 'embed-small' },
        },
        auto: { default: 'service-chat' },
      },
    });
  });
  after(async () => {
    await gw.close();
    await rig.close();
  });

  test('a deployment URL keeps its api-version after /embeddings, the v1 URL names the deployment as model; the key in api-key', TEST_TIMEOUT, async () => {
    rig.answer = answering({ width: 3 });
    rig.upstream.requests.length = 0;
    const { openai } = client(gw);
    for (const model of ['classic-embed', 'v1-embed']) {
      const answer = await openai.embeddings.create({ model, input: 'x' });
      assert.deepEqual(answer.data[0]?.embedding, fakeVector('x', 3));
    }
    assert.deepEqual(
      rig.upstream.requests.map((r) => [r.url, (r.body as { model: string }).model, r.headers['api-key'], r.headers['authorization']]),
      [
        ['/openai/deployments/embed-small/embeddings?api-version=2024-10-21', 'text-embedding-3-small', 'sk-upstream-secret', undefined],
        ['/openai/v1/embeddings', 'embed-small', 'sk-upstream-secret', undefined],
      ],
    );
  });
});

describe('the embedded demo alias service-embed', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ configValue: embeddedConfigValue() as Record<string, unknown> });
  });
  after(() => gw.close());

  test('deterministic unit vectors of 256 values; dimensions taken', TEST_TIMEOUT, async () => {
    const { openai } = client(gw);
    const answer = await openai.embeddings.create({ model: 'service-embed', input: ['the same text', 'the same text', 'another text'] });
    assert.equal(answer.model, 'service-embed');
    const [first, second, third] = answer.data.map((d) => d.embedding) as [number[], number[], number[]];
    assert.equal(first.length, 256);
    assert.equal(bits(first), bits(second));
    assert.notEqual(bits(first), bits(third));
    const again = await openai.embeddings.create({ model: 'service-embed', input: 'the same text', encoding_format: 'float' });
    assert.equal(bits(again.data[0]!.embedding), bits(first));
    for (const v of [first, third]) assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-6, `norm ${Math.hypot(...v)}`);
    // ceil(13 bytes / 4) + ceil(13 / 4) + ceil(12 / 4)
    assert.deepEqual(answer.usage, { prompt_tokens: 11, total_tokens: 11 });
    const narrow = await openai.embeddings.create({ model: 'service-embed', input: 'the same text', dimensions: 32 });
    assert.equal(narrow.data[0]?.embedding.length, 32);
    assert.ok(Math.abs(Math.hypot(...narrow.data[0]!.embedding) - 1) < 1e-6);
  });

  test('openai-embeddings.mjs: the demo vectors, exactly, and their usage', TEST_TIMEOUT, async () => {
    const run = await loadSnippet('openai-embeddings.mjs');
    assert.deepEqual(await run({ baseURL: `${gw.baseUrl}/v1`, apiKey: gw.key }), {
      model: 'service-embed',
      vectors: [Array.from(demoEmbedding('The cat sat on the mat.', 256)), Array.from(demoEmbedding('A dog slept on the rug.', 256))],
      // ceil(23 bytes / 4) each
      usage: { prompt_tokens: 12, total_tokens: 12 },
      short: Array.from(demoEmbedding('The cat sat on the mat.', 64)),
    });
  });

  test('the curl answers README.md and docs/embeddings.md quote are the demo\'s, byte for byte', TEST_TIMEOUT, async () => {
    const quoted: Array<[string, string]> = [];
    for (const page of ['README.md', path.join('docs', 'embeddings.md')]) {
      const text = readFileSync(path.join(repositoryRoot(), page), 'utf8');
      for (const m of text.matchAll(/\/v1\/embeddings[^']*-d '([^']*)'\n# → (.*)$/gm)) quoted.push([m[1] ?? '', m[2] ?? '']);
    }
    assert.equal(quoted.length, 4);
    for (const [body, answer] of quoted) assert.equal((await postEmbeddings(gw, body)).text, answer, body);
  });
});
