// The Responses door through the gateway with plain HTTP: hosted tools a
// chat-only upstream cannot run are left out of the offer and named (header
// and access line), a passing-through upstream gets them; the stateful
// fields are refused while the gateway's store is off.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SCRIPTED_UPSTREAM_KEY, startScriptedOpenAI, type ScriptedUpstream } from '../support/scripted-upstreams.ts';
import { startScriptedResponses } from '../support/scripted-responses.ts';
import { eventually } from '../support/eventually.ts';
import { request, startGateway, type TestGateway } from './harness.ts';

const ALIAS = 'service-code';
const tools = [
  { type: 'function', name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }, strict: true },
  { type: 'web_search' },
];

async function through(upstream: ScriptedUpstream, mode: string): Promise<TestGateway> {
  return startGateway({
    configValue: {
      providers: { up: { type: 'openai', baseUrl: upstream.baseUrl, apiKeyEnv: 'SCRIPTED_KEY', responses: mode, retry: { maxAttempts: 1 } } },
      aliases: { [ALIAS]: { provider: 'up', model: 'up-1' } },
    },
    env: { SCRIPTED_KEY: SCRIPTED_UPSTREAM_KEY },
  });
}

function post(gw: TestGateway, body: unknown, id: string): ReturnType<typeof request> {
  return request(gw.baseUrl, 'POST', '/v1/responses', { headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', 'x-request-id': id }, body: JSON.stringify(body) });
}

test('a chat-only upstream: web_search is left out of the offer, named in x-portcullis-tools-left-out and the access line', async () => {
  const upstream = await startScriptedOpenAI();
  const gw = await through(upstream, 'translate');
  try {
    const res = await post(gw, { model: ALIAS, input: 'hi', tools }, 'door-1');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers['x-portcullis-tools-left-out'], 'web_search');
    const sent = JSON.parse(upstream.received.at(-1)!.text) as { tools: Array<{ function: { name: string } }> };
    assert.deepEqual(sent.tools.map((t) => t.function.name), ['get_weather']);
    await eventually(() => gw.logs.some((l) => l['requestId'] === 'door-1' && l['toolsLeftOut'] === 'web_search'), 'the access line names it');
  } finally {
    await gw.close();
    await upstream.close();
  }
});

test('a Responses upstream: the offer goes whole, nothing named', async () => {
  const upstream = await startScriptedResponses();
  const gw = await through(upstream, 'passthrough');
  try {
    const res = await post(gw, { model: ALIAS, input: 'hi', tools }, 'door-2');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers['x-portcullis-tools-left-out'], undefined);
    assert.deepEqual((JSON.parse(upstream.received.at(-1)!.text) as { tools: unknown[] }).tools, tools);
  } finally {
    await gw.close();
    await upstream.close();
  }
});

test('previous_response_id while the store is off: a 400 naming it, nothing sent', async () => {
  const upstream = await startScriptedOpenAI();
  const gw = await through(upstream, 'translate');
  try {
    const res = await post(gw, { model: ALIAS, input: 'and then?', previous_response_id: 'resp_abc' }, 'door-3');
    assert.equal(res.status, 400);
    const error = (res.json() as { error: { param: string; type: string } }).error;
    assert.equal(error.param, 'previous_response_id');
    assert.equal(error.type, 'invalid_request_error');
    assert.equal(upstream.received.length, 0);
  } finally {
    await gw.close();
    await upstream.close();
  }
});

