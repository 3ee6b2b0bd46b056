// Parts billed in retried attempts can take an embeddings request past
// limits.maxChargeMultiple (2) times its reservation on an honest upstream:
// the key's limits count the ceiling, the usage record what was billed, and the
// warning says why, without blaming the upstream.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ServerResponse } from 'node:http';
import { fakeEmbeddingsAnswer } from '../support/fake-embeddings.ts';
import type { UpstreamRequest } from './harness.ts';
import { accessLine, postEmbeddings, startEmbeddingsRig, type EmbeddingsRig } from './embeddings-fixtures.ts';

let rig: EmbeddingsRig;
before(async () => {
  rig = await startEmbeddingsRig({
    alias: { price: { input: 1000 }, maxInputsPerCall: 1 },
    embeddings: { maxConcurrentCalls: 1 },
    provider: { retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 } },
  });
});
after(() => rig.close());

const ok = (req: UpstreamRequest, res: ServerResponse): void => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(fakeEmbeddingsAnswer(req.body as Parameters<typeof fakeEmbeddingsAnswer>[0], { tokensPerInput: 900 })));
};

test('three attempts, the last part failing twice: 9000 tokens billed on a 4000-token reservation', async () => {
  let calls = 0;
  rig.answer = (req, res) => {
    calls++;
    if (calls === 4 || calls === 8) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"overloaded"}}');
      return;
    }
    ok(req, res);
  };
  const text = 'a'.repeat(996);
  const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: [text, text, text, text] }, { 'x-request-id': 'ceil-1' });
  assert.equal(res.status, 200);
  assert.equal(calls, 12);
  const line = await accessLine(rig.gw, 'ceil-1');
  const warn = rig.gw.logs.filter((l) => l['requestId'] === 'ceil-1' && l['level'] === 'warn' && l['msg'] !== 'upstream failed').map((l) => l['msg']);
  assert.equal(line['chargedTokens'], 9000);
  assert.deepEqual(warn, [
    "the calls the upstreams billed for an embeddings request (its retried attempts' parts included) came to more than limits.maxChargeMultiple times its reservation; the key limits count the ceiling, its usage what was billed",
  ]);
});
