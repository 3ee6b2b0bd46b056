import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ChunkRelay } from '../../src/chat/stream-relay.ts';
import type { ChatCompletion, ChatCompletionChunk, FinishReason, ToolCall, ToolCallDelta, Usage } from '../../src/chat/types.ts';
import { ApiError, UpstreamError } from '../../src/errors/api-error.ts';
import { toResponseObject } from '../../src/responses/response-answer.ts';
import { createResponseStreamEncoder, type ResponseStreamOptions } from '../../src/responses/response-stream.ts';
import { checkResponseStream } from '../support/responses-stream-checker.ts';

type Delta = ChatCompletionChunk['choices'][number]['delta'];

function chunk(delta: Delta, finishReason: FinishReason | null = null, index = 0): ChatCompletionChunk {
  return { id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1700000000, model: 'alias', choices: [{ index, delta, finish_reason: finishReason }] };
}

function usageChunk(usage: Usage): ChatCompletionChunk {
  return { id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1700000000, model: 'alias', choices: [], usage };
}

function tool(index: number, fields: { id?: string; name?: string; args?: string }): Delta {
  const piece: ToolCallDelta = { index };
  if (fields.id !== undefined) {
    piece.id = fields.id;
    piece.type = 'function';
  }
  const fn: NonNullable<ToolCallDelta['function']> = {};
  if (fields.name !== undefined) fn.name = fields.name;
  if (fields.args !== undefined) fn.arguments = fields.args;
  piece.function = fn;
  return { tool_calls: [piece] };
}

const USAGE: Usage = { prompt_tokens: 1200, completion_tokens: 31, total_tokens: 1231, prompt_tokens_details: { cached_tokens: 1024 } };
const NOW = 1_800_000_000_250;
const OPTIONS: ResponseStreamOptions = { alias: 'service-code', id: 'resp_t', now: () => NOW };

/** Every event of a whole stream, joined: what goes on the wire. */
function encode(chunks: ChatCompletionChunk[], options: Partial<ResponseStreamOptions> = {}): string {
  const encoder = createResponseStreamEncoder({ ...OPTIONS, ...options });
  const out: string[] = [];
  for (const c of chunks) encoder.push(c, out);
  encoder.end(out);
  assert.equal(encoder.ended, true);
  return out.join('');
}

const HEAD = '"id":"resp_t","object":"response","created_at":1800000000,';
const FIELDS =
  '"background":false,"error":null,"incomplete_details":null,"access_programs":null,"instructions":null,"max_output_tokens":null,"max_tool_calls":null,"model":"service-code",';
const TAIL =
  '"parallel_tool_calls":true,"previous_response_id":null,"prompt_cache_key":null,"reasoning":null,"safety_identifier":null,"store":false,' +
  '"temperature":null,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":null,"truncation":"disabled"';
const IN_PROGRESS = `{${HEAD}"status":"in_progress","completed_at":null,${FIELDS}"output":[],${TAIL},"metadata":{}}`;
const START =
  `event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":${IN_PROGRESS}}\n\n` +
  `event: response.in_progress\ndata: {"type":"response.in_progress","sequence_number":1,"response":${IN_PROGRESS}}\n\n`;
const USAGE_JSON =
  '"usage":{"input_tokens":1200,"input_tokens_details":{"cached_tokens":1024,"cache_write_tokens":0},"output_tokens":31,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":1231}';

