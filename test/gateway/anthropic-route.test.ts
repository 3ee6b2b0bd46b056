// An alias served by the Anthropic adapter, end to end: the client speaks
// OpenAI's shapes, the fake upstream sees Anthropic's.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, test } from 'node:test';
import { refuseLikeAnthropic } from '../providers/anthropic-constraints.ts';
import { postChat, sseData, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from './harness.ts';

let upstream: FakeUpstream;
/** An OpenAI-compatible target that is gone (404), before Claude in service-mixed. */
let gone: FakeUpstream;
let gw: TestGateway;
before(async () => {
  upstream = await startFakeUpstream(() => {});
  gone = await startFakeUpstream((_r, res) => {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'model not found', type: 'invalid_request_error', param: null, code: 'model_not_found' } }));
  });
  gw = await startGateway({
    configValue: {
      providers: {
        claude: { type: 'anthropic', baseUrl: upstream.baseUrl, apiKeyEnv: 'CLAUDE_KEY' },
        local: { type: 'openai', baseUrl: gone.baseUrl },
      },
      aliases: {
        'service-claude': { provider: 'claude', model: 'claude-test-1' },
        'service-mixed': {
          targets: [
            { provider: 'local', model: 'kimi-like', priority: 0 },
            { provider: 'claude', model: 'claude-test-1', priority: 1 },
          ],
        },
      },
    },
    env: { CLAUDE_KEY: 'sk-ant-test' },
  });
});
after(async () => {
  await gw.close();
  await upstream.close();
  await gone.close();
});

/** The fake's answer for requests that keep Anthropic's documented
 * constraints; any other request is answered 400 as Anthropic would. */
function serve(handle: FakeUpstream['handle']): void {
  upstream.handle = (record, res) => {
    if (refuseLikeAnthropic(res, record.body)) return;
    return handle(record, res);
  };
}

function sendEvents(res: http.ServerResponse, events: [string, unknown][]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const [event, data] of events) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  res.end();
}

test('non-streaming: Anthropic request upstream, OpenAI completion back with the alias', async () => {
  serve((_r, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-test-1',
        content: [{ type: 'text', text: 'Bonjour.' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 3, cache_read_input_tokens: 4, cache_creation_input_tokens: 0 },
      }),
    );
  });
  const res = await postChat(gw, { model: 'service-claude', messages: [{ role: 'system', content: 'Be French.' }, { role: 'user', content: 'Hello' }] }, { 'x-request-id': 'ant-1' });
  assert.equal(res.status, 200);
  const body = res.json() as Record<string, unknown>;
  assert.equal(body['model'], 'service-claude');
  assert.deepEqual(body['choices'], [{ index: 0, message: { role: 'assistant', content: 'Bonjour.', refusal: null, tool_calls: [] }, logprobs: null, finish_reason: 'stop' }]);
  assert.deepEqual(body['usage'], { prompt_tokens: 14, completion_tokens: 3, total_tokens: 17, prompt_tokens_details: { cached_tokens: 4 } });
  const seen = upstream.requests.at(-1)!;
  assert.equal(seen.url, '/v1/messages');
  assert.equal(seen.headers['x-api-key'], 'sk-ant-test');
  assert.equal(seen.headers['x-request-id'], 'ant-1');
  assert.deepEqual(seen.body, { model: 'claude-test-1', system: [{ type: 'text', text: 'Be French.' }], messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }], max_tokens: 4096 });
});

test('streaming: Anthropic events become OpenAI chunks, tool use included', async () => {
  serve((_r, res) =>
    sendEvents(res, [
      ['message_start', { type: 'message_start', message: { id: 'msg_2', type: 'message', role: 'assistant', model: 'claude-test-1', content: [], stop_reason: null, usage: { input_tokens: 20, output_tokens: 1 } } }],
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"city":' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '"Oslo"}' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 9 } }],
      ['message_stop', { type: 'message_stop' }],
    ]));
  const res = await postChat(gw, {
    model: 'service-claude',
    messages: [{ role: 'user', content: 'Weather in Oslo?' }],
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
    stream: true,
    stream_options: { include_usage: true },
  });
  assert.equal(res.status, 200);
  const data = sseData(res.text);
  assert.equal(data.at(-1), '[DONE]');
  const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as { model: string; choices: { delta: Record<string, unknown>; finish_reason: string | null }[]; usage?: unknown });
  assert.ok(chunks.every((c) => c.model === 'service-claude'));
  const deltas = chunks.flatMap((c) => c.choices.flatMap((ch) => (ch.delta['tool_calls'] as unknown[]) ?? []));
  // The first tool-call delta carries index, id, type and the whole name.
  const first = deltas[0] as { index: number; id: string; type: string; function: { name: string } };
  assert.deepEqual([first.index, first.id, first.type, first.function.name], [0, 'toolu_1', 'function', 'get_weather']);
  assert.ok(deltas.slice(1).every((d) => (d as { id?: string; function: { name?: string } }).id === undefined && (d as { function: { name?: string } }).function.name === undefined));
  const args = deltas.map((d) => (d as { function?: { arguments?: string } }).function?.arguments ?? '').join('');
  assert.equal(args, '{"city":"Oslo"}');
  assert.equal(chunks.flatMap((c) => c.choices.map((ch) => ch.finish_reason)).filter((f) => f !== null).join(), 'tool_calls');
  assert.deepEqual(chunks.at(-1)?.usage, { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29, prompt_tokens_details: { cached_tokens: 0 } });
});

