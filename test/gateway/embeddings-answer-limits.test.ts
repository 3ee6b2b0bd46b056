// An upstream's vectors at the edges: a number a float32 cannot hold, and
// answers larger than a chat answer's bound (maxResponseBytes).
import assert from 'node:assert/strict';
import { after, afterEach, describe, test } from 'node:test';
import { base64Of, fakeVector } from '../support/fake-embeddings.ts';
import { answering, postEmbeddings, startEmbeddingsRig, type EmbeddingsRig } from './embeddings-fixtures.ts';

describe('a float upstream number past the range of a float32', () => {
  let rig: EmbeddingsRig;
  after(() => rig.close());
  test('3.5e38 is a 502 bad_upstream_response, never an infinity in a base64 vector', async () => {
    rig = await startEmbeddingsRig();
    rig.answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,3.5e38,-1e39]}],"model":"m","usage":{"prompt_tokens":1,"total_tokens":1}}');
    };
    const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: 'x', encoding_format: 'base64' });
    assert.equal(res.status, 502);
    assert.deepEqual(res.json(), {
      error: {
        message: "The upstream provider's embeddings answer has a value outside the range of a float32 (data[0].embedding[1]).",
        type: 'upstream_error',
        param: null,
        code: 'bad_upstream_response',
      },
    });
  });
});

describe('answers larger than maxResponseBytes (16 MiB): up to 128 KiB an input', () => {
  let rig: EmbeddingsRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  test('a float upstream, 512 inputs in one call of a 3072-wide model (about 30 MB of numbers)', async () => {
    rig = await startEmbeddingsRig({ provider: { embeddingsEncoding: 'float' } });
    rig.answer = answering({ width: 3072, encoding: 'float' });
    const inputs = Array.from({ length: 512 }, (_, i) => `t${i}`);
    const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: inputs, encoding_format: 'base64' });
    assert.equal(res.status, 200);
    const data = (res.json() as { data: Array<{ embedding: string }> }).data;
    assert.equal(data.length, 512);
    assert.equal(data[511]?.embedding, base64Of(fakeVector('t511', 3072)));
  });

  test('2048 inputs in one call of a 1536-wide model in base64 (25 MB)', async () => {
    rig = await startEmbeddingsRig({ alias: { maxInputsPerCall: 2048 } });
    rig.answer = answering({ width: 1536 });
    const inputs = Array.from({ length: 2048 }, (_, i) => `t${i}`);
    const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: inputs, encoding_format: 'base64' });
    assert.equal(res.status, 200);
    const data = (res.json() as { data: Array<{ embedding: string }> }).data;
    assert.equal(data.length, 2048);
    assert.equal(data[2047]?.embedding, base64Of(fakeVector('t2047', 1536)));
  });
});
