import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createDemoProvider } from '../../src/providers/demo.ts';
import {
  chooseTool,
  placeholderArguments,
  planDemoReply,
  replyText,
  splitArguments,
  splitWords,
} from '../../src/providers/demo-reply.ts';
import { pumpEventStream, type EventSink } from '../../src/gateway/event-stream-pump.ts';
import type { ChatCompletion, ChatCompletionChunk, ChatRequest, ToolDefinition } from '../../src/chat/types.ts';
import type { UpstreamCall } from '../../src/upstream/provider.ts';
import { collect } from '../support/collect.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { tracked } from '../support/settled.ts';
import { drive, type DrivenProvider } from '../support/drive-provider.ts';

const NOTICE = 'Portcullis demo provider (not a language model).';

function call(request: Partial<ChatRequest>, signal: AbortSignal = new AbortController().signal): UpstreamCall {
  return {
    request: { model: 'portcullis-demo', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 4096, ...request },
    requestId: 'req-1',
    signal,
  };
}

const weather: ToolDefinition = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: {
      type: 'object',
      properties: {
        city: { type: 'string' },
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        days: { type: 'integer' },
        verbose: { type: 'boolean' },
      },
      required: ['city', 'unit', 'days'],
    },
  },
};
const time: ToolDefinition = { type: 'function', function: { name: 'get_time' } };

/** The completion with the random parts pinned, for exact comparison. */
function pinned(completion: ChatCompletion): ChatCompletion {
  assert.match(completion.id, /^chatcmpl-[0-9a-f]{24}$/);
  assert.ok(Number.isInteger(completion.created));
  const choices = completion.choices.map((choice) => ({
    ...choice,
    message: {
      ...choice.message,
      refusal: null,
      tool_calls: choice.message.tool_calls.map((tc) => {
        assert.match(tc.id, /^call_[0-9a-f]{24}$/);
        return { ...tc, id: 'CALL' };
      }),
    },
  }));
  return { ...completion, id: 'ID', created: 0, choices };
}

function pinChunks(chunks: ChatCompletionChunk[]): ChatCompletionChunk[] {
  const first = chunks[0];
  assert.ok(first);
  assert.match(first.id, /^chatcmpl-[0-9a-f]{24}$/);
  return chunks.map((chunk) => {
    assert.equal(chunk.id, first.id);
    assert.equal(chunk.created, first.created);
    return {
      ...chunk,
      id: 'ID',
      created: 0,
      choices: chunk.choices.map((choice) => {
        const toolCalls = choice.delta.tool_calls?.map((tc) => {
          if (tc.id === undefined) return tc;
          assert.match(tc.id, /^call_[0-9a-f]{24}$/);
          return { ...tc, id: 'CALL' };
        });
        return toolCalls === undefined ? choice : { ...choice, delta: { ...choice.delta, tool_calls: toolCalls } };
      }),
    };
  });
}

const usage = (prompt: number, completion: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
  prompt_tokens_details: { cached_tokens: 0 },
});

test('complete: deterministic echo text with usage', async () => {
  const provider = drive(createDemoProvider());
  const first = await provider.complete(call({}));
  const second = await provider.complete(call({}));
  const text = `${NOTICE} You said: "Hello there". The request had 1 message.`;
  assert.deepEqual(pinned(first), {
    id: 'ID',
    object: 'chat.completion',
    created: 0,
    model: 'portcullis-demo',
    choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null, tool_calls: [] }, logprobs: null, finish_reason: 'stop' }],
    usage: usage(3, 16),
  });
  assert.deepEqual(pinned(second), pinned(first));
  assert.notEqual(first.id, second.id);
});

