import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createChunkRelay, relayChatStream, type RelayOptions } from '../../src/chat/stream-relay.ts';
import { UpstreamError } from '../../src/errors.ts';
import type { ChatCompletionChunk, Usage } from '../../src/chat/types.ts';

type Choice = ChatCompletionChunk['choices'][number];

function up(id: string, created: number, choices: Choice[], usage?: Usage | null): ChatCompletionChunk {
  const chunk: ChatCompletionChunk = { id, object: 'chat.completion.chunk', created, model: 'upstream-model', choices };
  if (usage !== undefined) chunk.usage = usage;
  return chunk;
}

function out(choices: Choice[], usage?: Usage): ChatCompletionChunk {
  const chunk: ChatCompletionChunk = { id: 'up-1', object: 'chat.completion.chunk', created: 100, model: 'service-chat', choices };
  if (usage !== undefined) chunk.usage = usage;
  return chunk;
}

const usage: Usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, prompt_tokens_details: { cached_tokens: 0 } };

async function* fromArray(chunks: ChatCompletionChunk[]): AsyncGenerator<ChatCompletionChunk> {
  for (const chunk of chunks) yield chunk;
}

async function collect(
  chunks: ChatCompletionChunk[],
  options: Partial<RelayOptions> = {},
): Promise<{ out: ChatCompletionChunk[]; usages: Usage[] }> {
  const usages: Usage[] = [];
  const result: ChatCompletionChunk[] = [];
  const relayed = relayChatStream(fromArray(chunks), {
    alias: 'service-chat',
    includeUsage: false,
    onUsage: (u) => usages.push(u),
    ...options,
  });
  for await (const chunk of relayed) result.push(chunk);
  return { out: result, usages };
}

const textStream = [
  up('up-1', 100, [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
  up('up-other', 999, [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }]),
  up('', 5, [{ index: 0, delta: {}, finish_reason: 'stop' }]),
  up('up-1', 100, [], usage),
];

test('text stream: same id/created everywhere, model = alias, no usage chunk without includeUsage', async () => {
  const { out: chunks, usages } = await collect(textStream);
  assert.deepEqual(chunks, [
    out([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
    out([{ index: 0, delta: { content: 'Hi' }, finish_reason: null }]),
    out([{ index: 0, delta: {}, finish_reason: 'stop' }]),
  ]);
  assert.deepEqual(usages, [usage]);
});

test('includeUsage: one usage chunk with choices [] after the last choice chunk', async () => {
  const { out: chunks, usages } = await collect(textStream, { includeUsage: true });
  assert.equal(chunks.length, 4);
  assert.deepEqual(chunks[3], out([], usage));
  assert.deepEqual(usages, [usage]);
});

test('usage on a choice chunk is split out; the last usage given wins; onUsage is called once', async () => {
  const early = { ...usage, completion_tokens: 1, total_tokens: 4 };
  const { out: chunks, usages } = await collect(
    [
      up('up-1', 100, [{ index: 0, delta: { content: 'a' }, finish_reason: null }], early),
      up('up-1', 100, [{ index: 0, delta: { content: 'b' }, finish_reason: 'stop' }], usage),
    ],
    { includeUsage: true },
  );
  assert.deepEqual(chunks, [
    out([{ index: 0, delta: { role: 'assistant', content: 'a' }, finish_reason: null }]),
    out([{ index: 0, delta: { content: 'b' }, finish_reason: 'stop' }]),
    out([], usage),
  ]);
  assert.deepEqual(usages, [usage]);
});

test('no upstream usage: no usage chunk even with includeUsage, onUsage not called', async () => {
  const { out: chunks, usages } = await collect(
    [up('up-1', 100, [{ index: 0, delta: { content: 'x' }, finish_reason: 'length' }])],
    { includeUsage: true },
  );
  assert.deepEqual(chunks, [out([{ index: 0, delta: { role: 'assistant', content: 'x' }, finish_reason: 'length' }])]);
  assert.deepEqual(usages, []);
});

test('role is injected on the first delta; keep-alives and empty deltas are dropped; null usage ignored', async () => {
  const { out: chunks } = await collect([
    up('up-1', 100, []),
    up('up-1', 100, [{ index: 0, delta: {}, finish_reason: null }], null),
    up('up-1', 100, [{ index: 0, delta: { content: 'Hel' }, finish_reason: null }]),
    up('up-1', 100, [{ index: 0, delta: { role: 'assistant', content: 'lo' }, finish_reason: null }]),
    up('up-1', 100, [{ index: 0, delta: { content: null, refusal: null }, finish_reason: null }]),
    up('up-1', 100, [{ index: 0, delta: {}, finish_reason: 'stop' }]),
  ]);
  assert.deepEqual(chunks, [
    out([{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }]),
    out([{ index: 0, delta: { content: 'lo' }, finish_reason: null }]),
    out([{ index: 0, delta: {}, finish_reason: 'stop' }]),
  ]);
});

test('a role-only first delta is kept; a bare finish gets the role; data after a finish is dropped', async () => {
  const first = await collect([
    up('up-1', 100, [{ index: 0, delta: { role: 'assistant' }, finish_reason: null }]),
    up('up-1', 100, [{ index: 0, delta: { refusal: 'No.' }, finish_reason: 'stop' }]),
    up('up-1', 100, [{ index: 0, delta: { content: 'late' }, finish_reason: 'stop' }]),
  ]);
  assert.deepEqual(first.out, [
    out([{ index: 0, delta: { role: 'assistant' }, finish_reason: null }]),
    out([{ index: 0, delta: { refusal: 'No.' }, finish_reason: 'stop' }]),
  ]);
  const bare = await collect([up('up-1', 100, [{ index: 0, delta: {}, finish_reason: 'content_filter' }])]);
  assert.deepEqual(bare.out, [out([{ index: 0, delta: { role: 'assistant' }, finish_reason: 'content_filter' }])]);
});

test('an empty upstream id is replaced by a generated one, kept for every chunk', async () => {
  const { out: chunks } = await collect([
    up('', 7, [{ index: 0, delta: { content: 'a' }, finish_reason: null }]),
    up('later', 8, [{ index: 0, delta: {}, finish_reason: 'stop' }]),
  ]);
  const id = chunks[0]?.id ?? '';
  assert.match(id, /^chatcmpl-[0-9a-f]{24}$/);
  assert.deepEqual(
    chunks.map((c) => [c.id, c.created]),
    [
      [id, 7],
      [id, 7],
    ],
  );
});

test('OpenAI-style tool call: first delta held until arguments begin, then arguments only', async () => {
  const { out: chunks } = await collect([
    up('up-1', 100, [
      {
        index: 0,
        delta: { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
        finish_reason: null,
      },
    ]),
    up('up-1', 100, [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"city"' } }] }, finish_reason: null }]),
    up('up-1', 100, [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ':"Oslo"}' } }] }, finish_reason: null }]),
    up('up-1', 100, [{ index: 0, delta: {}, finish_reason: 'tool_calls' }]),
  ]);
  assert.deepEqual(chunks, [
    out([{ index: 0, delta: { role: 'assistant' }, finish_reason: null }]),
    out([
      {
        index: 0,
        delta: { tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city"' } }] },
        finish_reason: null,
      },
    ]),
    out([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ':"Oslo"}' } }] }, finish_reason: null }]),
    out([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]),
  ]);
});

