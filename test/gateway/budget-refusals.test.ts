// Budget refusals through the whole gateway: the status, headers and body a client
// reads when its request can never fit the budget, and the output reservation of a
// request without max_tokens on an alias with a maxOutputTokens cap.
//
// Figures: the prompt "hi" reserves 64 + 8 + 4 + 2 = 78 prompt tokens. Without
// max_tokens the output maximum is 4096 (4174 reserved), or the alias cap of 16
// (94 reserved). The keys' token budget is 100 a day.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { systemScheduler } from '../../src/time/scheduler.ts';
import { postChat, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from './harness.ts';

const NOON = Date.UTC(2026, 10, 22, 12, 0, 0);
let upstream: FakeUpstream;
let gw: TestGateway;
let keys = 0;

before(async () => {
  upstream = await startFakeUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({
      id: 'chatcmpl-b', object: 'chat.completion', created: 1, model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 },
    }));
  });
  const fake = { type: 'openai', baseUrl: upstream.baseUrl, apiKeyEnv: 'FAKE_UPSTREAM_KEY', retry: { maxAttempts: 1 }, circuitBreaker: { failureThreshold: 1000 } };
  gw = await startGateway({
    configValue: {
      providers: { fake },
      aliases: { 'service-open': { provider: 'fake', model: 'm' }, 'service-capped': { provider: 'fake', model: 'm', maxOutputTokens: 16 } },
    },
    scheduler: { ...systemScheduler, now: () => NOON },
  });
});
after(async () => {
  await gw.close();
  await upstream.close();
});

async function budgetedKey(): Promise<string> {
  return (await gw.state.keys.create(`budget-${++keys}`, { limits: { tokenBudget: { tokens: 100, period: 'day' } } })).key;
}

function retryHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (name.startsWith('x-ratelimit-') || name.startsWith('retry-after')) out[name] = String(value);
  return out;
}

test('a request without max_tokens whose 4096-token reservation exceeds the whole budget: 429 with no Retry-After and what to lower', async () => {
  const key = await budgetedKey();
  const calls = upstream.requests.length;
  const res = await postChat(gw, { model: 'service-open', messages: [{ role: 'user', content: 'hi' }] }, { authorization: `Bearer ${key}` });
  assert.equal(res.status, 429);
  assert.deepEqual(retryHeaders(res.headers), {});
  assert.deepEqual(res.json(), {
    error: {
      message:
        "This request may use up to 4174 tokens (a prompt of up to 78 tokens and max_tokens 4096), more than the key's whole token budget of 100 tokens per day, " +
        "so it can never be admitted. Send a lower max_tokens (without it a request reserves the model's output cap: 4096 tokens unless the gateway sets a lower one) or a shorter prompt.",
      type: 'insufficient_quota',
      param: null,
      code: 'insufficient_quota',
    },
  });
  assert.equal(upstream.requests.length, calls);
});

test("the alias's maxOutputTokens is the output reservation of a request without max_tokens: admitted, and the cap goes upstream", async () => {
  const key = await budgetedKey();
  const res = await postChat(gw, { model: 'service-capped', messages: [{ role: 'user', content: 'hi' }] }, { authorization: `Bearer ${key}` });
  assert.equal(res.status, 200, res.text);
  assert.equal((upstream.requests.at(-1)?.body as { max_tokens: number }).max_tokens, 16);
  assert.equal(res.headers['x-portcullis-max-tokens-clamped'], '16');
});