test('complete: echoes the last user message (text parts joined), counts messages, cuts at 200 chars', async () => {
  const provider = drive(createDemoProvider());
  const long = 'x'.repeat(199) + '😀é';
  const result = await provider.complete(
    call({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'first' }] },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: [{ type: 'text', text: long.slice(0, 100) }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }, { type: 'text', text: long.slice(100) }] },
      ],
    }),
  );
  assert.equal(result.choices[0]?.message.content, `${NOTICE} You said: "${'x'.repeat(199)}😀…" and sent 1 image. The request had 4 messages.`);
  // 9 + 5 + 2 + 202 UTF-16 units of message text.
  assert.equal(result.usage?.prompt_tokens, Math.ceil(218 / 4));
  const none = await provider.complete(call({ messages: [{ role: 'system', content: 'only system' }] }));
  assert.equal(none.choices[0]?.message.content, `${NOTICE} You said: "". The request had 1 message.`);
});

test('complete: after a tool result the reply quotes it', async () => {
  const provider = drive(createDemoProvider());
  const result = await provider.complete(
    call({
      tools: [weather],
      messages: [
        { role: 'user', content: 'use the weather tool' },
        { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: '{"temp":21}' }] },
      ],
    }),
  );
  assert.deepEqual(pinned(result).choices, [
    {
      index: 0,
      message: { role: 'assistant', content: `${NOTICE} The tool returned: "{"temp":21}". The request had 3 messages.`, refusal: null, tool_calls: [] },
      logprobs: null,
      finish_reason: 'stop',
    },
  ]);
});

test('complete: a tool call with schema placeholder arguments', async () => {
  const provider = drive(createDemoProvider());
  const result = await provider.complete(call({ tools: [time, weather], messages: [{ role: 'user', content: 'What is the weather? Use get_weather.' }] }));
  assert.deepEqual(pinned(result), {
    id: 'ID',
    object: 'chat.completion',
    created: 0,
    model: 'portcullis-demo',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [{ id: 'CALL', type: 'function', function: { name: 'get_weather', arguments: '{"city":"demo","unit":"celsius","days":1}' } }],
        },
        logprobs: null,
        finish_reason: 'tool_calls',
      },
    ],
    // 37 characters of message text; 1 token for the name + 3 argument pieces.
    usage: usage(10, 4),
  });
});

