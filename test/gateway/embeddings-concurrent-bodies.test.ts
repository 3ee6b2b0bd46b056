// Two embeddings bodies arriving at the same time: each is checked as it
// arrives by an observer of its own (one that remembers what a body's first
// input was: a single token array is bounded by maxInputTokens, a list by
// maxInputs), so one request never judges another's.
import assert from 'node:assert/strict';
import { request as httpRequest, type ClientRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { startEmbeddingsRig, type EmbeddingsRig } from './embeddings-fixtures.ts';

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

describe('concurrent embeddings bodies', () => {
  let rig: EmbeddingsRig;
  before(async () => {
    rig = await startEmbeddingsRig({ aliases: { 'demo-embed': { kind: 'embeddings', provider: 'demo', model: 'portcullis-demo-embed' } } });
  });
  after(() => rig.close());

  test("a 3000-id token array still arriving is not judged by a list of texts that came and went meanwhile", async () => {
    const tokens = open(rig);
    tokens.req.write('{"model":"demo-embed","input":[1');
    // A whole request from start to answer while the token array is open.
    const strings = open(rig);
    strings.req.end('{"model":"demo-embed","input":["a","b"]}');
    const s = await strings.answer;
    assert.equal(s.status, 200);
    tokens.req.end(`${',1'.repeat(2999)}]}`);
    const t = await tokens.answer;
    assert.equal(t.status, 200, t.text);
    assert.equal((JSON.parse(t.text) as { data: unknown[] }).data.length, 1);
  });
});
