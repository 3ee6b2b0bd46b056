import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { request, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from './harness.ts';

// fallbacks, fallback_credit_token, billing_policy, speed and inference_geo
// change price or routing at Anthropic: a client sends them only to a
// provider whose operator names them in messagesPassthrough.
let up: FakeUpstream;
let gw: TestGateway;

before(async () => {
  up = await startFakeUpstream((_req, res) => {
    const body = JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 2 } });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  });
  gw = await startGateway({
    configValue: {
      providers: {
        open: { type: 'anthropic', baseUrl: `${up.baseUrl}/open/v1`, apiKeyEnv: 'K', messagesPassthrough: ['speed'], retry: { maxAttempts: 1 } },
        strict: { type: 'anthropic', baseUrl: `${up.baseUrl}/strict/v1`, apiKeyEnv: 'K', retry: { maxAttempts: 1 } },
      },
      aliases: {
        'a-open': { provider: 'open', model: 'open-model' },
        'a-strict': { provider: 'strict', model: 'haiku-upstream', maxOutputTokens: 1000, price: { input: 1, output: 5 } },
      },
      auto: { default: 'a-strict' },
    },
    env: { K: 'sk-up' },
  });
});
after(async () => {
  await gw.close();
  await up.close();
});

function post(body: Record<string, unknown>) {
  return request(gw.baseUrl, 'POST', '/v1/messages', {
    headers: { 'content-type': 'application/json', 'x-api-key': gw.key, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ max_tokens: 128000, messages: [{ role: 'user', content: 'hi' }], ...body }),
  });
}

test('fallbacks naming other models (with an unclamped max_tokens) never reach an upstream no operator allowed it for', async () => {
  up.requests.length = 0;
  const r = await post({ model: 'a-strict', fallbacks: [{ model: 'claude-opus-4-7', max_tokens: 128000 }] });
  assert.equal(r.status, 400);
  assert.deepEqual(JSON.parse(r.text).error, {
    type: 'invalid_request_error',
    message:
      "Field 'fallbacks' changes what the request costs or where it runs at Anthropic, so the gateway passes it only where its operator allows it. Remove it, or, for the gateway's operator to allow it, add it to `messagesPassthrough` of an Anthropic provider in the gateway's config.",
  });
  assert.equal(up.requests.length, 0);
});

test('speed: refused for the provider that does not list it, passed to the one that does', async () => {
  up.requests.length = 0;
  const refused = await post({ model: 'a-strict', speed: 'fast' });
  assert.equal(refused.status, 400, refused.text);
  assert.match(JSON.parse(refused.text).error.message, /'speed'/);
  assert.equal(up.requests.length, 0);
  const passed = await post({ model: 'a-open', speed: 'fast' });
  assert.equal(passed.status, 200, passed.text);
  assert.equal(up.requests.length, 1);
  assert.equal((up.requests[0]?.body as Record<string, unknown>)['speed'], 'fast');
});
