// Review: vectors and answer sizes.
import assert from 'node:assert/strict';
import { after, afterEach, describe, test } from 'node:test';
import { valuesOf } from '../support/fake-embeddings.ts';
import { answering, postEmbeddings, startEmbeddingsRig, type EmbeddingsRig } from '../gateway/embeddings-fixtures.ts';

describe('review: a float upstream number past float32 range', () => {
  let rig: EmbeddingsRig;
  after(() => rig.close());
  test('3.5e38 (finite double, no float32) to a base64 client: expected 502 bad_upstream_response, not Infinity in the vector', async () => {
    rig = await startEmbeddingsRig();
    rig.answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,3.5e38,-1e39]}],"model":"m","usage":{"prompt_tokens":1,"total_tokens":1}}');
    };
    const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: 'x', encoding_format: 'base64' });
    const body = res.json() as { data?: Array<{ embedding: string }> };
    const seen = body.data === undefined ? res.text : valuesOf(body.data[0]?.embedding as string).join(',');
    assert.equal(res.status, 502, `seen ${res.status}: ${seen}`);
  });
});

describe('review: answer size against the exchange bound (maxResponseBytes, default 16 MiB)', () => {
  let rig: EmbeddingsRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  test('provider embeddingsEncoding float, default maxInputsPerCall (openai 512), a 3072-wide model: 512 inputs answer', async () => {
    rig = await startEmbeddingsRig({ provider: { embeddingsEncoding: 'float' } });
    rig.answer = answering({ width: 3072, encoding: 'float' });
    const inputs = Array.from({ length: 512 }, (_, i) => `t${i}`);
    const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: inputs, encoding_format: 'base64' });
    assert.equal(res.status, 200, `seen ${res.status}: ${res.text.slice(0, 300)}`);
  });

  test("docs/config.md's own example (text-embedding-3-small, 1536 wide, maxInputsPerCall 2048, base64): 2048 inputs answer", async () => {
    rig = await startEmbeddingsRig({ alias: { maxInputsPerCall: 2048 } });
    rig.answer = answering({ width: 1536 });
    const inputs = Array.from({ length: 2048 }, (_, i) => `t${i}`);
    const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: inputs, encoding_format: 'base64' });
    assert.equal(res.status, 200, `seen ${res.status}: ${res.text.slice(0, 300)}`);
  });
});
