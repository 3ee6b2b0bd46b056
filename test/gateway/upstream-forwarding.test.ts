// The gateway against a fake OpenAI-compatible upstream on loopback: what the
// upstream receives, and what the client sees, byte for byte where it matters.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, beforeEach, test } from 'node:test';
import { postChat, sseData, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from './harness.ts';

let upstream: FakeUpstream;
let gw: TestGateway;
before(async () => {
  upstream = await startFakeUpstream(() => {});
  gw = await startGateway({ upstreamBaseUrl: upstream.baseUrl });
});
after(async () => {
  await gw.close();
  await upstream.close();
});
beforeEach(() => {
  upstream.requests.length = 0;
});

const upstreamCompletion = {
  id: 'chatcmpl-up1',
  object: 'chat.completion',
  created: 1_720_000_000,
  model: 'upstream-model-1',
  system_fingerprint: 'fp_x',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there.' }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
};

function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function sse(res: http.ServerResponse, frames: unknown[], done = true): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const f of frames) res.write(`data: ${JSON.stringify(f)}\n\n`);
  if (done) res.write('data: [DONE]\n\n');
  res.end();
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null): unknown => ({
  id: 'chatcmpl-s1',
  object: 'chat.completion.chunk',
  created: 1_720_000_001,
  model: 'upstream-model-1',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

test('non-streaming: the upstream gets the rewritten request; the client gets the spec shape with the alias', async () => {
  upstream.handle = (_req, res) => json(res, 200, upstreamCompletion);
  const res = await postChat(gw, { model: 'service-fake', messages: [{ role: 'user', content: 'Hi' }], temperature: 0.5 }, { 'x-request-id': 'fwd-1' });
  assert.equal(res.status, 200);
  assert.equal(res.headers['x-request-id'], 'fwd-1');
  assert.deepEqual(res.json(), {
    id: 'chatcmpl-up1',
    object: 'chat.completion',
    created: 1_720_000_000,
    model: 'service-fake',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there.', refusal: null, tool_calls: [] }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12, prompt_tokens_details: { cached_tokens: 0 } },
  });
  assert.equal(upstream.requests.length, 1);
  const seen = upstream.requests[0]!;
  assert.equal(seen.method, 'POST');
  assert.equal(seen.url, '/v1/chat/completions');
  assert.equal(seen.headers['authorization'], 'Bearer sk-upstream-secret');
  assert.equal(seen.headers['x-request-id'], 'fwd-1');
  assert.equal(seen.headers['content-type'], 'application/json');
  assert.deepEqual(seen.body, { model: 'upstream-model-1', messages: [{ role: 'user', content: 'Hi' }], temperature: 0.5, max_tokens: 4096 });
});

test('the client key never reaches the upstream, and a made request id does', async () => {
  upstream.handle = (_req, res) => json(res, 200, upstreamCompletion);
  const res = await postChat(gw, { model: 'service-fake', messages: [{ role: 'user', content: 'Hi' }] });
  const seen = upstream.requests[0]!;
  assert.equal(seen.headers['x-request-id'], res.headers['x-request-id']);
  assert.equal(JSON.stringify(seen.headers).includes(gw.key), false);
});

test('max_completion_tokens from the client reaches the upstream as exactly one max field', async () => {
  upstream.handle = (_req, res) => json(res, 200, upstreamCompletion);
  await postChat(gw, { model: 'service-fake', messages: [{ role: 'user', content: 'Hi' }], max_completion_tokens: 77 });
  const body = upstream.requests[0]!.body as Record<string, unknown>;
  assert.equal(body['max_tokens'], 77);
  assert.equal('max_completion_tokens' in body, false);
});

test('tool calls come back as returned, never executed; the openai SDK can send the message back', async () => {
  upstream.handle = (_req, res) =>
    json(res, 200, {
      ...upstreamCompletion,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            refusal: null,
            annotations: [],
            tool_calls: [
              { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
              { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } },
            ],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
    });
  const tools = [
    { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
    { type: 'function', function: { name: 'get_time' } },
  ];
  const first = await postChat(gw, { model: 'service-fake', messages: [{ role: 'user', content: 'Weather?' }], tools });
  assert.equal(first.status, 200);
  const message = (first.json() as { choices: [{ message: Record<string, unknown>; finish_reason: string }] }).choices[0];
  assert.equal(message.finish_reason, 'tool_calls');
  assert.deepEqual(message.message, {
    role: 'assistant',
    content: null,
    refusal: null,
    tool_calls: [
      { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
      { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } },
    ],
  });
  upstream.handle = (_req, res) => json(res, 200, upstreamCompletion);
  const second = await postChat(gw, {
    model: 'service-fake',
    tools,
    messages: [
      { role: 'user', content: 'Weather?' },
      message.message,
      { role: 'tool', tool_call_id: 'call_a', content: 'sunny' },
      { role: 'tool', tool_call_id: 'call_b', content: [{ type: 'text', text: '12:00' }] },
    ],
  });
  assert.equal(second.status, 200, second.text);
});

test('streaming with include_usage: role first, alias and one id everywhere, finish, usage chunk, [DONE]', async () => {
  upstream.handle = (_req, res) =>
    sse(res, [
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hel' }),
      chunk({ content: 'lo' }),
      chunk({}, 'stop'),
      { id: 'chatcmpl-s1', object: 'chat.completion.chunk', created: 1_720_000_001, model: 'upstream-model-1', choices: [], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7, prompt_tokens_details: { cached_tokens: 3 } } },
    ]);
  const res = await postChat(gw, { model: 'service-fake', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } });
  assert.equal(res.status, 200);
  assert.equal(res.headers['content-type'], 'text/event-stream; charset=utf-8');
  assert.equal(res.text.includes('\nid:') || res.text.startsWith('id:') || res.text.includes('retry:'), false);
  const data = sseData(res.text);
  assert.equal(data.at(-1), '[DONE]');
  const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as Record<string, unknown>);
  const base = { id: 'chatcmpl-s1', object: 'chat.completion.chunk', created: 1_720_000_001, model: 'service-fake' };
  assert.deepEqual(chunks, [
    { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: { content: 'Hel' }, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: { content: 'lo' }, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    { ...base, choices: [], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7, prompt_tokens_details: { cached_tokens: 3 } } },
  ]);
  const sent = upstream.requests[0]!.body as Record<string, unknown>;
  assert.equal(sent['stream'], true);
  assert.deepEqual(sent['stream_options'], { include_usage: true });
});

