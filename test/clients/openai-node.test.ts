// The `openai` examples of docs/clients.md, run as shown against the real
// gateway (demo provider behind service-chat, service-auto defaulting to it).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { startGateway, type TestGateway } from '../gateway/harness.ts';
import { demoEcho, demoToolEcho, loadSnippet, type SnippetTarget } from './client-snippets.ts';
import { recordingFetch } from './recording-fetch.ts';

const TEST_TIMEOUT = { timeout: 20_000 };

let gw: TestGateway;
let target: SnippetTarget;
before(async () => {
  gw = await startGateway();
  target = { baseURL: `${gw.baseUrl}/v1`, apiKey: gw.key };
});
after(() => gw.close());

test('openai-node.mjs: service-auto, a stream with usage, a tool round trip', TEST_TIMEOUT, async () => {
  const run = await loadSnippet('openai-node.mjs');
  assert.deepEqual(await run(target), {
    model: 'service-chat',
    text: demoEcho('Hello!', 1),
    streamed: demoEcho('Stream this', 1),
    // prompt: ceil(11 chars / 4); completion: one token per space-separated piece of the reply
    usage: { prompt_tokens: 3, completion_tokens: 16, total_tokens: 19, prompt_tokens_details: { cached_tokens: 0 } },
    toolCall: { name: 'get_weather', arguments: '{"city":"Oslo"}' },
    afterTool: demoToolEcho('Sunny in Oslo', 3),
  });
});

test('openai-errors.mjs: the envelope as the SDK exposes it', TEST_TIMEOUT, async () => {
  const run = await loadSnippet('openai-errors.mjs');
  const result = (await run(target)) as { requestId: string };
  assert.match(result.requestId, /^req_[0-9a-f]{32}$/);
  assert.deepEqual(result, {
    badRequest: true,
    status: 400,
    type: 'invalid_request_error',
    code: 'invalid_value',
    param: 'n',
    message: "Invalid value for 'n': 2. Only n = 1 is supported.",
    requestId: result.requestId,
  });
});

test('service-auto: the answer names the chosen alias and x-portcullis-route gives the reason', TEST_TIMEOUT, async () => {
  const client = new OpenAI({ baseURL: target.baseURL, apiKey: target.apiKey, maxRetries: 0, timeout: 10_000 });
  const { data, response } = await client.chat.completions.create({ model: 'service-auto', messages: [{ role: 'user', content: 'Hello!' }] }).withResponse();
  assert.equal(data.model, 'service-chat');
  assert.equal(response.headers.get('x-portcullis-route'), 'service-chat; reason=default');
});

test('a budget refusal no retry can pass reaches the gateway once: the SDK obeys x-should-retry: false before its 429 retries', TEST_TIMEOUT, async () => {
  const issued = await gw.state.keys.create('budget-sdk', { limits: { tokenBudget: { tokens: 100, period: 'day' } } });
  const recording = recordingFetch();
  // The SDK's default of two retries: without the header each 429 would be sent three times.
  const client = new OpenAI({ baseURL: target.baseURL, apiKey: issued.key, fetch: recording.fetch, timeout: 10_000 });
  const error = await client.chat.completions.create({ model: 'service-chat', messages: [{ role: 'user', content: 'hi' }] }).then(
    () => assert.fail('expected a refusal'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof OpenAI.APIError);
  assert.deepEqual({ status: error.status, code: error.code, type: error.type, shouldRetry: error.headers?.get('x-should-retry') }, {
    status: 429,
    code: 'insufficient_quota',
    type: 'insufficient_quota',
    shouldRetry: 'false',
  });
  assert.equal(recording.requests.length, 1);
  const served = gw.logs.filter((l) => l['keyId'] === issued.record.id && l['status'] === 429);
  assert.equal(served.length, 1);
});