test('temperature above 1 on an Anthropic alias is a 400 naming the parameter, never clamped', async () => {
  const before = upstream.requests.length;
  const res = await postChat(gw, { model: 'service-claude', messages: [{ role: 'user', content: 'x' }], temperature: 1.5 });
  assert.equal(res.status, 400);
  assert.equal((res.json() as { error: { param: string; code: string } }).error.param, 'temperature');
  assert.equal(upstream.requests.length, before);
});

test('a request Anthropic would refuse is a 400 naming the parameter, and nothing reaches the upstream', async () => {
  serve((_r, res) => {
    res.writeHead(500).end();
  });
  const before = upstream.requests.length;
  const cases: [Record<string, unknown>, string][] = [
    [{ messages: [{ role: 'user', content: 'x' }], stop: ['\n'] }, 'stop[0]'],
    [{ messages: [{ role: 'system', content: 'Only a system prompt.' }] }, 'messages'],
    [{ messages: [{ role: 'user', content: ' \n' }] }, 'messages[0].content'],
    [{ messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: 'Sure, ' }] }, 'messages[1].role'],
    [{ messages: [{ role: 'user', content: 'x' }], temperature: 0.7, top_p: 0.9 }, 'top_p'],
  ];
  for (const [body, param] of cases) {
    for (const stream of [false, true]) {
      const res = await postChat(gw, { model: 'service-claude', ...body, stream });
      assert.equal(res.status, 400, `${param} (stream ${stream})`);
      const error = (res.json() as { error: { param: string; code: string; type: string } }).error;
      assert.deepEqual([error.param, error.code, error.type], [param, 'invalid_value', 'invalid_request_error']);
    }
  }
  assert.equal(upstream.requests.length, before);
});

const FOREIGN_HISTORY = [
  { role: 'user', content: 'Weather in Paris, then Oslo?' },
  { role: 'assistant', content: '\n\n', tool_calls: [{ id: 'functions.get_weather:0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
  { role: 'tool', tool_call_id: 'functions.get_weather:0', content: '18°C' },
];

test("another provider's tool-call ids go out in Anthropic's pattern and come back as the client's own", async () => {
  const toolUse = { type: 'tool_use', id: 'pcl_id-functions_002eget_005fweather_003a1', name: 'get_weather', input: { city: 'Oslo' } };
  serve((_r, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'msg_3', type: 'message', role: 'assistant', model: 'claude-test-1', content: [toolUse], stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 5 } }));
  });
  const res = await postChat(gw, {
    model: 'service-claude',
    messages: FOREIGN_HISTORY,
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
  });
  assert.equal(res.status, 200);
  const message = (res.json() as { choices: { message: { tool_calls: { id: string }[] } }[] }).choices[0]?.message;
  assert.deepEqual(message?.tool_calls.map((call) => call.id), ['functions.get_weather:1']);
  const seen = upstream.requests.at(-1)!.body as { messages: unknown[] };
  assert.deepEqual(seen.messages.slice(1), [
    { role: 'assistant', content: [{ type: 'tool_use', id: 'pcl_id-functions_002eget_005fweather_003a0', name: 'get_weather', input: { city: 'Paris' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'pcl_id-functions_002eget_005fweather_003a0', content: '18°C' }] },
  ]);
});

test('a conversation that falls back from an OpenAI-compatible target to Claude keeps its tool-call ids, streamed', async () => {
  serve((_r, res) =>
    sendEvents(res, [
      ['message_start', { type: 'message_start', message: { id: 'msg_4', type: 'message', role: 'assistant', model: 'claude-test-1', content: [], stop_reason: null, usage: { input_tokens: 9, output_tokens: 1 } } }],
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Paris 18°C.' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 4 } }],
      ['message_stop', { type: 'message_stop' }],
    ]),
  );
  const goneBefore = gone.requests.length;
  const res = await postChat(gw, { model: 'service-mixed', messages: FOREIGN_HISTORY, stream: true });
  assert.equal(res.status, 200);
  assert.equal(gone.requests.length, goneBefore + 1, 'the first target was tried');
  const content = sseData(res.text)
    .slice(0, -1)
    .map((d) => (JSON.parse(d) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? '')
    .join('');
  assert.equal(content, 'Paris 18°C.');
  const seen = upstream.requests.at(-1)!.body as { messages: { content: { id?: string; tool_use_id?: string }[] }[] };
  assert.deepEqual(
    seen.messages.flatMap((m) => m.content.map((b) => b.id ?? b.tool_use_id)).filter((id) => id !== undefined),
    ['pcl_id-functions_002eget_005fweather_003a0', 'pcl_id-functions_002eget_005fweather_003a0'],
  );
});
