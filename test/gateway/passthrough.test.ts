// What the gateway passes through untouched in meaning: content_filter as a
// finish reason, and parallel tool calls with their indices, streamed or not.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, test } from 'node:test';
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

const base = { id: 'chatcmpl-p', created: 5, model: 'upstream-model-1' };
function sse(res: http.ServerResponse, frames: unknown[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const f of frames) res.write(`data: ${JSON.stringify(f)}\n\n`);
  res.end('data: [DONE]\n\n');
}
const tools = [
  { type: 'function', function: { name: 'get_weather' } },
  { type: 'function', function: { name: 'get_time' } },
];

test('content_filter passes through as the finish reason', async () => {
  upstream.handle = (_r, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' }] }));
  };
  const res = await postChat(gw, { model: 'service-fake', messages: [{ role: 'user', content: 'x' }] });
  assert.equal((res.json() as { choices: [{ finish_reason: string }] }).choices[0].finish_reason, 'content_filter');

  upstream.handle = (_r, res) =>
    sse(res, [
      { ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: 'par' }, finish_reason: null }] },
      { ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'content_filter' }] },
    ]);
  const s = await postChat(gw, { model: 'service-fake', messages: [{ role: 'user', content: 'x' }], stream: true });
  const finishes = sseData(s.text)
    .filter((d) => d !== '[DONE]')
    .flatMap((d) => (JSON.parse(d) as { choices: { finish_reason: string | null }[] }).choices.map((c) => c.finish_reason));
  assert.deepEqual(finishes, [null, 'content_filter']);
});

test('parallel tool calls keep their indices when streamed interleaved', async () => {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] });
  upstream.handle = (_r, res) =>
    sse(res, [
      chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }),
      chunk({}, 'tool_calls'),
    ]);
  const res = await postChat(gw, { model: 'service-fake', messages: [{ role: 'user', content: 'both' }], tools, stream: true });
  const calls = new Map<number, { id?: string; name?: string; args: string }>();
  for (const d of sseData(res.text)) {
    if (d === '[DONE]') continue;
    for (const choice of (JSON.parse(d) as { choices: { delta: { tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string } }[] } }[] }).choices) {
      for (const tc of choice.delta.tool_calls ?? []) {
        const c = calls.get(tc.index) ?? { args: '' };
        if (tc.id !== undefined) c.id = tc.id;
        if (tc.function?.name !== undefined) c.name = tc.function.name;
        c.args += tc.function?.arguments ?? '';
        calls.set(tc.index, c);
      }
    }
  }
  assert.deepEqual(Object.fromEntries(calls), {
    0: { id: 'call_a', name: 'get_weather', args: '{"city":"Oslo"}' },
    1: { id: 'call_b', name: 'get_time', args: '{}' },
  });
});