test('a name split across deltas is sent whole; restated names, later ids and names are not repeated', async () => {
  const { out: chunks } = await collect([
    up('up-1', 100, [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_x', type: 'function', function: { name: 'get_', arguments: '' } }] }, finish_reason: null }]),
    up('up-1', 100, [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_y', function: { name: 'weather' } }] }, finish_reason: null }]),
    up('up-1', 100, [{ index: 0, delta: { tool_calls: [{ index: 0, function: { name: 'get_weather', arguments: '{}' } }] }, finish_reason: null }]),
    up('up-1', 100, [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_x', type: 'function', function: { name: 'get_weather', arguments: '' } }] }, finish_reason: null }]),
    up('up-1', 100, [{ index: 0, delta: {}, finish_reason: 'tool_calls' }]),
  ]);
  assert.deepEqual(chunks, [
    out([
      {
        index: 0,
        delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_x', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        finish_reason: null,
      },
    ]),
    out([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]),
  ]);
});

test('split name without arguments is flushed when the next call starts and on finish; missing id generated', async () => {
  const { out: chunks } = await collect([
    up('up-1', 100, [{ index: 0, delta: { tool_calls: [{ index: 0, function: { name: 'lo' } }] }, finish_reason: null }]),
    up('up-1', 100, [{ index: 0, delta: { tool_calls: [{ index: 0, function: { name: 'ok' } }] }, finish_reason: null }]),
    up('up-1', 100, [{ index: 0, delta: { tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'second' } }] }, finish_reason: null }]),
    up('up-1', 100, [{ index: 0, delta: {}, finish_reason: 'tool_calls' }]),
  ]);
  assert.equal(chunks.length, 2);
  const first = chunks[0]?.choices[0]?.delta.tool_calls?.[0];
  assert.match(first?.id ?? '', /^call_[0-9a-f]{24}$/);
  assert.deepEqual(chunks, [
    out([{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: first?.id ?? '', type: 'function', function: { name: 'look', arguments: '' } }] }, finish_reason: null }]),
    out([{ index: 0, delta: { tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'second', arguments: '' } }] }, finish_reason: 'tool_calls' }]),
  ]);
});

test('whole tool calls in one delta (Mistral/Ollama style) pass straight through', async () => {
  const { out: chunks } = await collect([
    up('up-1', 100, [
      {
        index: 0,
        delta: {
          role: 'assistant',
          tool_calls: [
            { index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '{"x":1}' } },
            { index: 1, id: 'b', type: 'function', function: { name: 'g', arguments: '{}' } },
          ],
        },
        finish_reason: 'tool_calls',
      },
    ]),
  ]);
  assert.deepEqual(chunks, [
    out([
      {
        index: 0,
        delta: {
          role: 'assistant',
          tool_calls: [
            { index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '{"x":1}' } },
            { index: 1, id: 'b', type: 'function', function: { name: 'g', arguments: '{}' } },
          ],
        },
        finish_reason: 'tool_calls',
      },
    ]),
  ]);
});

