// POST /v1/embeddings end to end, on both upstream transports: what the
// upstream receives, the vectors the client gets in each encoding from each
// upstream encoding (bit for bit), batching and reassembly, width checks, and
// `dimensions` allowed and refused.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { base64Of, fakeVector, valuesOf } from '../support/fake-embeddings.ts';
import { accessLine, answering, postEmbeddings, startEmbeddingsRig, TRANSPORTS, type EmbeddingsRig } from './embeddings-fixtures.ts';

interface EmbeddingsAnswer {
  object: string;
  data: Array<{ object: string; index: number; embedding: number[] | string }>;
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

for (const transport of TRANSPORTS) {
  describe(`embeddings through the ${transport} transport`, () => {
    let rig: EmbeddingsRig;
    before(async () => {
      rig = await startEmbeddingsRig({ transport, alias: { maxInputsPerCall: 3 } });
    });
    after(() => rig.close());

    test('a base64 request: the upstream is asked for base64 and the bytes come back unchanged, model the alias', async () => {
      rig.answer = answering({ width: 8 });
      rig.upstream.requests.length = 0;
      const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: ['alpha', 'beta'], encoding_format: 'base64' });
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], 'application/json');
      assert.equal(res.headers['x-portcullis-route'], 'text-embed; reason=requested');
      assert.deepEqual(rig.upstream.requests.map((r) => [r.method, r.url, r.body]), [
        ['POST', '/v1/embeddings', { model: 'upstream-embed', input: ['alpha', 'beta'], encoding_format: 'base64' }],
      ]);
      assert.equal(rig.upstream.requests[0]?.headers['authorization'], 'Bearer sk-upstream-secret');
      assert.equal(
        res.text,
        `{"object":"list","data":[{"object":"embedding","index":0,"embedding":"${base64Of(fakeVector('alpha', 8))}"},{"object":"embedding","index":1,"embedding":"${base64Of(fakeVector('beta', 8))}"}],"model":"text-embed","usage":{"prompt_tokens":6,"total_tokens":6}}`,
      );
    });

    test('a float request from a base64 upstream: each float32 widened exactly', async () => {
      rig.answer = answering({ width: 16 });
      const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: 'one text' });
      const body = res.json() as EmbeddingsAnswer;
      assert.equal(res.status, 200);
      assert.deepEqual(body.data, [{ object: 'embedding', index: 0, embedding: fakeVector('one text', 16) }]);
      for (const v of body.data[0]?.embedding as number[]) assert.equal(Math.fround(v), v);
    });

    test('an upstream that answers floats whatever it is asked: base64 for a base64 client, the float32 of each number', async () => {
      rig.answer = (req, res) => {
        const body = req.body as { input: string[] };
        // Doubles that are not float32 values: the client's base64 holds their float32 rounding.
        const data = body.input.map((_, index) => ({ object: 'embedding', index, embedding: [0.1, -0.2, 1e-40, 3.4e38] }));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data, model: 'm', usage: { prompt_tokens: 2, total_tokens: 2 } }));
      };
      const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: ['x'], encoding_format: 'base64' });
      assert.equal(res.status, 200);
      const body = res.json() as EmbeddingsAnswer;
      assert.equal(body.data[0]?.embedding, base64Of([0.1, -0.2, 1e-40, 3.4e38].map(Math.fround)));
      assert.deepEqual(valuesOf(body.data[0]?.embedding as string), [0.1, -0.2, 1e-40, 3.4e38].map(Math.fround));
    });

    test("float from a float upstream: the upstream's numbers exactly", async () => {
      rig.answer = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,-0.30000000000000004,5e-324,-0]}],"model":"m","usage":{"prompt_tokens":1,"total_tokens":1}}');
      };
      const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: 'x', encoding_format: 'float' });
      assert.equal(res.status, 200);
      assert.equal(res.text, '{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,-0.30000000000000004,5e-324,-0]}],"model":"text-embed","usage":{"prompt_tokens":1,"total_tokens":1}}');
    });

    test('more inputs than a call takes: split in order, reassembled by index, usage summed', async () => {
      rig.answer = answering({ width: 4, shuffle: true, tokensPerInput: 5 });
      rig.upstream.requests.length = 0;
      const inputs = Array.from({ length: 8 }, (_, i) => `text ${i}`);
      const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: inputs, encoding_format: 'base64' }, { 'x-request-id': `split-${transport}` });
      assert.equal(res.status, 200);
      const sent = rig.upstream.requests.map((r) => (r.body as { input: string[] }).input).sort((a, b) => a[0]!.localeCompare(b[0]!));
      assert.deepEqual(sent, [inputs.slice(0, 3), inputs.slice(3, 6), inputs.slice(6)]);
      const body = res.json() as EmbeddingsAnswer;
      assert.deepEqual(body.data.map((d) => d.index), [0, 1, 2, 3, 4, 5, 6, 7]);
      assert.deepEqual(body.data.map((d) => d.embedding), inputs.map((t) => base64Of(fakeVector(t, 4))));
      assert.deepEqual(body.usage, { prompt_tokens: 40, total_tokens: 40 });
      const line = await accessLine(rig.gw, `split-${transport}`);
      assert.equal(line['inputs'], 8);
      assert.equal(line['calls'], 3);
      assert.equal(line['promptTokens'], 40);
      assert.equal(line['completionTokens'], 0);
      assert.equal(line['target'], 'fake/upstream-embed');
      assert.equal(line['charge'], 'usage');
    });

    test('token inputs go upstream as given: one token list, and lists of them split', async () => {
      rig.answer = answering({ width: 2 });
      rig.upstream.requests.length = 0;
      const one = await postEmbeddings(rig.gw, { model: 'text-embed', input: [1, 2, 3] });
      assert.equal(one.status, 200);
      assert.deepEqual((rig.upstream.requests[0]?.body as { input: unknown }).input, [1, 2, 3]);
      rig.upstream.requests.length = 0;
      const many = await postEmbeddings(rig.gw, { model: 'text-embed', input: [[1], [2], [3], [4]] });
      assert.equal(many.status, 200);
      const sent = rig.upstream.requests.map((r) => (r.body as { input: number[][] }).input).sort((a, b) => a[0]![0]! - b[0]![0]!);
      assert.deepEqual(sent, [[[1], [2], [3]], [[4]]]);
      assert.deepEqual((many.json() as EmbeddingsAnswer).data.map((d) => d.embedding), [[1], [2], [3], [4]].map((t) => fakeVector(t, 2)));
    });

    test('a vector of the wrong width is a 502, never passed on', async () => {
      rig.answer = (req, res) => {
        const body = req.body as { input: string[] };
        const data = body.input.map((t, index) => ({ object: 'embedding', index, embedding: base64Of(fakeVector(t, index === 1 ? 3 : 4)) }));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data, model: 'm' }));
      };
      const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: ['a', 'b'], encoding_format: 'base64' });
      assert.equal(res.status, 502);
      assert.deepEqual(res.json(), {
        error: {
          message: "The upstream provider's embeddings answer has an embedding of 3 dimensions where 4 were expected (data[1]).",
          type: 'upstream_error',
          param: null,
          code: 'bad_upstream_response',
        },
      });
    });

    test('parts whose widths differ are a 502', async () => {
      rig.answer = (req, res) => {
        const body = req.body as { input: string[] };
        const width = body.input[0] === 'a' ? 4 : 5;
        const data = body.input.map((t, index) => ({ object: 'embedding', index, embedding: fakeVector(t, width) }));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data, model: 'm' }));
      };
      const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: ['a', 'b', 'c', 'd'] });
      assert.equal(res.status, 502);
      const error = (res.json() as { error: { code: string; message: string } }).error;
      assert.equal(error.code, 'bad_upstream_response');
      // Whichever part answered first sets the width the other is held to.
      assert.match(error.message, /of [45] (dimensions|values) .* [45] /);
    });
  });
}

