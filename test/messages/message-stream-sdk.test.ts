// The encoder's events read by the real @anthropic-ai/sdk (pinned in
// test/package.json): its stream accumulator must rebuild the message the
// gateway meant, tool input included, from a loopback server that serves the
// encoded bytes as POST /v1/messages.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import type { ChatCompletionChunk } from '../../src/chat/types.ts';
import { createMessageStreamEncoder } from '../../src/messages/message-stream.ts';

let server: http.Server;
let body = '';
let client: Anthropic;

before(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  client = new Anthropic({ apiKey: 'k', baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, maxRetries: 0 });
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const base = { id: 'c', object: 'chat.completion.chunk' as const, created: 1, model: 'm' };
const chunk = (delta: ChatCompletionChunk['choices'][number]['delta'], finish: ChatCompletionChunk['choices'][number]['finish_reason'] = null): ChatCompletionChunk => ({
  ...base,
  choices: [{ index: 0, delta, finish_reason: finish }],
});

test('text, then a tool call in pieces, usage last: the SDK rebuilds the same message', async () => {
  const encoder = createMessageStreamEncoder({ alias: 'claude-sonnet-4-5', id: 'msg_sdk' });
  const out: string[] = [];
  for (const c of [
    chunk({ role: 'assistant', content: 'Let me look ' }),
    chunk({ content: 'that up.' }),
    chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }),
    chunk({}, 'tool_calls'),
    { ...base, choices: [], usage: { prompt_tokens: 1200, completion_tokens: 31, total_tokens: 1231, prompt_tokens_details: { cached_tokens: 1024 } } },
  ]) {
    encoder.push(c, out);
  }
  encoder.end(out);
  body = out.join('');
  const texts: string[] = [];
  const stream = client.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Weather?' }] });
  stream.on('text', (t) => texts.push(t));
  const message = await stream.finalMessage();
  assert.deepEqual(texts, ['Let me look ', 'that up.']);
  assert.equal(message.id, 'msg_sdk');
  assert.equal(message.model, 'claude-sonnet-4-5');
  assert.equal(message.stop_reason, 'tool_use');
  assert.deepEqual(
    message.content.map((b) => (b.type === 'text' ? { type: 'text', text: b.text } : b.type === 'tool_use' ? { type: b.type, id: b.id, name: b.name, input: b.input } : b)),
    [
      { type: 'text', text: 'Let me look that up.' },
      { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Oslo' } },
    ],
  );
  assert.equal(message.usage.input_tokens, 176);
  assert.equal(message.usage.cache_read_input_tokens, 1024);
  assert.equal(message.usage.output_tokens, 31);
});