test('streaming without include_usage: the usage chunk is stripped though the upstream was asked for it', async () => {
  upstream.handle = (_req, res) =>
    sse(res, [
      chunk({ role: 'assistant', content: 'Hi' }),
      chunk({}, 'length'),
      { id: 'chatcmpl-s1', object: 'chat.completion.chunk', created: 1_720_000_001, model: 'm', choices: [], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } },
    ]);
  const res = await postChat(gw, { model: 'service-fake', messages: [{ role: 'user', content: 'Hi' }], stream: true });
  const data = sseData(res.text);
  assert.deepEqual(
    data.map((d) => {
      if (d === '[DONE]') return d;
      const { choices } = JSON.parse(d) as { choices: { finish_reason: string | null }[] };
      return choices.length === 0 ? 'no-choice' : choices[0]!.finish_reason;
    }),
    [null, 'length', '[DONE]'],
  );
  assert.deepEqual((upstream.requests[0]!.body as Record<string, unknown>)['stream_options'], { include_usage: true });
});

test('an upstream failure after the first byte is an error frame and the end, never [DONE]', async () => {
  upstream.handle = (_req, res) => sse(res, [chunk({ role: 'assistant', content: 'Hel' })], false);
  const res = await postChat(gw, { model: 'service-fake', messages: [{ role: 'user', content: 'Hi' }], stream: true });
  assert.equal(res.status, 200);
  const data = sseData(res.text);
  assert.equal(data.length, 2);
  assert.equal(data.includes('[DONE]'), false);
  const err = JSON.parse(data[1]!) as { error: { type: string; code: string; message: string; param: null } };
  assert.equal(err.error.code, 'upstream_stream_truncated');
  assert.equal(err.error.param, null);
});

test('an upstream failure before the first byte is an ordinary JSON error', async () => {
  upstream.handle = (_req, res) => json(res, 503, { error: { message: 'overloaded' } });
  const res = await postChat(gw, { model: 'service-fake', messages: [{ role: 'user', content: 'Hi' }], stream: true });
  assert.equal(res.status, 502);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.equal((res.json() as { error: { code: string } }).error.code, 'upstream_error');
});

test('an upstream 401 is a 502 that blames the gateway credentials, not the client key', async () => {
  upstream.handle = (_req, res) => json(res, 401, { error: { message: 'Incorrect API key provided: sk-up***' } });
  const res = await postChat(gw, { model: 'service-fake', messages: [{ role: 'user', content: 'Hi' }] });
  assert.equal(res.status, 502);
  const body = res.json() as { error: { code: string; message: string } };
  assert.equal(body.error.code, 'upstream_auth_failed');
  assert.equal(res.text.includes('sk-up'), false);
});

test('an upstream 400 is passed on as 400 with its message', async () => {
  upstream.handle = (_req, res) => json(res, 400, { error: { message: 'context length exceeded', type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } });
  const res = await postChat(gw, { model: 'service-fake', messages: [{ role: 'user', content: 'Hi' }] });
  assert.equal(res.status, 400);
  const body = res.json() as { error: { message: string } };
  assert.match(body.error.message, /context length exceeded/);
});

test('a client that disconnects mid-stream aborts the upstream request', { timeout: 10_000 }, async () => {
  upstream.handle = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'first' }))}\n\n`);
    // then hang: only the abort ends this response
  };
  await new Promise<void>((resolve, reject) => {
    const req = http.request(`${gw.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}` },
    });
    req.on('response', (r) => {
      r.once('data', () => {
        req.destroy();
        resolve();
      });
    });
    req.on('error', (e) => (req.destroyed ? undefined : reject(e)));
    req.end(JSON.stringify({ model: 'service-fake', messages: [{ role: 'user', content: 'Hi' }], stream: true }));
  });
  await upstream.aborted;
});
