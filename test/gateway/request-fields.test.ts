// The field policy end to end: fields the operator accepts reach an
// OpenAI-compatible upstream exactly as checked, per alias; the listing says
// which an alias takes; the access line names the ones a request used; and a
// reload changes the policy.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { parseConfig } from '../../src/config/config-parser.ts';
import { postChat, reload, request, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from './harness.ts';

let upstream: FakeUpstream;
let gw: TestGateway;

const COMPLETION = {
  id: 'c1',
  object: 'chat.completion',
  created: 1,
  model: 'upstream-model-1',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
};

function configValue(upstreamUrl: string, top: string[]): Record<string, unknown> {
  return {
    providers: {
      demo: { type: 'demo' },
      fake: { type: 'openai', baseUrl: upstreamUrl, apiKeyEnv: 'FAKE_UPSTREAM_KEY', retry: { maxAttempts: 1 } },
    },
    requestFields: top,
    aliases: {
      'service-chat': { provider: 'demo', model: 'portcullis-demo', requestFields: [] },
      'service-fake': { provider: 'fake', model: 'upstream-model-1' },
      'service-agents': { provider: 'fake', model: 'upstream-model-2', requestFields: ['user', 'seed', 'parallel_tool_calls', 'json_schema'] },
    },
    auto: { default: 'service-chat' },
  };
}

before(async () => {
  upstream = await startFakeUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(COMPLETION));
  });
  gw = await startGateway({ configValue: configValue(`${upstream.baseUrl}/v1`, ['user']) });
});

after(async () => {
  await gw.close();
  await upstream.close();
});

const TOOL = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } };

test('accepted fields reach the OpenAI-compatible upstream exactly as sent, beside the contract fields', async () => {
  const before = upstream.requests.length;
  const res = await postChat(gw, {
    model: 'service-agents',
    messages: [{ role: 'user', content: 'Hi' }],
    user: 'user-7',
    seed: 42,
    parallel_tool_calls: false,
    tools: [TOOL],
  });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(upstream.requests[before]?.body, {
    model: 'upstream-model-2',
    messages: [{ role: 'user', content: 'Hi' }],
    tools: [TOOL],
    user: 'user-7',
    seed: 42,
    parallel_tool_calls: false,
    max_tokens: 4096,
  });
  const line = gw.logs.findLast((l) => l['msg'] === 'request' && l['alias'] === 'service-agents');
  assert.equal(line?.['requestFields'], 'user,seed,parallel_tool_calls');
});

test("an alias without its own list takes the top level's; one with its own list takes only that", async () => {
  const before = upstream.requests.length;
  assert.equal((await postChat(gw, { model: 'service-fake', messages: [{ role: 'user', content: 'Hi' }], user: 'u' })).status, 200);
  assert.equal((upstream.requests[before]?.body as Record<string, unknown>)['user'], 'u');
  const refused = await postChat(gw, { model: 'service-fake', messages: [{ role: 'user', content: 'Hi' }], seed: 1 });
  assert.equal(refused.status, 400);
  assert.deepEqual(JSON.parse(refused.text), {
    error: {
      message: `Unsupported parameter: 'seed' is not accepted for model 'service-fake'. The gateway's operator can accept it by adding "seed" to "requestFields" or "aliases.service-fake.requestFields" in the gateway's config.`,
      type: 'invalid_request_error',
      param: 'seed',
      code: 'unknown_parameter',
    },
  });
  const chat = await postChat(gw, { model: 'service-chat', messages: [{ role: 'user', content: 'Hi' }], user: 'u' });
  assert.equal(JSON.parse(chat.text).error.message, `Unsupported parameter: 'user' is not accepted for model 'service-chat'. The gateway's operator can accept it by adding "user" to "aliases.service-chat.requestFields" in the gateway's config.`);
  assert.equal(upstream.requests.length, before + 1, 'a refused request sends nothing');
});

test('service-auto goes to an alias that takes the fields, and says so', async () => {
  const res = await postChat(gw, { model: 'service-auto', messages: [{ role: 'user', content: 'Hi' }], seed: 3 });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers['x-portcullis-route'], 'service-agents; reason=request_fields');
  assert.equal(JSON.parse(res.text).model, 'service-agents');
  const line = gw.logs.findLast((l) => l['msg'] === 'request' && l['alias'] === 'service-agents');
  assert.equal(line?.['routeSkipped'], 'service-chat:request_fields,service-fake:request_fields');
});

test('GET /v1/models lists the fields of each alias that takes any', async () => {
  const res = await request(gw.baseUrl, 'GET', '/v1/models', { headers: { authorization: `Bearer ${gw.key}` } });
  const byId = Object.fromEntries((JSON.parse(res.text).data as Array<Record<string, unknown>>).map((m) => [m['id'], m['request_fields']]));
  assert.deepEqual(byId, {
    'service-chat': undefined,
    'service-fake': ['user'],
    'service-agents': ['json_schema', 'seed', 'user', 'parallel_tool_calls'],
    'service-auto': ['json_schema', 'seed', 'user', 'parallel_tool_calls'],
  });
});

test('a reload applies a changed policy', async () => {
  const summary = reload(gw.gateway, parseConfig({ ...configValue(`${upstream.baseUrl}/v1`, ['user', 'store']), dataDir: gw.dataDir }, null, gw.dataDir));
  assert.deepEqual(summary.restartNeeded, []);
  const before = upstream.requests.length;
  const res = await postChat(gw, { model: 'service-fake', messages: [{ role: 'user', content: 'Hi' }], store: false });
  assert.equal(res.status, 200, res.text);
  assert.equal((upstream.requests[before]?.body as Record<string, unknown>)['store'], false);
});
