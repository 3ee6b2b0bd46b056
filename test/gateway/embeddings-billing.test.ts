// What a split embeddings request is charged when one of its parts fails: the
// parts the upstream answered were billed, in a failed attempt as in a retried
// one, so they are charged at their reported usage.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ServerResponse } from 'node:http';
import { fakeEmbeddingsAnswer } from '../support/fake-embeddings.ts';
import type { UpstreamRequest } from './harness.ts';
import { accessLine, postEmbeddings, startEmbeddingsRig, type EmbeddingsRig } from './embeddings-fixtures.ts';

const PRICE = { input: 1000 };

describe('billed parts of a failed or retried attempt', () => {
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

  test('one part refused by the upstream (400) after two were answered: the answered parts are charged', async () => {
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
    const created = await rig.gw.state.keys.create('part-400');
    const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: ['a'.repeat(996), 'a'.repeat(996), 'BAD'] }, { authorization: `Bearer ${created.key}`, 'x-request-id': 'part-400' });
    assert.equal(res.status, 400);
    assert.equal(rig.upstream.requests.length, 3);
    const line = await accessLine(rig.gw, 'part-400');
    assert.equal(line['charge'], 'usage');
    assert.equal(line['chargedTokens'], 1800);
    assert.equal(line['costNanos'], 1_800_000_000);
    assert.equal(await billed(created.record.id), 1800);
  });

  test('a part that fails with 500 is retried as a whole: the parts answered in the failed attempt are charged too', async () => {
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
    const created = await rig.gw.state.keys.create('part-500');
    const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: ['x', 'y'] }, { authorization: `Bearer ${created.key}` });
    assert.equal(res.status, 200);
    // The answer's usage is its own vectors'; the charge is what the upstream billed.
    assert.deepEqual((res.json() as { usage: unknown }).usage, { prompt_tokens: 1800, total_tokens: 1800 });
    // calls: x ok (900), y 500, retry: x ok (900), y ok (900) = 2700 billed upstream.
    assert.equal(rig.upstream.requests.length, 4);
    assert.equal(await billed(created.record.id), 2700);
  });
});
