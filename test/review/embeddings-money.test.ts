// Review: money of split embeddings requests. A part that the upstream
// answered (and billed) is not charged when another part of the attempt fails.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ServerResponse } from 'node:http';
import { fakeEmbeddingsAnswer } from '../support/fake-embeddings.ts';
import type { UpstreamRequest } from '../gateway/harness.ts';
import { accessLine, postEmbeddings, startEmbeddingsRig, type EmbeddingsRig } from '../gateway/embeddings-fixtures.ts';

const PRICE = { input: 1000 };

describe('review: billed parts of a failed or retried attempt', () => {
  let rig: EmbeddingsRig;
  before(async () => {
    rig = await startEmbeddingsRig({
      alias: { price: PRICE, maxInputsPerCall: 1 },
      embeddings: { maxConcurrentCalls: 1 },
      provider: { retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 } },
    });
  });
  after(() => rig.close());

  async function billed(id: string): Promise<number> {
    await rig.gw.flushUsage();
    const totals = (await rig.gw.state.usage.totals()).get(id);
    return (totals?.promptTokens ?? 0) + (totals?.completionTokens ?? 0);
  }

  const ok = (req: UpstreamRequest, res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(fakeEmbeddingsAnswer(req.body as Parameters<typeof fakeEmbeddingsAnswer>[0], { tokensPerInput: 900 })));
  };

  test('one part refused by the upstream (400) after another part was answered with usage 900: the key pays nothing', async () => {
    rig.upstream.requests.length = 0;
    rig.answer = (req, res) => {
      const input = (req.body as { input: string[] }).input;
      if (input[0] === 'BAD') {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"This model\'s maximum context length is 8192 tokens","type":"invalid_request_error"}}');
        return;
      }
      ok(req, res);
    };
    const created = await rig.gw.state.keys.create('review-part-400');
    const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: ['a'.repeat(996), 'a'.repeat(996), 'BAD'] }, { authorization: `Bearer ${created.key}`, 'x-request-id': 'rv-400' });
    assert.equal(res.status, 400);
    // The upstream answered two parts with usage (2 x 900 tokens): it bills them.
    assert.equal(rig.upstream.requests.length, 3);
    const line = await accessLine(rig.gw, 'rv-400');
    assert.equal(billed.length, 1);
    assert.ok((await billed(created.record.id)) >= 1800, `expected the answered parts (1800 tokens) charged; charge ${String(line['charge'])}, tokens ${await billed(created.record.id)}`);
  });

  test('a part that fails with 500 is retried as a whole: parts answered in the failed attempt are billed upstream but not charged', async () => {
    rig.upstream.requests.length = 0;
    let calls = 0;
    rig.answer = (req, res) => {
      calls++;
      if (calls === 2) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"overloaded"}}');
        return;
      }
      ok(req, res);
    };
    const created = await rig.gw.state.keys.create('review-part-500');
    const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: ['x', 'y'] }, { authorization: `Bearer ${created.key}` });
    assert.equal(res.status, 200);
    // calls: x ok (900), y 500, retry: x ok (900), y ok (900) = 2700 billed upstream.
    assert.equal(rig.upstream.requests.length, 4);
    assert.equal(await billed(created.record.id), 2700, 'the tokens the upstream billed');
  });
});
