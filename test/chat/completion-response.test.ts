import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  generateCompletionId,
  generateToolCallId,
  malformedResponseError,
  normalizeChunk,
  normalizeCompletion,
  normalizeFinishReason,
  normalizeUsage,
} from '../../src/chat/completion-response.ts';
import { UpstreamError } from '../../src/errors/api-error.ts';

function assertMalformed(fn: () => unknown, path: string | null): void {
  const message =
    path === null
      ? 'The upstream provider returned a malformed response.'
      : `The upstream provider returned a malformed response (at ${path}).`;
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof UpstreamError);
    assert.equal(err.status, 502);
    assert.deepEqual(err.toBody(), {
      error: { message, type: 'upstream_error', param: null, code: 'bad_upstream_response' },
    });
    return true;
  });
}

test('normalizeCompletion: a typical OpenAI response is kept, unknown fields dropped', () => {
  const raw = {
    id: 'chatcmpl-abc',
    object: 'chat.completion',
    created: 1741569952,
    model: 'gpt-4.1-2025-04-14',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'Hello!', refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: {
      prompt_tokens: 19,
      completion_tokens: 10,
      total_tokens: 29,
      prompt_tokens_details: { cached_tokens: 3, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    },
    service_tier: 'default',
    system_fingerprint: null,
  };
  assert.deepEqual(normalizeCompletion(raw), {
    id: 'chatcmpl-abc',
    object: 'chat.completion',
    created: 1741569952,
    model: 'gpt-4.1-2025-04-14',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello!', refusal: null, tool_calls: [] }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 19, completion_tokens: 10, total_tokens: 29, prompt_tokens_details: { cached_tokens: 3 } },
  });
});

test('normalizeCompletion: vLLM / llama.cpp extras are dropped, null details give cached_tokens 0', () => {
  const raw = {
    id: 'cmpl-7f1',
    object: 'chat.completion',
    created: 1741569952,
    model: 'Qwen/Qwen2.5-7B-Instruct',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', reasoning_content: 'thinking...', content: 'Hi', tool_calls: [] },
        logprobs: null,
        finish_reason: 'length',
        stop_reason: null,
      },
    ],
    usage: { prompt_tokens: 5, total_tokens: 7, completion_tokens: 2, prompt_tokens_details: null },
    prompt_logprobs: null,
    timings: { prompt_n: 5, predicted_ms: 12.5 },
  };
  assert.deepEqual(normalizeCompletion(raw), {
    id: 'cmpl-7f1',
    object: 'chat.completion',
    created: 1741569952,
    model: 'Qwen/Qwen2.5-7B-Instruct',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hi', refusal: null, tool_calls: [] }, logprobs: null, finish_reason: 'length' }],
    usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7, prompt_tokens_details: { cached_tokens: 0 } },
  });
});

test('normalizeCompletion: missing usage leaves usage out; missing id/created/model get defaults', () => {
  const before = Math.floor(Date.now() / 1000);
  const result = normalizeCompletion({ choices: [{ message: { content: 'x' }, finish_reason: 'stop' }] });
  const after = Math.floor(Date.now() / 1000);
  assert.match(result.id, /^chatcmpl-[0-9a-f]{24}$/);
  assert.ok(result.created >= before && result.created <= after);
  assert.equal(Object.hasOwn(result, 'usage'), false);
  assert.deepEqual(
    { ...result, id: 'ID', created: 0 },
    {
      id: 'ID',
      object: 'chat.completion',
      created: 0,
      model: '',
      choices: [{ index: 0, message: { role: 'assistant', content: 'x', refusal: null, tool_calls: [] }, logprobs: null, finish_reason: 'stop' }],
    },
  );
  assert.match(normalizeCompletion({ id: '', choices: [{ message: {} }] }).id, /^chatcmpl-[0-9a-f]{24}$/);
});

