// Review: the embeddings handler makes ONE body observer (src/gateway/embeddings-endpoint.ts,
// `const observer = embeddingsObserver(bounds)` at handler creation) although the observer
// keeps per-request state (the kind of input[0]; its own doc says "make one per request").
// Two bodies arriving at once share it: a valid single token array of 3000 ids (within
// maxInputTokens 8192) is refused as "more than 2048 inputs" because another request's
// input[0] was a string.
import assert from 'node:assert/strict';
import { request as httpRequest, type ClientRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { startEmbeddingsRig, type EmbeddingsRig } from '../gateway/embeddings-fixtures.ts';

function open(rig: EmbeddingsRig): { req: ClientRequest; answer: Promise<{ status: number; text: string }> } {
  const url = new URL(rig.gw.baseUrl);
  const req = httpRequest({
    host: url.hostname,
    port: url.port,
    method: 'POST',
    path: '/v1/embeddings',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${rig.gw.key}`, 'transfer-encoding': 'chunked' },
  });
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
  });
  req.flushHeaders();
  return { req, answer };
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('review: one observer shared by concurrent embeddings requests', () => {
  let rig: EmbeddingsRig;
  before(async () => {
    rig = await startEmbeddingsRig({ aliases: { 'demo-embed': { kind: 'embeddings', provider: 'demo', model: 'portcullis-demo-embed' } } });
  });
  after(() => rig.close());

  test('a 3000-id token array is judged by another request\'s input[0]', async () => {
    const tokens = open(rig);
    const strings = open(rig);
    tokens.req.write('{"model":"demo-embed","input":[1');
    await pause(500);
    strings.req.write('{"model":"demo-embed","input":["a"');
    await pause(500);
    tokens.req.end(`${',1'.repeat(2999)}]}`);
    strings.req.end(',"b"]}');
    const [t, s] = await Promise.all([tokens.answer, strings.answer]);
    assert.equal(s.status, 200);
    assert.equal(t.status, 200, `the token array: seen ${t.status} ${t.text}`);
  });
});
