import { test } from 'node:test';
import assert from 'node:assert/strict';
// The relay's wire rules, driven through the production stream pump
// (src/gateway/event-stream-pump.ts) with a recording sink.
import { ChunkRelay, type RelayOptions } from '../../src/chat/stream-relay.ts';
import { UpstreamError } from '../../src/errors/api-error.ts';
import { pumpEventStream, type EventSink, type PumpControl } from '../../src/gateway/event-stream-pump.ts';
import type { ChatCompletionChunk, Usage } from '../../src/chat/types.ts';
import { streamOfChunks } from '../support/drive-provider.ts';

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

/** What the pump wrote: the event payloads in order, and whether it ended the sink. */
interface Written {
  frames: string[];
  ended: boolean;
  errors: string[];
}

/** A pump control over a recording sink; `data` may be replaced to stall or fail. */
function recorder(overrides: Partial<EventSink> = {}, control: Partial<PumpControl> = {}): { written: Written; control: PumpControl } {
  const written: Written = { frames: [], ended: false, errors: [] };
  const sink: EventSink = {
    async data(payload) {
      written.frames.push(payload);
    },
    end() {
      written.ended = true;
    },
    ...overrides,
  };
  return {
    written,
    control: {
      open: () => sink,
      endedForShutdown: () => false,
      clientGone: () => false,
      onStreamError: (code) => written.errors.push(code),
      ...control,
    },
  };
}

/** Pumps `chunks`; the relayed chunks (the `[DONE]` checked and removed). Throws what the pump throws. */
async function collect(
  chunks: ChatCompletionChunk[],
  options: Partial<RelayOptions> = {},
): Promise<{ out: ChatCompletionChunk[]; usages: Usage[] }> {
  const usages: Usage[] = [];
  const { written, control } = recorder(undefined, { noteUsage: (u) => usages.push(u) });
  await pumpEventStream(streamOfChunks(fromArray(chunks)), { alias: 'service-chat', includeUsage: false, ...options }, control);
  assert.equal(written.frames.at(-1), '[DONE]');
  assert.equal(written.ended, true);
  return { out: written.frames.slice(0, -1).map((f) => JSON.parse(f) as ChatCompletionChunk), usages };
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

test('a stream that ends without a finish_reason ends with the truncation frame, no [DONE]; onUsage still gets the usage it gave', async () => {
  const usages: Usage[] = [];
  const { written, control } = recorder(undefined, { noteUsage: (u) => usages.push(u) });
  await pumpEventStream(
    streamOfChunks(fromArray([up('up-1', 100, [{ index: 0, delta: { content: 'a' }, finish_reason: null }], usage)])),
    { alias: 'service-chat', includeUsage: true },
    control,
  );
  assert.deepEqual(written, {
    frames: [
      JSON.stringify(out([{ index: 0, delta: { role: 'assistant', content: 'a' }, finish_reason: null }])),
      JSON.stringify({
        error: { message: 'The upstream stream ended before the completion finished.', type: 'upstream_error', param: null, code: 'upstream_stream_truncated' },
      }),
    ],
    ended: true,
    errors: ['upstream_stream_truncated'],
  });
  assert.deepEqual(usages, [usage]);
  // Nothing sent yet: the error is thrown for the JSON error boundary.
  await assert.rejects(collect([]), (err: unknown) => err instanceof UpstreamError && err.status === 502 && err.code === 'upstream_stream_truncated');
});

test('an upstream error after the first event becomes its error frame; before it, it is thrown unchanged', async () => {
  const boom = new UpstreamError('upstream_timeout', 'The upstream provider did not answer in time.');
  async function* failing(first: boolean): AsyncGenerator<ChatCompletionChunk> {
    if (first) yield up('up-1', 100, [{ index: 0, delta: { content: 'a' }, finish_reason: null }]);
    throw boom;
  }
  const after = recorder();
  await pumpEventStream(streamOfChunks(failing(true)), { alias: 'service-chat', includeUsage: true }, after.control);
  assert.deepEqual(after.written.frames.slice(1), [JSON.stringify(boom.toBody())]);
  assert.equal(after.written.ended, true);
  assert.deepEqual(after.written.errors, ['upstream_timeout']);
  const before = recorder();
  await assert.rejects(pumpEventStream(streamOfChunks(failing(false)), { alias: 'service-chat', includeUsage: true }, before.control), (err: unknown) => err === boom);
  assert.deepEqual(before.written, { frames: [], ended: false, errors: [] });
});

test('an unexpected error mid-stream is the generic internal_error frame, reported once', async () => {
  async function* failing(): AsyncGenerator<ChatCompletionChunk> {
    yield up('up-1', 100, [{ index: 0, delta: { content: 'a' }, finish_reason: null }]);
    throw new TypeError('secret internals');
  }
  const { written, control } = recorder();
  await pumpEventStream(streamOfChunks(failing()), { alias: 'service-chat', includeUsage: false }, control);
  assert.deepEqual(written.frames.slice(1), [
    JSON.stringify({ error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: 'internal_error' } }),
  ]);
  assert.deepEqual(written.errors, ['internal_error']);
});