test('normalizeCompletion: null content beside tool calls; entries normalised', () => {
  const raw = {
    id: 'c1',
    created: 10.7,
    model: 'm',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' }, extra: 1 },
            // Some local servers send arguments as an object and leave out type.
            { id: 'call_2', function: { name: 'get_time', arguments: { tz: 'UTC' } } },
            { id: 'call_3', type: 'function', function: { name: 'noop' } },
          ],
        },
        logprobs: null,
        finish_reason: 'tool_calls',
      },
    ],
  };
  assert.deepEqual(normalizeCompletion(raw), {
    id: 'c1',
    object: 'chat.completion',
    created: 10,
    model: 'm',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
            { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{"tz":"UTC"}' } },
            { id: 'call_3', type: 'function', function: { name: 'noop', arguments: '{}' } },
          ],
        },
        logprobs: null,
        finish_reason: 'tool_calls',
      },
    ],
  });
});

test('normalizeCompletion: a tool call without id gets a generated one', () => {
  const result = normalizeCompletion({
    choices: [{ message: { tool_calls: [{ function: { name: 'f', arguments: '{}' } }] }, finish_reason: 'tool_calls' }],
  });
  const call = result.choices[0]?.message.tool_calls[0];
  assert.match(call?.id ?? '', /^call_[0-9a-f]{24}$/);
});

test('normalizeCompletion: legacy function_call message and finish reason become a tool call', () => {
  const result = normalizeCompletion({
    id: 'c',
    created: 1,
    model: 'm',
    choices: [
      { index: 0, message: { role: 'assistant', content: null, function_call: { name: 'f', arguments: '{"a":1}' } }, finish_reason: 'function_call' },
    ],
  });
  const choice = result.choices[0];
  assert.equal(choice?.finish_reason, 'tool_calls');
  assert.equal(choice?.message.tool_calls.length, 1);
  assert.match(choice?.message.tool_calls[0]?.id ?? '', /^call_[0-9a-f]{24}$/);
  assert.deepEqual(choice?.message.tool_calls[0]?.function, { name: 'f', arguments: '{"a":1}' });
});