test('tool-call trigger rules', () => {
  const ask = (content: string, extra: Partial<ChatRequest> = {}) =>
    chooseTool({ model: 'm', messages: [{ role: 'user', content }], tools: [time, weather], ...extra })?.function.name;
  assert.equal(ask('hello'), undefined);
  assert.equal(ask('what is the GET_WEATHER today'), 'get_weather');
  assert.equal(ask('please call something'), 'get_time');
  assert.equal(ask('Use it'), 'get_time');
  assert.equal(ask('any tools?'), 'get_time');
  assert.equal(ask('the tool, please'), 'get_time');
  // Whole words only.
  assert.equal(ask('the user is calling because of toolkits'), undefined);
  assert.equal(ask('call get_weather', { tool_choice: 'none' }), undefined);
  assert.equal(ask('call get_weather', { tool_choice: 'auto' }), 'get_weather');
  assert.equal(ask('hello', { tool_choice: 'required' }), 'get_time');
  assert.equal(ask('hello get_weather', { tool_choice: 'required' }), 'get_weather');
  assert.equal(ask('hello', { tool_choice: { type: 'function', function: { name: 'get_weather' } } }), 'get_weather');
  assert.equal(ask('hello', { tool_choice: { type: 'function', function: { name: 'unknown_fn' } } }), 'unknown_fn');
  assert.equal(ask('use a tool', { tools: [] }), undefined);
  assert.equal(chooseTool({ model: 'm', messages: [{ role: 'user', content: 'use a tool' }] }), undefined);

  const afterTool: ChatRequest = {
    model: 'm',
    tools: [weather],
    messages: [
      { role: 'user', content: 'use get_weather' },
      { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c', content: 'sunny' },
    ],
  };
  assert.equal(chooseTool(afterTool), undefined);
  assert.equal(chooseTool({ ...afterTool, tool_choice: 'required' })?.function.name, 'get_weather');
});

test('placeholderArguments: typed placeholders for required properties only', () => {
  assert.deepEqual(placeholderArguments(undefined), {});
  assert.deepEqual(placeholderArguments({ type: 'object', properties: { a: { type: 'string' } } }), {});
  assert.deepEqual(
    placeholderArguments({
      type: 'object',
      properties: {
        s: { type: 'string' },
        n: { type: 'number' },
        i: { type: 'integer' },
        b: { type: 'boolean' },
        e: { enum: [3, 4] },
        c: { const: 'fixed' },
        nul: { type: 'null' },
        opt: { type: ['null', 'integer'] },
        arr: { type: 'array', items: { type: 'string' } },
        obj: { type: 'object', properties: { inner: { type: 'boolean' }, skip: { type: 'string' } }, required: ['inner'] },
        bare: { properties: { x: { type: 'number' } }, required: ['x'] },
        any: { anyOf: [{ type: 'integer' }, { type: 'string' }] },
        one: { oneOf: [{ type: 'boolean' }] },
        free: {},
        missing: 5,
        notRequired: { type: 'string' },
      },
      required: ['s', 'n', 'i', 'b', 'e', 'c', 'nul', 'opt', 'arr', 'obj', 'bare', 'any', 'one', 'free', 'undeclared', 'missing', 7],
    }),
    {
      s: 'demo',
      n: 1,
      i: 1,
      b: true,
      e: 3,
      c: 'fixed',
      nul: null,
      opt: 1,
      arr: [],
      obj: { inner: true },
      bare: { x: 1 },
      any: 1,
      one: true,
      free: 'demo',
      undeclared: 'demo',
      missing: 'demo',
    },
  );
  // Self-nesting schemas stop at depth 8.
  const node: Record<string, unknown> = { type: 'object', required: ['next'] };
  node['properties'] = { next: node };
  let depth = 0;
  let value: unknown = placeholderArguments(node);
  while (typeof value === 'object' && value !== null && 'next' in value) {
    value = (value as { next: unknown }).next;
    depth++;
  }
  assert.equal(depth, 8);
});

test('max tokens: text cut with finish_reason length, completion tokens = words emitted', async () => {
  const provider = drive(createDemoProvider());
  const result = await provider.complete(call({ max_tokens: 5 }));
  assert.deepEqual(pinned(result).choices, [
    { index: 0, message: { role: 'assistant', content: 'Portcullis demo provider (not a', refusal: null, tool_calls: [] }, logprobs: null, finish_reason: 'length' },
  ]);
  assert.deepEqual(result.usage, usage(3, 5));
  const exact = await provider.complete(call({ max_tokens: undefined, max_completion_tokens: 16 }));
  assert.equal(exact.choices[0]?.finish_reason, 'stop');
  const zero = await provider.complete(call({ max_tokens: 0, tools: [weather], tool_choice: 'required' }));
  assert.deepEqual(pinned(zero).choices, [{ index: 0, message: { role: 'assistant', content: '', refusal: null, tool_calls: [] }, logprobs: null, finish_reason: 'length' }]);
});

test('max tokens: a tool call is cut inside its arguments with finish_reason length', async () => {
  const provider = drive(createDemoProvider());
  const result = await provider.complete(call({ max_tokens: 2, tools: [weather], tool_choice: 'required' }));
  assert.deepEqual(pinned(result).choices, [
    {
      index: 0,
      message: { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 'CALL', type: 'function', function: { name: 'get_weather', arguments: '{"city":"demo","' } }] },
      logprobs: null,
      finish_reason: 'length',
    },
  ]);
  assert.equal(result.usage?.completion_tokens, 2);
});