describe('dimensions', () => {
  let rig: EmbeddingsRig;
  before(async () => {
    rig = await startEmbeddingsRig({
      aliases: {
        'fixed-embed': { kind: 'embeddings', provider: 'fake', model: 'fixed-model' },
        'mixed-embed': { kind: 'embeddings', targets: [{ provider: 'fake', model: 'fixed-model' }, { provider: 'fake', model: 'flexible-model', acceptsDimensions: true, priority: 1 }] },
      },
      alias: { acceptsDimensions: true },
    });
  });
  after(() => rig.close());

  test('forwarded to a target that takes it, and every vector held to it', async () => {
    rig.answer = answering();
    rig.upstream.requests.length = 0;
    const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: 'x', dimensions: 5 });
    assert.equal(res.status, 200);
    assert.equal((rig.upstream.requests[0]?.body as { dimensions: number }).dimensions, 5);
    assert.equal(((res.json() as EmbeddingsAnswer).data[0]?.embedding as number[]).length, 5);
    rig.answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: fakeVector('x', 6) }], model: 'm' }));
    };
    const wrong = await postEmbeddings(rig.gw, { model: 'text-embed', input: 'x', dimensions: 5 });
    assert.equal(wrong.status, 502);
  });

  test('refused with a 400 naming it when no target takes it, before any upstream call', async () => {
    rig.upstream.requests.length = 0;
    const res = await postEmbeddings(rig.gw, { model: 'fixed-embed', input: 'x', dimensions: 5 });
    assert.equal(res.status, 400);
    assert.deepEqual(res.json(), {
      error: {
        message: "'dimensions' is not supported by model 'fixed-embed': its upstream model returns vectors of one fixed width. Leave 'dimensions' out, or use a model that takes it.",
        type: 'invalid_request_error',
        param: 'dimensions',
        code: 'unsupported_parameter',
      },
    });
    assert.equal(rig.upstream.requests.length, 0);
  });

  test('an alias with targets of both kinds sends it only to the one that takes it', async () => {
    rig.answer = answering();
    rig.upstream.requests.length = 0;
    const res = await postEmbeddings(rig.gw, { model: 'mixed-embed', input: 'x', dimensions: 3 });
    assert.equal(res.status, 200);
    assert.deepEqual(rig.upstream.requests.map((r) => (r.body as { model: string }).model), ['flexible-model']);
    rig.upstream.requests.length = 0;
    const plain = await postEmbeddings(rig.gw, { model: 'mixed-embed', input: 'x' });
    assert.equal(plain.status, 200);
    assert.deepEqual(rig.upstream.requests.map((r) => r.body), [{ model: 'fixed-model', input: 'x', encoding_format: 'base64' }]);
  });
});

describe('the demo behind an embeddings alias', () => {
  let rig: EmbeddingsRig;
  before(async () => {
    rig = await startEmbeddingsRig({ aliases: { 'demo-embed': { kind: 'embeddings', provider: 'demo', model: 'portcullis-demo-embed' } } });
  });
  after(() => rig.close());

  test('a width past its widest is a 400 naming dimensions, before any work', async () => {
    const res = await postEmbeddings(rig.gw, { model: 'demo-embed', input: 'x', dimensions: 4097 });
    assert.equal(res.status, 400);
    assert.deepEqual(res.json(), {
      error: { message: "'dimensions' is at most 4096 for model 'demo-embed'; got 4097.", type: 'invalid_request_error', param: 'dimensions', code: 'invalid_value' },
    });
    const widest = await postEmbeddings(rig.gw, { model: 'demo-embed', input: 'x', dimensions: 4096 });
    assert.equal(widest.status, 200);
    assert.equal(((widest.json() as EmbeddingsAnswer).data[0]?.embedding as number[]).length, 4096);
  });
});