test('normalizeCompletion: refusal a string or null, always there; content parts joined', () => {
  const result = normalizeCompletion({
    id: 'c',
    created: 1,
    model: 'm',
    choices: [
      { index: 0, message: { content: null, refusal: 'I cannot help with that.' }, finish_reason: 'stop' },
      {
        index: 1,
        message: { content: [{ type: 'text', text: 'a' }, { type: 'thinking', thinking: [] }, { type: 'text', text: 'b' }] },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
  });
  assert.deepEqual(result.choices, [
    { index: 0, message: { role: 'assistant', content: null, refusal: 'I cannot help with that.', tool_calls: [] }, logprobs: null, finish_reason: 'stop' },
    { index: 1, message: { role: 'assistant', content: 'ab', refusal: null, tool_calls: [] }, logprobs: null, finish_reason: 'stop' },
  ]);
});

test('normalizeCompletion: usage counts default to 0 and the total to the sum', () => {
  const result = normalizeCompletion({ choices: [{ message: { content: '' } }], usage: { prompt_tokens: 4, completion_tokens: 6 } });
  assert.deepEqual(result.usage, { prompt_tokens: 4, completion_tokens: 6, total_tokens: 10, prompt_tokens_details: { cached_tokens: 0 } });
  assert.deepEqual(normalizeUsage({}), { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, prompt_tokens_details: { cached_tokens: 0 } });
  assert.equal(normalizeUsage(null), undefined);
});

test('normalizeCompletion: the result is a fresh object', () => {
  const toolCall = { id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } };
  const raw = { id: 'c', created: 1, model: 'm', choices: [{ index: 0, message: { content: null, tool_calls: [toolCall] }, finish_reason: 'tool_calls' }] };
  const result = normalizeCompletion(raw);
  assert.notEqual(result.choices[0]?.message.tool_calls[0], toolCall);
  assert.notEqual(result.choices[0]?.message.tool_calls[0]?.function, toolCall.function);
});

test('normalizeFinishReason: mapping table', () => {
  const cases: Array<[unknown, string | null]> = [
    ['stop', 'stop'],
    ['length', 'length'],
    ['tool_calls', 'tool_calls'],
    ['content_filter', 'content_filter'],
    ['function_call', 'tool_calls'],
    ['tool_use', 'tool_calls'],
    ['eos', 'stop'],
    ['eos_token', 'stop'],
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['max_length', 'length'],
    ['model_length', 'length'],
    ['abort', 'stop'],
    ['toString', 'stop'],
    ['', null],
    [null, null],
    [undefined, null],
  ];
  for (const [raw, expected] of cases) assert.equal(normalizeFinishReason(raw, 'x'), expected, String(raw));
  assertMalformed(() => normalizeFinishReason(1, 'choices[0].finish_reason'), 'choices[0].finish_reason');
});

test('normalizeCompletion: malformed bodies give the exact 502 naming the path', () => {
  const cases: Array<[unknown, string | null]> = [
    ['not json', null],
    [null, null],
    [[], null],
    [{}, 'choices'],
    [{ choices: {} }, 'choices'],
    [{ choices: [] }, 'choices'],
    [{ choices: [null] }, 'choices[0]'],
    [{ choices: [{}] }, 'choices[0].message'],
    [{ choices: [{ message: { content: 5 } }] }, 'choices[0].message.content'],
    [{ choices: [{ message: { content: [{ type: 'text', text: 1 }] } }] }, 'choices[0].message.content[0].text'],
    [{ choices: [{ message: { content: ['x'] } }] }, 'choices[0].message.content[0]'],
    [{ choices: [{ message: {}, index: -1 }] }, 'choices[0].index'],
    [{ choices: [{ message: {}, index: 1.5 }] }, 'choices[0].index'],
    [{ choices: [{ message: {}, finish_reason: 3 }] }, 'choices[0].finish_reason'],
    [{ choices: [{ message: { refusal: 1 } }] }, 'choices[0].message.refusal'],
    [{ choices: [{ message: { tool_calls: {} } }] }, 'choices[0].message.tool_calls'],
    [{ choices: [{ message: { tool_calls: [{ type: 'custom', function: { name: 'f' } }] } }] }, 'choices[0].message.tool_calls[0].type'],
    [{ choices: [{ message: { tool_calls: [{ id: 'a' }] } }] }, 'choices[0].message.tool_calls[0].function'],
    [{ choices: [{ message: { tool_calls: [{ function: { name: '' } }] } }] }, 'choices[0].message.tool_calls[0].function.name'],
    [{ choices: [{ message: { tool_calls: [{ id: 7, function: { name: 'f' } }] } }] }, 'choices[0].message.tool_calls[0].id'],
    [{ choices: [{ message: { tool_calls: [{ function: { name: 'f', arguments: 1 } }] } }] }, 'choices[0].message.tool_calls[0].function.arguments'],
    [{ choices: [{ message: { function_call: 'f' } }] }, 'choices[0].message.function_call'],
    [{ id: 1, choices: [{ message: {} }] }, 'id'],
    [{ created: '1', choices: [{ message: {} }] }, 'created'],
    [{ created: -1, choices: [{ message: {} }] }, 'created'],
    [{ model: 1, choices: [{ message: {} }] }, 'model'],
    [{ choices: [{ message: {} }], usage: 'x' }, 'usage'],
    [{ choices: [{ message: {} }], usage: { prompt_tokens: '1' } }, 'usage.prompt_tokens'],
    [{ choices: [{ message: {} }], usage: { completion_tokens: 1.5 } }, 'usage.completion_tokens'],
    [{ choices: [{ message: {} }], usage: { total_tokens: -2 } }, 'usage.total_tokens'],
    [{ choices: [{ message: {} }], usage: { prompt_tokens_details: 1 } }, 'usage.prompt_tokens_details'],
    [{ choices: [{ message: {} }], usage: { prompt_tokens_details: { cached_tokens: 'a' } } }, 'usage.prompt_tokens_details.cached_tokens'],
  ];
  for (const [raw, path] of cases) assertMalformed(() => normalizeCompletion(raw), path);
});

test('malformed errors never echo upstream content', () => {
  const secret = 'SECRET-CONTENT-123';
  assert.throws(
    () => normalizeCompletion({ choices: [{ message: { content: { secret } } }] }),
    (err: unknown) => err instanceof Error && !err.message.includes(secret),
  );
  assert.equal(malformedResponseError(null).message, 'The upstream provider returned a malformed response.');
  assert.equal(malformedResponseError('').message, 'The upstream provider returned a malformed response.');
});

test('generated ids have the documented shapes and differ', () => {
  assert.match(generateCompletionId(), /^chatcmpl-[0-9a-f]{24}$/);
  assert.match(generateToolCallId(), /^call_[0-9a-f]{24}$/);
  assert.notEqual(generateCompletionId(), generateCompletionId());
});

test('normalizeChunk: OpenAI first, content, tool call, finish and usage chunks', () => {
  const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 5, model: 'gpt', system_fingerprint: 'fp', service_tier: 'default' };
  const wrap = (choices: unknown[]) => ({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 5, model: 'gpt', choices });
  assert.deepEqual(
    normalizeChunk({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }], usage: null }),
    wrap([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
  );
  assert.deepEqual(
    normalizeChunk({ ...base, choices: [{ index: 0, delta: { content: 'Hel' }, finish_reason: null }] }),
    wrap([{ index: 0, delta: { content: 'Hel' }, finish_reason: null }]),
  );
  assert.deepEqual(
    normalizeChunk({
      ...base,
      choices: [
        {
          index: 0,
          delta: { role: 'assistant', content: null, refusal: null, tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
          finish_reason: null,
        },
      ],
    }),
    wrap([{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] }, finish_reason: null }]),
  );
  assert.deepEqual(
    normalizeChunk({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] }, finish_reason: null }] }),
    wrap([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] }, finish_reason: null }]),
  );
  assert.deepEqual(
    normalizeChunk({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
    wrap([{ index: 0, delta: {}, finish_reason: 'stop' }]),
  );
  assert.deepEqual(normalizeChunk({ ...base, choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } }), {
    ...wrap([]),
    usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, prompt_tokens_details: { cached_tokens: 0 } },
  });
});

