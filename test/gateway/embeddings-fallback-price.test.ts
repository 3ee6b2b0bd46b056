// A fallback across priced targets: the parts each target answered are charged
// at that target's own price, as its provider billed them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ServerResponse } from 'node:http';
import { fakeEmbeddingsAnswer } from '../support/fake-embeddings.ts';
import { startFakeUpstream, type FakeUpstream, type UpstreamRequest } from './harness.ts';
import { accessLine, postEmbeddings, startEmbeddingsRig, type EmbeddingsRig } from './embeddings-fixtures.ts';

describe('fallback across priced targets', () => {
  let rig: EmbeddingsRig;
  let second: FakeUpstream;
  before(async () => {
    // The cheap target's upstream: the same answers as the rig's.
    second = await startFakeUpstream((req, res) => rig.answer(req, res));
    rig = await startEmbeddingsRig({
      aliases: {
        'text-embed': {
          kind: 'embeddings',
          maxInputsPerCall: 1,
          targets: [
            { provider: 'fake', model: 'upstream-embed', price: { input: 1000 } },
            { provider: 'fake2', model: 'upstream-embed', price: { input: 1 }, priority: 1 },
          ],
        },
      },
      providers: { fake2: { type: 'openai', baseUrl: second.baseUrl, apiKeyEnv: 'FAKE_UPSTREAM_KEY', retry: { maxAttempts: 1 }, circuitBreaker: { failureThreshold: 1000 } } },
      embeddings: { maxConcurrentCalls: 1 },
    });
  });
  after(async () => {
    await rig.close();
    await second.close();
  });

  const ok = (req: UpstreamRequest, res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(fakeEmbeddingsAnswer(req.body as Parameters<typeof fakeEmbeddingsAnswer>[0], { tokensPerInput: 900 })));
  };

  test('the dear target answers x and fails y (500); the cheap one answers both: each part at its own target\'s price', async () => {
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
    const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: ['x', 'y'] }, { 'x-request-id': 'fb-1' });
    assert.equal(res.status, 200);
    assert.equal(calls, 4);
    const line = await accessLine(rig.gw, 'fb-1');
    assert.equal(line['chargedTokens'], 2700);
    // What the upstreams billed: 900 tokens at 1000/M on the dear target, 1800 at 1/M on the cheap one.
    assert.equal(line['costNanos'], 900_000_000 + 1_800_000);
  });
});