test('response_format json_object: the content is a JSON object', async () => {
  const provider = drive(createDemoProvider());
  const result = await provider.complete(call({ response_format: { type: 'json_object' }, messages: [{ role: 'user', content: 'say "hi"' }] }));
  const content = result.choices[0]?.message.content ?? '';
  assert.equal(content, '{"demo": true, "note": "Portcullis demo provider (not a language model).", "echo": "say \\"hi\\"", "messages": 1}');
  assert.deepEqual(JSON.parse(content), { demo: true, note: NOTICE, echo: 'say "hi"', messages: 1 });
  const afterTool = await provider.complete(
    call({
      response_format: { type: 'json_object' },
      messages: [
        { role: 'user', content: 'x' },
        { role: 'tool', tool_call_id: 'c', content: 'r' },
      ],
    }),
  );
  assert.deepEqual(JSON.parse(afterTool.choices[0]?.message.content ?? ''), { demo: true, note: NOTICE, tool_result: 'r', messages: 2 });
});

test('stream: exact chunk sequence for a text reply', async () => {
  const provider = drive(createDemoProvider());
  const chunks = pinChunks(await collect(provider.stream(call({ max_tokens: 3 }))));
  const base = { id: 'ID', object: 'chat.completion.chunk' as const, created: 0, model: 'portcullis-demo' };
  assert.deepEqual(chunks, [
    { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: { content: 'Portcullis' }, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: { content: ' demo' }, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: { content: ' provider' }, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'length' }] },
    { ...base, choices: [], usage: usage(3, 3) },
  ]);
});

test('stream: exact chunk sequence for a tool call', async () => {
  const provider = drive(createDemoProvider());
  const chunks = pinChunks(await collect(provider.stream(call({ tools: [weather], tool_choice: { type: 'function', function: { name: 'get_weather' } } }))));
  const base = { id: 'ID', object: 'chat.completion.chunk' as const, created: 0, model: 'portcullis-demo' };
  const args = (piece: string) => ({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] }, finish_reason: null }] });
  assert.deepEqual(chunks, [
    {
      ...base,
      choices: [
        {
          index: 0,
          delta: { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'CALL', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
          finish_reason: null,
        },
      ],
    },
    args('{"city":"demo","'),
    args('unit":"celsius",'),
    args('"days":1}'),
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
    { ...base, choices: [], usage: usage(3, 4) },
  ]);
});

test('stream through the relay: the client sees whole tool calls and the usage only when asked', async () => {
  const provider = drive(createDemoProvider());
  const frames: string[] = [];
  const sink: EventSink = { data: async (payload) => void frames.push(payload), end: () => undefined };
  const noGo = () => false;
  await pumpEventStream(provider.provider.kind === 'local' ? provider.provider.open(call({ tools: [weather], tool_choice: 'required' })) : assert.fail('local'), { alias: 'service-chat', includeUsage: true }, {
    open: () => sink,
    endedForShutdown: noGo,
    clientGone: noGo,
    onStreamError: (code) => assert.fail(code),
  });
  assert.equal(frames.at(-1), '[DONE]');
  const relayed = frames.slice(0, -1).map((f) => JSON.parse(f) as ChatCompletionChunk);
  const toolDeltas = relayed.flatMap((c) => c.choices.flatMap((ch) => ch.delta.tool_calls ?? []));
  assert.equal(toolDeltas[0]?.function?.name, 'get_weather');
  assert.equal(toolDeltas.map((d) => d.function?.arguments ?? '').join(''), '{"city":"demo","unit":"celsius","days":1}');
  assert.deepEqual(relayed.at(-1)?.usage, usage(3, 4));
  assert.ok(relayed.every((c) => c.model === 'service-chat'));
});

test('stream: the same request gives the same content', async () => {
  const provider = drive(createDemoProvider());
  const text = async () =>
    (await collect(provider.stream(call({})))).flatMap((c) => c.choices.map((ch) => ch.delta.content ?? '')).join('');
  const first = await text();
  assert.equal(first, `${NOTICE} You said: "Hello there". The request had 1 message.`);
  assert.equal(await text(), first);
});

test('abort: complete and stream throw the abort reason', async () => {
  const provider = drive(createDemoProvider());
  const controller = new AbortController();
  const reason = new Error('client gone');
  controller.abort(reason);
  await assert.rejects(provider.complete(call({}, controller.signal)), (err: unknown) => err === reason);
  await assert.rejects(collect(provider.stream(call({}, controller.signal))), (err: unknown) => err === reason);
});