test("the alias's request-field policy on the translation: reasoning effort and parallel_tool_calls true left out, false refused, json_schema refused", async () => {
  const upstream = await startScriptedOpenAI();
  const gw = await through(upstream, 'translate');
  try {
    const ok = await post(gw, { model: ALIAS, input: 'hi', tools: tools.slice(0, 1), parallel_tool_calls: true, reasoning: { effort: 'low', summary: 'auto' } }, 'door-4');
    assert.equal(ok.status, 200, ok.text);
    const sent = JSON.parse(upstream.received.at(-1)!.text) as Record<string, unknown>;
    assert.equal('reasoning_effort' in sent, false);
    assert.equal('parallel_tool_calls' in sent, false);
    const serial = await post(gw, { model: ALIAS, input: 'hi', tools: tools.slice(0, 1), parallel_tool_calls: false }, 'door-5');
    assert.equal(serial.status, 400);
    assert.deepEqual(serial.json(), {
      error: {
        message: `'parallel_tool_calls' becomes OpenAI's 'parallel_tool_calls' for an upstream that speaks only chat completions, which this model alias does not accept. An upstream that speaks Responses takes it as sent; the gateway's operator can accept it by adding "parallel_tool_calls" to "requestFields" in the gateway's config.`,
        type: 'invalid_request_error',
        param: 'parallel_tool_calls',
        code: 'unsupported_parameter',
      },
    });
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
    const structured = await post(gw, { model: ALIAS, input: 'hi', text: { format: { type: 'json_schema', name: 'out', schema, strict: true } } }, 'door-6');
    assert.equal(structured.status, 400);
    assert.equal((structured.json() as { error: { param: string } }).error.param, 'text.format');
  } finally {
    await gw.close();
    await upstream.close();
  }
});

test('300 deferred functions left out: the header stays short and says how many more; the access line has them all', async () => {
  const upstream = await startScriptedOpenAI();
  const gw = await through(upstream, 'translate');
  try {
    const deferred = Array.from({ length: 300 }, (_, i) => ({ type: 'function', name: `mcp_tool_${i}`, parameters: { type: 'object', properties: {} }, defer_loading: true }));
    const res = await post(gw, { model: ALIAS, input: 'hi', tools: [tools[0], ...deferred] }, 'door-7');
    assert.equal(res.status, 200, res.text);
    const header = String(res.headers['x-portcullis-tools-left-out']);
    assert.ok(header.length <= 540, `${header.length} characters`);
    assert.match(header, /^mcp_tool_0,mcp_tool_1,.*,\+\d+ more$/);
    const shown = header.split(',').length - 1;
    assert.equal(header.endsWith(`+${300 - shown} more`), true);
    await eventually(() => gw.logs.some((l) => l['requestId'] === 'door-7' && String(l['toolsLeftOut']).split(',').length === 300), 'the access line lists all 300');
  } finally {
    await gw.close();
    await upstream.close();
  }
});

test("one provider's consent to service_tier does not open it for another", async () => {
  const allowing = await startScriptedResponses();
  const other = await startScriptedResponses();
  const provider = (baseUrl: string, fields: string[]) => ({ type: 'openai', baseUrl, apiKeyEnv: 'SCRIPTED_KEY', responses: 'passthrough', responsesPassthrough: fields, retry: { maxAttempts: 1 } });
  const gw = await startGateway({
    configValue: {
      providers: { a: provider(allowing.baseUrl, ['service_tier']), b: provider(other.baseUrl, []) },
      aliases: { 'alias-a': { provider: 'a', model: 'up-a' }, 'alias-b': { provider: 'b', model: 'up-b' } },
    },
    env: { SCRIPTED_KEY: SCRIPTED_UPSTREAM_KEY },
  });
  try {
    const priority = { input: 'hi', service_tier: 'priority' };
    assert.equal((await post(gw, { model: 'alias-a', ...priority }, 'door-8')).status, 200);
    assert.equal(JSON.parse(allowing.received.at(-1)!.text).service_tier, 'priority');
    const refused = await post(gw, { model: 'alias-b', ...priority }, 'door-9');
    assert.equal(refused.status, 400);
    assert.equal((refused.json() as { error: { param: string } }).error.param, 'service_tier');
    assert.equal(other.received.length, 0);
  } finally {
    await gw.close();
    await allowing.close();
    await other.close();
  }
});