test('normalizeChunk: vLLM-style extras, role null, missing choices and index, legacy function_call', () => {
  assert.deepEqual(
    normalizeChunk({
      id: 'x',
      created: 1,
      model: 'm',
      choices: [{ index: 0, delta: { role: null, reasoning_content: 'hm', content: 'a' }, logprobs: null, finish_reason: null, stop_reason: null }],
    }),
    { id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'a' }, finish_reason: null }] },
  );
  assert.deepEqual(normalizeChunk({ id: 'x', created: 1, model: 'm', usage: { prompt_tokens: 1, completion_tokens: 1 } }), {
    id: 'x',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, prompt_tokens_details: { cached_tokens: 0 } },
  });
  assert.deepEqual(
    normalizeChunk({ id: 'x', created: 1, model: 'm', choices: [{ delta: { tool_calls: [{ id: '', function: { name: '', arguments: { a: 1 } } }, { id: 'b', function: { name: 'g' } }] } }] }).choices,
    [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }, { index: 1, id: 'b', function: { name: 'g' } }] }, finish_reason: null }],
  );
  assert.deepEqual(
    normalizeChunk({ id: 'x', created: 1, model: 'm', choices: [{ index: 0, delta: { function_call: { name: 'f', arguments: '' } }, finish_reason: 'function_call' }] }).choices,
    [{ index: 0, delta: { tool_calls: [{ index: 0, function: { name: 'f', arguments: '' } }] }, finish_reason: 'tool_calls' }],
  );
  assert.deepEqual(
    normalizeChunk({ id: 'x', created: 1, model: 'm', choices: [{ index: 0, delta: null, finish_reason: 'stop' }] }).choices,
    [{ index: 0, delta: {}, finish_reason: 'stop' }],
  );
  assert.deepEqual(
    normalizeChunk({ id: 'x', created: 1, model: 'm', choices: [{ index: 0, delta: { refusal: 'no', function_call: null, tool_calls: null } }] }).choices,
    [{ index: 0, delta: { refusal: 'no' }, finish_reason: null }],
  );
  assert.deepEqual(
    normalizeChunk({ id: 'x', created: 1, model: 'm', choices: [{ index: 0, delta: { function_call: {} } }] }).choices,
    [{ index: 0, delta: { tool_calls: [{ index: 0, function: {} }] }, finish_reason: null }],
  );
  assert.deepEqual(
    normalizeChunk({ id: 'x', created: 1, model: 'm', choices: [{ index: 0, delta: { tool_calls: [{ index: 2, type: 'function' }] } }] }).choices,
    [{ index: 0, delta: { tool_calls: [{ index: 2, type: 'function' }] }, finish_reason: null }],
  );
  assert.match(normalizeChunk({ choices: [] }).id, /^chatcmpl-[0-9a-f]{24}$/);
});