test('abort mid-stream without delay stops before the next chunk', async () => {
  const provider = drive(createDemoProvider());
  const controller = new AbortController();
  const reason = new Error('stop');
  const received: ChatCompletionChunk[] = [];
  await assert.rejects(
    (async () => {
      for await (const chunk of provider.stream(call({}, controller.signal))) {
        received.push(chunk);
        if (received.length === 2) controller.abort(reason);
      }
    })(),
    (err: unknown) => err === reason,
  );
  assert.equal(received.length, 2);
});

test('abort during a delay rejects at once and clears the timer', async () => {
  const scheduler = new ManualScheduler();
  const provider = drive(createDemoProvider({ delayMs: 10_000, scheduler }));
  const controller = new AbortController();
  const reason = new Error('stop');
  const iterator = provider.stream(call({}, controller.signal))[Symbol.asyncIterator]();
  const first = await iterator.next();
  assert.equal(first.done, false);
  const pending = iterator.next();
  await scheduler.advance(5);
  assert.deepEqual(scheduler.pending(), [9995]);
  controller.abort(reason);
  await assert.rejects(pending, (err: unknown) => err === reason);
  assert.deepEqual(scheduler.pending(), []);
});

test('delayMs paces the chunks: each after exactly delayMs', async () => {
  const scheduler = new ManualScheduler();
  const provider = drive(createDemoProvider({ delayMs: 5, scheduler }));
  const iterator = provider.stream(call({ max_tokens: 2 }))[Symbol.asyncIterator]();
  assert.equal((await iterator.next()).done, false);
  for (let i = 1; i < 5; i++) {
    const next = tracked(iterator.next());
    await scheduler.advance(4);
    assert.equal(next.settled, false, `chunk ${i + 1} before 5 ms`);
    await scheduler.advance(1);
    assert.equal((await next.promise).done, false, `chunk ${i + 1}`);
  }
  assert.equal((await iterator.next()).done, true);
  assert.equal(scheduler.elapsedMs, 4 * 5);
});

test('splitWords and splitArguments keep every character', () => {
  assert.deepEqual(splitWords(''), []);
  assert.deepEqual(splitWords('a'), ['a']);
  assert.deepEqual(splitWords('a  b c'), ['a', ' ', ' b', ' c']);
  assert.deepEqual(splitWords(' lead'), [' lead']);
  assert.deepEqual(splitArguments(''), []);
  const json = `{"k":"${'a'.repeat(14)}😀x"}`;
  const pieces = splitArguments(json);
  assert.equal(pieces.join(''), json);
  assert.deepEqual(pieces, ['{"k":"aaaaaaaaaa', 'aaaa😀x"}']);
  assert.deepEqual(splitArguments(`${'b'.repeat(15)}😀`), [`${'b'.repeat(15)}😀`]);
});

test('planDemoReply: without a max field the (short) reply is never cut', () => {
  const request: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'w '.repeat(5000) }] };
  const reply = planDemoReply(request);
  assert.equal(reply.finishReason, 'stop');
  // 100 echoed "w" words and the cut marker, plus 14 fixed words.
  assert.equal(reply.usage.completion_tokens, splitWords(replyText(request)).length);
  assert.equal(reply.usage.completion_tokens, 115);
});

test('abort between chunks with a delay rejects the next pull at once', async () => {
  const scheduler = new ManualScheduler();
  const provider = drive(createDemoProvider({ delayMs: 10_000, scheduler }));
  const controller = new AbortController();
  const reason = new Error('stop');
  const iterator = provider.stream(call({}, controller.signal))[Symbol.asyncIterator]();
  assert.equal((await iterator.next()).done, false);
  controller.abort(reason);
  // No time passes: the pull does not wait out the delay.
  await assert.rejects(iterator.next(), (err: unknown) => err === reason);
  assert.equal(scheduler.elapsedMs, 0);
  assert.deepEqual(scheduler.pending(), []);
});