/** An upstream that yields one text chunk per pull, forever, and records return(). */
function endless(events: string[]): { upstream: AsyncIterable<ChatCompletionChunk>; pulled(): number } {
  let pulled = 0;
  return {
    pulled: () => pulled,
    upstream: {
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
    },
  };
}

test("a client that leaves stops the pump and reaches the upstream iterator's return(); nothing more is written", async () => {
  const events: string[] = [];
  const source = endless(events);
  let gone = false;
  const { written, control } = recorder(
    {
      async data(payload) {
        if (written.frames.length === 2) {
          gone = true;
          throw new Error('client gone');
        }
        written.frames.push(payload);
      },
    },
    { clientGone: () => gone },
  );
  await pumpEventStream(streamOfChunks(source.upstream), { alias: 'service-chat', includeUsage: false }, control);
  assert.deepEqual(events, ['upstream return']);
  assert.equal(source.pulled(), 3);
  assert.equal(written.frames.length, 2);
  assert.deepEqual(written.errors, []);
});

test('a shutdown that ended the response stops the pump at the next chunk, writing nothing more', async () => {
  const events: string[] = [];
  const source = endless(events);
  let shutdown = false;
  const { written, control } = recorder(
    {
      async data(payload) {
        written.frames.push(payload);
        if (written.frames.length === 2) shutdown = true;
      },
    },
    { endedForShutdown: () => shutdown },
  );
  await pumpEventStream(streamOfChunks(source.upstream), { alias: 'service-chat', includeUsage: false }, control);
  assert.equal(written.frames.length, 2);
  assert.equal(written.ended, false);
  assert.deepEqual(events, ['upstream return']);
});

test('the pump pulls the next upstream chunk only once the sink took the last (no read-ahead)', async () => {
  const source = endless([]);
  let release: () => void = () => {};
  let writes = 0;
  const { control } = recorder({
    data() {
      writes++;
      return new Promise<void>((resolve) => {
        release = resolve;
      });
    },
  });
  const pumping = pumpEventStream(streamOfChunks(source.upstream), { alias: 'service-chat', includeUsage: false }, control);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(source.pulled(), 1);
  assert.equal(writes, 1);
  release();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(source.pulled(), 2);
  assert.equal(writes, 2);
  // Still waiting on the sink: no third pull.
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(source.pulled(), 2);
  void pumping;
});

test('ChunkRelay: pure core usable without async glue', () => {
  const relay = new ChunkRelay({ alias: 'a', includeUsage: true });
  assert.deepEqual(relay.push(up('i', 1, [], usage)), []);
  assert.deepEqual(relay.usage, usage);
  assert.deepEqual(relay.push(up('i', 1, [{ index: 0, delta: { content: 'z' }, finish_reason: 'stop' }])), [
    { id: 'i', object: 'chat.completion.chunk', created: 1, model: 'a', choices: [{ index: 0, delta: { role: 'assistant', content: 'z' }, finish_reason: 'stop' }] },
  ]);
  assert.deepEqual(relay.end(), [{ id: 'i', object: 'chat.completion.chunk', created: 1, model: 'a', choices: [], usage }]);
});