describe('ResponseStreamEncoder: exact bytes', () => {
  test('a text answer, usage in a final usage-only chunk landing in response.completed', () => {
    const wire = encode([chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hel' }), chunk({ content: 'lo' }), chunk({}, 'stop'), usageChunk(USAGE)]);
    const where = '"item_id":"msg_t_0","output_index":0,"content_index":0';
    const message = '{"id":"msg_t_0","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"Hello"}],"role":"assistant"}';
    assert.equal(
      wire,
      START +
        'event: response.output_item.added\ndata: {"type":"response.output_item.added","sequence_number":2,"output_index":0,' +
        '"item":{"id":"msg_t_0","type":"message","status":"in_progress","content":[],"role":"assistant"}}\n\n' +
        `event: response.content_part.added\ndata: {"type":"response.content_part.added","sequence_number":3,${where},"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}}\n\n` +
        `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":4,${where},"delta":"Hel","logprobs":[]}\n\n` +
        `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":5,${where},"delta":"lo","logprobs":[]}\n\n` +
        `event: response.output_text.done\ndata: {"type":"response.output_text.done","sequence_number":6,${where},"text":"Hello","logprobs":[]}\n\n` +
        `event: response.content_part.done\ndata: {"type":"response.content_part.done","sequence_number":7,${where},"part":{"type":"output_text","annotations":[],"logprobs":[],"text":"Hello"}}\n\n` +
        `event: response.output_item.done\ndata: {"type":"response.output_item.done","sequence_number":8,"output_index":0,"item":${message}}\n\n` +
        `event: response.completed\ndata: {"type":"response.completed","sequence_number":9,"response":{${HEAD}"status":"completed","completed_at":1800000000,${FIELDS}` +
        `"output":[${message}],${TAIL},${USAGE_JSON},"metadata":{}}}\n\n`,
    );
    const checked = checkResponseStream(wire);
    assert.equal(checked.response['output_text'], 'Hello');
    assert.equal(checked.response['usage'].input_tokens_details.cached_tokens, 1024);
  });

  test('text, then two tool calls by their OpenAI index: each item done before the next is added, arguments as they arrive', () => {
    const wire = encode([
      chunk({ role: 'assistant', content: 'Let me look.' }),
      chunk(tool(0, { id: 'call_a', name: 'exec_command', args: '' })),
      chunk(tool(0, { args: '{"cmd":' })),
      chunk(tool(0, { args: '"ls"}' })),
      chunk(tool(1, { id: 'call_b', name: 'view_image', args: '{"path":"/tmp/a.png"}' })),
      chunk({}, 'tool_calls'),
      usageChunk(USAGE),
    ]);
    const events = wire.split('\n\n').filter((e) => e !== '');
    assert.deepEqual(events.slice(8, 15), [
      'event: response.output_item.added\ndata: {"type":"response.output_item.added","sequence_number":8,"output_index":1,' +
        '"item":{"id":"fc_t_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_a","name":"exec_command"}}',
      'event: response.function_call_arguments.delta\ndata: {"type":"response.function_call_arguments.delta","sequence_number":9,"item_id":"fc_t_1","output_index":1,"delta":"{\\"cmd\\":"}',
      'event: response.function_call_arguments.delta\ndata: {"type":"response.function_call_arguments.delta","sequence_number":10,"item_id":"fc_t_1","output_index":1,"delta":"\\"ls\\"}"}',
      'event: response.function_call_arguments.done\ndata: {"type":"response.function_call_arguments.done","sequence_number":11,"item_id":"fc_t_1","output_index":1,"arguments":"{\\"cmd\\":\\"ls\\"}"}',
      'event: response.output_item.done\ndata: {"type":"response.output_item.done","sequence_number":12,"output_index":1,' +
        '"item":{"id":"fc_t_1","type":"function_call","status":"completed","arguments":"{\\"cmd\\":\\"ls\\"}","call_id":"call_a","name":"exec_command"}}',
      'event: response.output_item.added\ndata: {"type":"response.output_item.added","sequence_number":13,"output_index":2,' +
        '"item":{"id":"fc_t_2","type":"function_call","status":"in_progress","arguments":"","call_id":"call_b","name":"view_image"}}',
      'event: response.function_call_arguments.delta\ndata: {"type":"response.function_call_arguments.delta","sequence_number":14,"item_id":"fc_t_2","output_index":2,"delta":"{\\"path\\":\\"/tmp/a.png\\"}"}',
    ]);
    const checked = checkResponseStream(wire);
    assert.deepEqual(checked.events, [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    assert.deepEqual(
      checked.response['output'].map((item: Record<string, unknown>) => [item['type'], item['call_id'] ?? null, item['arguments'] ?? null]),
      [
        ['message', null, null],
        ['function_call', 'call_a', '{"cmd":"ls"}'],
        ['function_call', 'call_b', '{"path":"/tmp/a.png"}'],
      ],
    );
  });

  test('a call without arguments: its {} is said by a delta of its own, then done', () => {
    const wire = encode([chunk(tool(0, { id: 'call_e', name: 'list_goals', args: '' })), chunk({}, 'tool_calls')]);
    assert.ok(
      wire.includes(
        'event: response.function_call_arguments.delta\ndata: {"type":"response.function_call_arguments.delta","sequence_number":3,"item_id":"fc_t_0","output_index":0,"delta":"{}"}\n\n' +
          'event: response.function_call_arguments.done\ndata: {"type":"response.function_call_arguments.done","sequence_number":4,"item_id":"fc_t_0","output_index":0,"arguments":"{}"}\n\n',
      ),
    );
    assert.equal(checkResponseStream(wire).response['output'][0].arguments, '{}');
  });

  test('a refusal after text: a refusal part of the same message, its own delta and done events', () => {
    const wire = encode([chunk({ content: 'Partly.' }), chunk({ refusal: 'I cannot ' }), chunk({ refusal: 'help.' }), chunk({}, 'stop')]);
    assert.ok(
      wire.includes(
        'event: response.content_part.added\ndata: {"type":"response.content_part.added","sequence_number":7,"item_id":"msg_t_0","output_index":0,"content_index":1,"part":{"type":"refusal","refusal":""}}\n\n' +
          'event: response.refusal.delta\ndata: {"type":"response.refusal.delta","sequence_number":8,"item_id":"msg_t_0","output_index":0,"content_index":1,"delta":"I cannot "}\n\n',
      ),
    );
    const checked = checkResponseStream(wire);
    assert.deepEqual(checked.response['output'][0].content, [
      { type: 'output_text', annotations: [], logprobs: [], text: 'Partly.' },
      { type: 'refusal', refusal: 'I cannot help.' },
    ]);
    assert.equal(checked.response['status'], 'completed');
    assert.equal(checked.response['usage'], undefined, 'no usage from the upstream: none invented');
  });

  test('text after a tool call opens a new message item', () => {
    const checked = checkResponseStream(encode([chunk(tool(0, { id: 'call_a', name: 'f', args: '{}' })), chunk({ content: 'Done.' }), chunk({}, 'stop')]));
    assert.deepEqual(
      checked.response['output'].map((item: Record<string, unknown>) => [item['id'], item['type']]),
      [
        ['fc_t_0', 'function_call'],
        ['msg_t_1', 'message'],
      ],
    );
  });
});

describe('ResponseStreamEncoder: cut answers', () => {
  test('the output limit in a tool call: the call gets no done events and is left out; response.incomplete, reason max_output_tokens, usage kept', () => {
    const wire = encode([
      chunk({ content: 'Reading.' }),
      chunk(tool(0, { id: 'call_a', name: 'read', args: '{"path":' })),
      chunk({}, 'length'),
      usageChunk(USAGE),
    ]);
    const checked = checkResponseStream(wire);
    assert.deepEqual(checked.events.slice(-4), ['response.output_item.done', 'response.output_item.added', 'response.function_call_arguments.delta', 'response.incomplete']);
    assert.equal(checked.response['status'], 'incomplete');
    assert.deepEqual(checked.response['incomplete_details'], { reason: 'max_output_tokens' });
    assert.deepEqual(
      checked.response['output'].map((item: Record<string, unknown>) => [item['type'], item['status']]),
      [['message', 'completed']],
    );
    assert.equal(checked.response['usage'].output_tokens, 31);
    assert.ok(!wire.includes('"arguments":"{}"'));
  });

  test('the output limit in a whole call: it stays, completed', () => {
    const checked = checkResponseStream(encode([chunk(tool(0, { id: 'call_a', name: 'read', args: '{"path":"a"}' })), chunk({}, 'length')]));
    assert.equal(checked.response['status'], 'incomplete');
    assert.deepEqual(checked.response['output'][0].status, 'completed');
  });

  test('the output limit or a filter in the text: the message is done with status incomplete', () => {
    for (const [reason, expected] of [
      ['length', 'max_output_tokens'],
      ['content_filter', 'content_filter'],
    ] as const) {
      const wire = encode([chunk({ content: 'The list: 1, 2,' }), chunk({}, reason)]);
      assert.ok(wire.includes('"type":"response.output_item.done","sequence_number":7,"output_index":0,"item":{"id":"msg_t_0","type":"message","status":"incomplete"'));
      const checked = checkResponseStream(wire);
      assert.deepEqual(checked.response['incomplete_details'], { reason: expected });
      assert.equal(checked.response['completed_at'], null);
    }
  });
});

describe('ResponseStreamEncoder: failures', () => {
  const FAILED_TAIL = (sequence: number, output: string): string =>
    `event: response.failed\ndata: {"type":"response.failed","sequence_number":${sequence},"response":{${HEAD}"status":"failed","completed_at":null,` +
    FIELDS.replace('"error":null', '"error":{"code":"server_error","message":"MESSAGE"}') +
    `"output":[${output}],${TAIL},"metadata":{}}}\n\n`;

  test('arguments that are not a JSON object: push throws 502 and fail() ends the stream with response.failed and error', () => {
    const encoder = createResponseStreamEncoder(OPTIONS);
    const out: string[] = [];
    encoder.push(chunk({ content: 'Running.' }), out);
    encoder.push(chunk(tool(0, { id: 'call_a', name: 'exec_command', args: '{"cmd":' })), out);
    let thrown: unknown;
    assert.throws(
      () => encoder.push(chunk({}, 'tool_calls'), out),
      (error: unknown) => {
        thrown = error;
        assert.ok(error instanceof UpstreamError);
        assert.equal(error.code, 'bad_upstream_response');
        assert.equal(
          error.message,
          "The upstream provider returned tool call arguments that are not valid JSON (at tool_calls[0].function.arguments); a function_call's arguments must be a JSON object.",
        );
        return true;
      },
    );
    assert.throws(() => encoder.push(chunk({ content: 'more' }), out), (error: unknown) => error === thrown, 'later pushes rethrow');
    assert.throws(() => encoder.end(out), (error: unknown) => error === thrown, 'end rethrows');
    const before = out.length;
    encoder.fail(thrown, out);
    assert.equal(encoder.ended, true);
    const message = (thrown as Error).message;
    const done =
      '{"id":"msg_t_0","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"Running."}],"role":"assistant"}';
    assert.equal(
      out.slice(before).join(''),
      FAILED_TAIL(10, done).replace('MESSAGE', message.replaceAll('"', '\\"')) +
        `event: error\ndata: {"type":"error","sequence_number":11,"code":"bad_upstream_response","message":${JSON.stringify(message)},"param":null}\n\n`,
    );
    const checked = checkResponseStream(out.join(''));
    assert.deepEqual(checked.error, { code: 'bad_upstream_response', message, param: null });
    assert.equal(checked.response['status'], 'failed');
    assert.deepEqual(encoder.fail(thrown), [], 'nothing after the end');
  });

  test('the upstream ended before the finish reason: end throws upstream_stream_truncated, fail() reports it', () => {
    const encoder = createResponseStreamEncoder(OPTIONS);
    const out = encoder.push(chunk({ content: 'Half' }));
    assert.throws(() => encoder.end(out), (error: unknown) => error instanceof UpstreamError && error.code === 'upstream_stream_truncated');
    encoder.fail(new UpstreamError('upstream_stream_truncated', 'The upstream stream ended before the completion finished.'), out);
    const checked = checkResponseStream(out.join(''));
    assert.deepEqual(checked.response['output'], [], 'the open message is not done, so not in the output');
    assert.deepEqual(checked.response['error'], { code: 'server_error', message: 'The upstream stream ended before the completion finished.' });
    assert.equal(checked.error?.code, 'upstream_stream_truncated');
  });

  test('arguments for an earlier call after a later item began: 502 naming both', () => {
    const encoder = createResponseStreamEncoder(OPTIONS);
    encoder.push(chunk(tool(0, { id: 'call_a', name: 'f', args: '{}' })));
    encoder.push(chunk(tool(1, { id: 'call_b', name: 'g', args: '{}' })));
    assert.throws(
      () => encoder.push(chunk(tool(0, { args: '{"late":1}' }))),
      (error: unknown) =>
        error instanceof UpstreamError &&
        error.message === 'The upstream provider sent arguments for tool call 0 after output item 1 began; a Responses stream cannot reopen an output item.',
    );
  });

  test('a push that throws after appending events: those events and then fail()s make a well-formed stream', () => {
    const encoder = createResponseStreamEncoder(OPTIONS);
    const out: string[] = [];
    const broken = chunk({ content: 'Text, then ', tool_calls: [{ index: 0, id: 'call_a', function: { arguments: '{}' } }] });
    assert.throws(() => encoder.push(broken, out), UpstreamError);
    assert.deepEqual(
      out.map((frame) => frame.slice('event: '.length, frame.indexOf('\n'))),
      ['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added', 'response.output_text.delta'],
    );
    encoder.fail(new UpstreamError('bad_upstream_response', 'The upstream provider returned a malformed response (at choices[0].delta.tool_calls[0].function.name).'), out);
    const checked = checkResponseStream(out.join(''));
    assert.deepEqual(checked.events.slice(-2), ['response.failed', 'error']);
    assert.deepEqual(checked.response['output'], []);
  });

  test('a choice other than index 0, and a first tool delta without a name, are malformed', () => {
    assert.throws(
      () => createResponseStreamEncoder(OPTIONS).push(chunk({ content: 'x' }, null, 1)),
      (error: unknown) => error instanceof UpstreamError && error.message === 'The upstream provider returned a malformed response (at choices[0].index).',
    );
    assert.throws(
      () => createResponseStreamEncoder(OPTIONS).push(chunk(tool(0, { id: 'call_a', args: '{}' }))),
      (error: unknown) => error instanceof UpstreamError && error.message === 'The upstream provider returned a malformed response (at choices[0].delta.tool_calls[0].function.name).',
    );
  });

  test('fail() before anything was written: created and in_progress first; a 429 is rate_limit_exceeded, anything unknown the generic 500', () => {
    const limited = createResponseStreamEncoder(OPTIONS).fail(new ApiError('rate_limit_exceeded', 'Slow down.'));
    const checked = checkResponseStream(limited.join(''));
    assert.deepEqual(checked.events, ['response.created', 'response.in_progress', 'response.failed', 'error']);
    assert.deepEqual(checked.response['error'], { code: 'rate_limit_exceeded', message: 'Slow down.' });
    assert.deepEqual(checked.error, { code: 'rate_limit_exceeded', message: 'Slow down.', param: null });
    const unknown = checkResponseStream(createResponseStreamEncoder(OPTIONS).fail(new Error('secret internals')).join(''));
    assert.deepEqual(unknown.response['error'], { code: 'server_error', message: 'The server had an error while processing your request.' });
    assert.equal(unknown.error?.message, 'The server had an error while processing your request.');
  });
});

describe('ResponseStreamEncoder: lifecycle', () => {
  test('start() before the first chunk: created and in_progress once, sequence numbers go on from there; nothing after end', () => {
    const encoder = createResponseStreamEncoder(OPTIONS);
    assert.equal(encoder.start().join(''), START);
    assert.deepEqual(encoder.start(), [], 'only once');
    const out = encoder.push(chunk({ content: 'Hi' }));
    assert.ok(out[0]?.startsWith('event: response.output_item.added\ndata: {"type":"response.output_item.added","sequence_number":2,'));
    encoder.push(chunk({}, 'stop'), out);
    encoder.push(chunk({ content: 'ignored after the finish' }), out);
    encoder.end(out);
    assert.deepEqual(encoder.push(chunk({ content: 'late' })), []);
    assert.deepEqual(encoder.end(), []);
    assert.equal(checkResponseStream(START + out.join('')).response['output_text'], 'Hi');
  });

  test('the stream and the whole answer say the same response for the same completion', () => {
    const cases: Array<{ chunks: ChatCompletionChunk[]; message: { content: string | null; refusal: string | null; tool_calls: ToolCall[] }; finish: FinishReason }> = [
      { chunks: [chunk({ content: 'A' }), chunk({ content: 'B' }), chunk({}, 'stop'), usageChunk(USAGE)], message: { content: 'AB', refusal: null, tool_calls: [] }, finish: 'stop' },
      {
        chunks: [chunk({ content: 'Go.' }), chunk(tool(0, { id: 'c1', name: 'f', args: '{"a":1}' })), chunk(tool(1, { id: 'c2', name: 'g', args: '' })), chunk({}, 'tool_calls')],
        message: {
          content: 'Go.',
          refusal: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
            { id: 'c2', type: 'function', function: { name: 'g', arguments: '' } },
          ],
        },
        finish: 'tool_calls',
      },
      {
        chunks: [chunk({ content: 'Cut' }), chunk(tool(0, { id: 'c1', name: 'f', args: '{"a":' })), chunk({}, 'length'), usageChunk(USAGE)],
        message: { content: 'Cut', refusal: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":' } }] },
        finish: 'length',
      },
      { chunks: [chunk({ content: 'No: ' }), chunk({ refusal: 'refused' }), chunk({}, 'stop')], message: { content: 'No: ', refusal: 'refused', tool_calls: [] }, finish: 'stop' },
    ];
    for (const { chunks, message, finish } of cases) {
      const streamed = checkResponseStream(encode(chunks)).response;
      const whole: ChatCompletion = {
        id: 'chatcmpl-up',
        object: 'chat.completion',
        created: 1,
        model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', ...message }, logprobs: null, finish_reason: finish }],
      };
      if (chunks.some((c) => c.usage !== undefined)) whole.usage = USAGE;
      const { output_text: _derived, ...rest } = streamed;
      assert.deepEqual(rest, JSON.parse(JSON.stringify(toResponseObject(whole, 'service-code', { id: 'resp_t', now: () => NOW }))), finish);
    }
  });

  test('behind the production ChunkRelay: raw upstream chunks (name in pieces, usage on the last chunk) become a well-formed stream', () => {
    const relay = new ChunkRelay({ alias: 'service-code', includeUsage: true });
    const encoder = createResponseStreamEncoder({ ...OPTIONS, functionNames: new Map([['ns__spawn', { name: 'spawn', namespace: 'ns' }]]) });
    const upstream: ChatCompletionChunk[] = [
      chunk({ role: 'assistant' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'ns__sp', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { name: 'awn' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"task":"build"}' } }] }),
      { ...chunk({}, 'tool_calls'), usage: USAGE },
    ];
    const out: string[] = [];
    for (const c of upstream) for (const relayed of relay.push(c)) encoder.push(relayed, out);
    for (const relayed of relay.end()) encoder.push(relayed, out);
    encoder.end(out);
    const checked = checkResponseStream(out.join(''));
    assert.deepEqual(checked.response['output'], [
      { id: 'fc_t_0', type: 'function_call', status: 'completed', arguments: '{"task":"build"}', call_id: 'call_1', name: 'spawn', namespace: 'ns' },
    ]);
    assert.equal(checked.response['usage'].total_tokens, 1231);
  });
});