test('a tool call that never gets a name is a malformed upstream response', async () => {
  await assert.rejects(
    collect([
      up('up-1', 100, [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'a', function: { arguments: '{}' } }] }, finish_reason: null }]),
    ]),
    (err: unknown) => {
      assert.ok(err instanceof UpstreamError);
      assert.equal(err.status, 502);
      assert.equal(err.code, 'bad_upstream_response');
      assert.equal(err.message, 'The upstream provider returned a malformed response (at choices[0].delta.tool_calls[0].function.name).');
      return true;
    },
  );
});

test('a stream that ends without a finish_reason is truncated; onUsage still gets the usage it gave', async () => {
  const usages: Usage[] = [];
  const received: ChatCompletionChunk[] = [];
  const relayed = relayChatStream(
    fromArray([up('up-1', 100, [{ index: 0, delta: { content: 'a' }, finish_reason: null }], usage)]),
    { alias: 'service-chat', includeUsage: true, onUsage: (u) => usages.push(u) },
  );
  await assert.rejects(
    (async () => {
      for await (const chunk of relayed) received.push(chunk);
    })(),
    (err: unknown) => {
      assert.ok(err instanceof UpstreamError);
      assert.deepEqual(err.toBody(), {
        error: {
          message: 'The upstream stream ended before the completion finished.',
          type: 'upstream_error',
          param: null,
          code: 'upstream_stream_truncated',
        },
      });
      assert.equal(err.status, 502);
      return true;
    },
  );
  assert.deepEqual(received, [out([{ index: 0, delta: { role: 'assistant', content: 'a' }, finish_reason: null }])]);
  assert.deepEqual(usages, [usage]);
  await assert.rejects(collect([]), { code: 'upstream_stream_truncated' });
});

test('errors of the upstream iterable propagate unchanged', async () => {
  const boom = new UpstreamError('upstream_timeout', 'The upstream provider did not answer in time.');
  async function* failing(): AsyncGenerator<ChatCompletionChunk> {
    yield up('up-1', 100, [{ index: 0, delta: { content: 'a' }, finish_reason: null }]);
    throw boom;
  }
  const received: ChatCompletionChunk[] = [];
  await assert.rejects(
    (async () => {
      for await (const chunk of relayChatStream(failing(), { alias: 'service-chat', includeUsage: true })) received.push(chunk);
    })(),
    (err: unknown) => err === boom,
  );
  assert.equal(received.length, 1);
});

test("the consumer's return() reaches the upstream iterator's return()", async () => {
  const events: string[] = [];
  let pulled = 0;
  const upstream: AsyncIterable<ChatCompletionChunk> = {
    [Symbol.asyncIterator]() {
      return {
        async next() {
          pulled++;
          return { done: false, value: up('up-1', 100, [{ index: 0, delta: { content: String(pulled) }, finish_reason: null }]) };
        },
        async return() {
          events.push('upstream return');
          return { done: true, value: undefined };
        },
      };
    },
  };
  const relayed = relayChatStream(upstream, { alias: 'service-chat', includeUsage: false });
  let seen = 0;
  for await (const chunk of relayed) {
    seen++;
    assert.equal(chunk.choices[0]?.delta.content, String(seen));
    if (seen === 2) break;
  }
  assert.deepEqual(events, ['upstream return']);
  assert.equal(pulled, 2);
});

test('the relay pulls one upstream chunk per output chunk (no read-ahead)', async () => {
  let pulled = 0;
  async function* counting(): AsyncGenerator<ChatCompletionChunk> {
    for (let i = 0; i < 5; i++) {
      pulled++;
      yield up('up-1', 100, [{ index: 0, delta: { content: 'x' }, finish_reason: i === 4 ? 'stop' : null }]);
    }
  }
  const iterator = relayChatStream(counting(), { alias: 'service-chat', includeUsage: false })[Symbol.asyncIterator]();
  await iterator.next();
  assert.equal(pulled, 1);
  await iterator.next();
  assert.equal(pulled, 2);
  await iterator.return?.();
});

test('createChunkRelay: pure core usable without async glue', () => {
  const relay = createChunkRelay({ alias: 'a', includeUsage: true });
  assert.deepEqual(relay.push(up('i', 1, [], usage)), []);
  assert.deepEqual(relay.usage, usage);
  assert.deepEqual(relay.push(up('i', 1, [{ index: 0, delta: { content: 'z' }, finish_reason: 'stop' }])), [
    { id: 'i', object: 'chat.completion.chunk', created: 1, model: 'a', choices: [{ index: 0, delta: { role: 'assistant', content: 'z' }, finish_reason: 'stop' }] },
  ]);
  assert.deepEqual(relay.end(), [{ id: 'i', object: 'chat.completion.chunk', created: 1, model: 'a', choices: [], usage }]);
});
