// Every rule and limit of the spec through the real server: exact status,
// message, type, param and code. Unit tests pin the validator; these pin what
// a client actually receives over HTTP.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { REJECTIONS } from '../chat/request-fixtures.ts';
import { request, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from './harness.ts';

let gw: TestGateway;
let upstream: FakeUpstream;
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
before(async () => {
  upstream = await startFakeUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] }),
    );
  });
  gw = await startGateway({ upstreamBaseUrl: upstream.baseUrl });
});
after(async () => {
  agent.destroy();
  await gw.close();
  await upstream.close();
});

function post(body: string, headers: Record<string, string> = {}) {
  return request(gw.baseUrl, 'POST', '/v1/chat/completions', {
    agent,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}`, ...headers },
    body,
  });
}

const hi = [{ role: 'user', content: 'Hi' }];
const ok = (extra: Record<string, unknown>): string => JSON.stringify({ model: 'service-fake', messages: hi, ...extra });

async function rejects(body: string, param: string | null, code: string, message?: string): Promise<void> {
  const res = await post(body);
  assert.equal(res.status, 400, res.text);
  const err = (res.json() as { error: Record<string, unknown> }).error;
  assert.deepEqual(Object.keys(err), ['message', 'type', 'param', 'code']);
  assert.equal(err['type'], 'invalid_request_error');
  assert.equal(err['param'], param);
  assert.equal(err['code'], code);
  if (message !== undefined) assert.equal(err['message'], message);
}

async function accepts(body: string): Promise<Record<string, unknown>> {
  const before = upstream.requests.length;
  const res = await post(body);
  assert.equal(res.status, 200, res.text);
  assert.equal(upstream.requests.length, before + 1);
  return upstream.requests.at(-1)!.body as Record<string, unknown>;
}

describe('numbered rules', () => {
  test('rule 1: the response model is the resolved alias (named and service-auto)', async () => {
    const named = await post(ok({}));
    assert.equal((named.json() as { model: string }).model, 'service-fake');
    const auto = await post(JSON.stringify({ model: 'service-auto', messages: hi }));
    assert.equal((auto.json() as { model: string }).model, 'service-chat');
  });
  test('rule 2: n other than 1 is rejected; n 1 passes', async () => {
    await rejects(ok({ n: 2 }), 'n', 'invalid_value', "Invalid value for 'n': 2. Only n = 1 is supported.");
    await rejects(ok({ n: 0 }), 'n', 'invalid_value');
    await accepts(ok({ n: 1 }));
  });
  test('rule 3: both max fields are rejected', async () => {
    await rejects(ok({ max_tokens: 10, max_completion_tokens: 10 }), 'max_completion_tokens', 'invalid_value');
  });
  test('rule 4: a tool message without tool_call_id is rejected', async () => {
    await rejects(
      JSON.stringify({ model: 'service-fake', messages: [{ role: 'tool', content: 'x' }] }),
      'messages[0].tool_call_id',
      'missing_required_parameter',
      "Missing required parameter: 'messages[0].tool_call_id'.",
    );
  });
  test('rule 5: data: and non-HTTPS image URLs are rejected; https passes', async () => {
    const img = (url: string): string =>
      JSON.stringify({ model: 'service-fake', messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'image_url', image_url: { url } }] }] });
    await rejects(img('data:image/png;base64,AAAA'), 'messages[0].content[1].image_url.url', 'invalid_value');
    await rejects(img('http://images.test/a.png'), 'messages[0].content[1].image_url.url', 'invalid_value');
    await accepts(img('https://images.test/a.png'));
  });
  test('rule 6: stream_options without stream true is rejected', async () => {
    await rejects(ok({ stream_options: { include_usage: true } }), 'stream_options', 'invalid_value');
    await rejects(ok({ stream: false, stream_options: { include_usage: true } }), 'stream_options', 'invalid_value');
  });
  test('rule 7: a field not in the table is rejected', async () => {
    await rejects(ok({ foo: 1 }), 'foo', 'unknown_parameter', 'Unrecognized request argument supplied: foo');
    await rejects(
      ok({ seed: 1 }),
      'seed',
      'unknown_parameter',
      `Unsupported parameter: 'seed' is not accepted by this gateway. The gateway's operator can accept it by adding "seed" to "requestFields" in the gateway's config.`,
    );
  });
  test('the default maximum output is 4096 when neither max field is set', async () => {
    assert.equal((await accepts(ok({})))['max_tokens'], 4096);
  });
});

describe('limits at and past their edges', () => {
  const messages = (n: number) => Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `m${i}` }));
  const tools = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 'function', function: { name: `f${i}` } }));
  test('messages: 1 to 256', async () => {
    await accepts(JSON.stringify({ model: 'service-fake', messages: messages(256) }));
    await rejects(JSON.stringify({ model: 'service-fake', messages: messages(257) }), 'messages', 'array_above_max_length');
    await rejects(JSON.stringify({ model: 'service-fake', messages: [] }), 'messages', 'array_below_min_length');
  });
  test('tools: at most 64', async () => {
    await accepts(ok({ tools: tools(64) }));
    await rejects(ok({ tools: tools(65) }), 'tools', 'array_above_max_length');
  });
  test('stop: at most 4 entries', async () => {
    await accepts(ok({ stop: ['a', 'b', 'c', 'd'] }));
    await accepts(ok({ stop: 'a' }));
    await rejects(ok({ stop: ['a', 'b', 'c', 'd', 'e'] }), 'stop', 'array_above_max_length');
  });
  test('temperature 0 to 2, top_p 0 to 1', async () => {
    for (const t of [0, 2]) await accepts(ok({ temperature: t }));
    for (const p of [0, 1]) await accepts(ok({ top_p: p }));
    await rejects(ok({ temperature: 2.0001 }), 'temperature', 'invalid_value');
    await rejects(ok({ top_p: 1.0001 }), 'top_p', 'invalid_value');
    await rejects(ok({ temperature: '1' }), 'temperature', 'invalid_type');
  });
  test('x-request-id: at most 128 characters', async () => {
    const id = 'r'.repeat(128);
    const res = await post(ok({}), { 'x-request-id': id });
    assert.equal(res.headers['x-request-id'], id);
    const long = await post(ok({}), { 'x-request-id': `${id}r` });
    assert.equal(long.status, 400);
    assert.equal((long.json() as { error: { code: string } }).error.code, 'invalid_request_id');
  });
});

describe('what the real SDKs send passes', () => {
  test('stream false, n 1, developer role, text-part arrays, nulls, assistant content null beside tool_calls', async () => {
    const sent = await accepts(
      JSON.stringify({
        model: 'service-fake',
        stream: false,
        n: 1,
        temperature: null,
        messages: [
          { role: 'developer', content: [{ type: 'text', text: 'be brief' }] },
          { role: 'user', content: [{ type: 'text', text: 'weather?' }], name: 'ann' },
          {
            role: 'assistant',
            content: null,
            refusal: null,
            annotations: [],
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: 'sunny' }] },
          { role: 'assistant', content: '' },
          { role: 'user', content: 'thanks' },
        ],
        tools: [{ type: 'function', function: { name: 'get_weather', description: 'd', parameters: { type: 'object', properties: {} }, strict: false } }],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        response_format: { type: 'json_object' },
      }),
    );
    // Accepted-but-not-forwarded fields never reach the upstream.
    const assistant = (sent['messages'] as Record<string, unknown>[])[2]!;
    assert.equal('annotations' in assistant, false);
    assert.equal('temperature' in sent, false);
    assert.equal(sent['stream'], false);
  });
});

describe('every rejection fixture, over HTTP', () => {
  for (const r of REJECTIONS) {
    test(r.name, async () => {
      const res = await post(r.text);
      assert.equal(res.status, 400, res.text);
      assert.deepEqual(res.json(), { error: { message: r.message, type: 'invalid_request_error', param: r.param, code: r.code } });
    });
  }
});