test('normalizeChunk: malformed chunks give the exact 502 naming the path', () => {
  const cases: Array<[unknown, string | null]> = [
    ['x', null],
    [[1], null],
    [{ choices: 'x' }, 'choices'],
    [{ choices: [1] }, 'choices[0]'],
    [{ choices: [{ delta: 'x' }] }, 'choices[0].delta'],
    [{ choices: [{ delta: { content: 1 } }] }, 'choices[0].delta.content'],
    [{ choices: [{ delta: { refusal: false } }] }, 'choices[0].delta.refusal'],
    [{ choices: [{ delta: { tool_calls: 'x' } }] }, 'choices[0].delta.tool_calls'],
    [{ choices: [{ delta: { tool_calls: [null] } }] }, 'choices[0].delta.tool_calls[0]'],
    [{ choices: [{ delta: { tool_calls: [{ index: 'a' }] } }] }, 'choices[0].delta.tool_calls[0].index'],
    [{ choices: [{ delta: { tool_calls: [{ type: 'x' }] } }] }, 'choices[0].delta.tool_calls[0].type'],
    [{ choices: [{ delta: { tool_calls: [{ function: 1 }] } }] }, 'choices[0].delta.tool_calls[0].function'],
    [{ choices: [{ delta: { tool_calls: [{ function: { name: 1 } }] } }] }, 'choices[0].delta.tool_calls[0].function.name'],
    [{ choices: [{ delta: { tool_calls: [{ function: { arguments: [] } }] } }] }, 'choices[0].delta.tool_calls[0].function.arguments'],
    [{ choices: [{ delta: { function_call: 1 } }] }, 'choices[0].delta.function_call'],
    [{ choices: [{ delta: {}, finish_reason: {} }] }, 'choices[0].finish_reason'],
    [{ choices: [], usage: [] }, 'usage'],
    [{ choices: [], created: 'now' }, 'created'],
  ];
  for (const [raw, path] of cases) assertMalformed(() => normalizeChunk(raw), path);
});

test('normalizeCompletion: every choice carries logprobs (the upstream object, or null) and message.refusal (a string, or null), as OpenAI marks them required', () => {
  const logprobs = { content: [{ token: 'Hi', logprob: -0.01, bytes: [72, 105], top_logprobs: [] }], refusal: null };
  const result = normalizeCompletion({
    id: 'c',
    created: 1,
    model: 'm',
    choices: [
      { index: 0, message: { role: 'assistant', content: 'Hi' }, logprobs, finish_reason: 'stop' },
      { index: 1, message: { role: 'assistant', content: 'Yo' }, finish_reason: 'stop' },
    ],
  });
  assert.deepEqual(result.choices, [
    { index: 0, message: { role: 'assistant', content: 'Hi', refusal: null, tool_calls: [] }, logprobs, finish_reason: 'stop' },
    { index: 1, message: { role: 'assistant', content: 'Yo', refusal: null, tool_calls: [] }, logprobs: null, finish_reason: 'stop' },
  ]);
  // On the wire the fields are present, in OpenAI's order.
  assert.equal(
    JSON.stringify(result.choices[1]),
    '{"index":1,"message":{"role":"assistant","content":"Yo","refusal":null,"tool_calls":[]},"logprobs":null,"finish_reason":"stop"}',
  );
  for (const bad of ['x', 1, [], true]) {
    assertMalformed(() => normalizeCompletion({ choices: [{ message: { content: 'x' }, logprobs: bad, finish_reason: 'stop' }] }), 'choices[0].logprobs');
  }
});
