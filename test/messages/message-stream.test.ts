import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ChunkRelay } from '../../src/chat/stream-relay.ts';
import type { ChatCompletionChunk, FinishReason, ToolCallDelta, Usage } from '../../src/chat/types.ts';
import { UpstreamError } from '../../src/errors/api-error.ts';
import { createMessageStreamEncoder, messageErrorEvent, PING_EVENT, type MessageStreamOptions } from '../../src/messages/message-stream.ts';
import { checkMessageStream } from '../support/anthropic-message-stream-checker.ts';

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

/** Every event of a whole stream, joined: what goes on the wire. */
function encode(chunks: ChatCompletionChunk[], options: Partial<MessageStreamOptions> = {}): string {
  const encoder = createMessageStreamEncoder({ alias: 'claude-sonnet-4-5', id: 'msg_test', ...options });
  const out: string[] = [];
  for (const c of chunks) encoder.push(c, out);
  encoder.end(out);
  assert.equal(encoder.ended, true);
  return out.join('');
}

const START_ZERO =
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_test","type":"message","role":"assistant","model":"claude-sonnet-4-5",' +
  '"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}}\n\n';
const STOP = 'event: message_stop\ndata: {"type":"message_stop"}\n\n';
const DELTA_USAGE = '"usage":{"input_tokens":176,"cache_creation_input_tokens":0,"cache_read_input_tokens":1024,"output_tokens":31}}\n\n';

describe('MessageStreamEncoder: exact bytes', () => {
  test('a text answer, usage in a final usage-only chunk landing in message_delta', () => {
    const wire = encode([chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hel' }), chunk({ content: 'lo' }), chunk({}, 'stop'), usageChunk(USAGE)]);
    assert.equal(
      wire,
      START_ZERO +
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}\n\n' +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}\n\n' +
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n' +
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},' +
        DELTA_USAGE +
        STOP,
    );
    const checked = checkMessageStream(wire);
    assert.deepEqual(checked.message.content, [{ type: 'text', text: 'Hello' }]);
    assert.deepEqual(checked.message.usage, { input_tokens: 176, cache_creation_input_tokens: 0, cache_read_input_tokens: 1024, output_tokens: 31 });
  });

  test('text, then two tool calls by their OpenAI index: each block stopped before the next starts, arguments as they arrive', () => {
    const wire = encode([
      chunk({ role: 'assistant', content: 'Let me look.' }),
      chunk(tool(0, { id: 'call_a', name: 'Read', args: '' })),
      chunk(tool(0, { args: '{"file_path":' })),
      chunk(tool(0, { args: '"/tmp/a"}' })),
      chunk(tool(1, { id: 'call_b', name: 'Bash', args: '{"command":"ls"}' })),
      chunk({}, 'tool_calls'),
      usageChunk(USAGE),
    ]);
    assert.equal(
      wire,
      START_ZERO +
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me look."}}\n\n' +
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n' +
        'event: content_block_start\ndata: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"call_a","name":"Read","input":{}}}\n\n' +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"file_path\\":"}}\n\n' +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\\"/tmp/a\\"}"}}\n\n' +
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":1}\n\n' +
        'event: content_block_start\ndata: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"call_b","name":"Bash","input":{}}}\n\n' +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\\"command\\":\\"ls\\"}"}}\n\n' +
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":2}\n\n' +
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},' +
        DELTA_USAGE +
        STOP,
    );
    const checked = checkMessageStream(wire);
    assert.deepEqual(checked.message.content, [
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_use', id: 'call_a', name: 'Read', input: { file_path: '/tmp/a' } },
      { type: 'tool_use', id: 'call_b', name: 'Bash', input: { command: 'ls' } },
    ]);
    assert.equal(checked.message.stop_reason, 'tool_use');
  });

  test('input tokens known beforehand go in message_start; without upstream usage message_delta says output_tokens 0', () => {
    const wire = encode([chunk({ role: 'assistant', content: 'x' }, 'length')], { inputTokens: 812 });
    assert.equal(
      wire,
      'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_test","type":"message","role":"assistant","model":"claude-sonnet-4-5",' +
        '"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":812,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}}\n\n' +
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}\n\n' +
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n' +
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":0}}\n\n' +
        STOP,
    );
    assert.equal(checkMessageStream(wire).message.usage['input_tokens'], 812);
  });

  test('an answer with no content: message_start, message_delta, message_stop and no block', () => {
    const wire = encode([chunk({ role: 'assistant', content: '' }), chunk({}, 'stop')]);
    assert.deepEqual(checkMessageStream(wire).events, ['message_start', 'message_delta', 'message_stop']);
  });

  test('stop reasons: content_filter and a refusal are refusal; stop with tool calls is tool_use', () => {
    const reasonOf = (chunks: ChatCompletionChunk[]): string | null => checkMessageStream(encode(chunks)).message.stop_reason;
    assert.equal(reasonOf([chunk({ content: 'partial' }, 'content_filter')]), 'refusal');
    assert.equal(reasonOf([chunk({ refusal: 'I cannot help with that.' }), chunk({}, 'stop')]), 'refusal');
    assert.equal(reasonOf([chunk(tool(0, { id: 'c', name: 'T', args: '{}' })), chunk({}, 'stop')]), 'tool_use');
    assert.equal(reasonOf([chunk({ content: 'a' }, 'stop')]), 'end_turn');
  });

  test('a refusal streams as text', () => {
    const checked = checkMessageStream(encode([chunk({ refusal: 'I cannot ' }), chunk({ refusal: 'help.' }), chunk({}, 'stop')]));
    assert.deepEqual(checked.message.content, [{ type: 'text', text: 'I cannot help.' }]);
  });

  test('text after a tool call opens a new text block', () => {
    const checked = checkMessageStream(
      encode([chunk(tool(0, { id: 'c', name: 'T', args: '{}' })), chunk({ content: 'done' }), chunk({}, 'tool_calls')]),
    );
    assert.deepEqual(checked.message.content, [
      { type: 'tool_use', id: 'c', name: 'T', input: {} },
      { type: 'text', text: 'done' },
    ]);
  });

  test('a later usage replaces an earlier one (servers that report running totals)', () => {
    const early: Usage = { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11, prompt_tokens_details: { cached_tokens: 0 } };
    const wire = encode([{ ...chunk({ content: 'a' }), usage: early }, chunk({}, 'stop'), usageChunk(USAGE)]);
    assert.ok(wire.includes(DELTA_USAGE));
  });

  test('anything for the choice after its finish reason is dropped', () => {
    const checked = checkMessageStream(encode([chunk({ content: 'a' }, 'stop'), chunk({ content: 'late' }), chunk(tool(0, { id: 'c', name: 'T', args: '{}' }))]));
    assert.deepEqual(checked.message.content, [{ type: 'text', text: 'a' }]);
  });

  test('text with line breaks, quotes, U+2028 and a lone surrogate stays one data line of valid JSON', () => {
    const text = 'a\nb\r\nc "q" \u2028 \ud800 end';
    const wire = encode([chunk({ content: text }, 'stop')]);
    const checked = checkMessageStream(wire);
    assert.equal(checked.message.content[0]?.text, text);
    assert.ok(wire.includes('"text":"a\\nb\\r\\nc \\"q\\" \u2028 \\ud800 end"'));
  });

  test('ping and error events', () => {
    assert.equal(PING_EVENT, 'event: ping\ndata: {"type":"ping"}\n\n');
    assert.equal(
      messageErrorEvent('overloaded_error', 'The upstream provider is overloaded; retry later.'),
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"The upstream provider is overloaded; retry later."}}\n\n',
    );
    assert.equal(messageErrorEvent('api_error', 'line\nbreak'), 'event: error\ndata: {"type":"error","error":{"type":"api_error","message":"line\\nbreak"}}\n\n');
  });

  test('generated message ids: msg_ and 24 hex digits', () => {
    const encoder = createMessageStreamEncoder({ alias: 'a' });
    assert.match(checkMessageStream(encoder.push(chunk({ content: 'x' }, 'stop')).concat(encoder.end()).join('')).message.id, /^msg_[0-9a-f]{24}$/);
  });
});

describe('MessageStreamEncoder: a tool call cut by the output limit, a call without arguments', () => {
  const writeStart = 'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"call_1","name":"Write","input":{}}}\n\n';

  test('a Write cut by max_tokens: the partial input, content_block_stop, stop_reason max_tokens (as Anthropic streams it)', () => {
    const wire = encode([
      chunk({ role: 'assistant', content: '' }),
      chunk(tool(0, { id: 'call_1', name: 'Write', args: '{"file_path":"big.ts","content":"export const b' })),
      chunk({}, 'length'),
      usageChunk(USAGE),
    ]);
    assert.equal(
      wire,
      START_ZERO +
        writeStart +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"file_path\\":\\"big.ts\\",\\"content\\":\\"export const b"}}\n\n' +
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n' +
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},' +
        DELTA_USAGE +
        STOP,
    );
    const checked = checkMessageStream(wire);
    assert.equal(checked.message.stop_reason, 'max_tokens');
    assert.deepEqual(checked.message.content, [{ type: 'tool_use', id: 'call_1', name: 'Write', partial_json: '{"file_path":"big.ts","content":"export const b' }]);
  });

  test('cut before any argument arrived: the block still stops, stop_reason max_tokens', () => {
    const wire = encode([chunk({ content: 'Writing.' }), chunk(tool(0, { id: 'call_1', name: 'Write', args: '' })), chunk({}, 'length')]);
    assert.ok(wire.includes(writeStart.replace('"index":0', '"index":1') + 'event: content_block_stop\ndata: {"type":"content_block_stop","index":1}\n\n'));
    assert.equal(checkMessageStream(wire).message.stop_reason, 'max_tokens');
  });

  test('an earlier whole call is still checked when a later one is cut', () => {
    const encoder = createMessageStreamEncoder({ alias: 'a', id: 'msg_x' });
    encoder.push(chunk(tool(0, { id: 'c0', name: 'Read', args: '{"a"' })));
    assert.throws(() => encoder.push(chunk(tool(1, { id: 'c1', name: 'Read', args: '{' }))), UpstreamError);
  });

  test('empty arguments (a tool without parameters): input {} said as one input_json_delta, stop_reason tool_use', () => {
    const wire = encode([chunk(tool(0, { id: 'call_1', name: 'Write', args: '' })), chunk({}, 'tool_calls')]);
    assert.equal(
      wire,
      START_ZERO +
        writeStart +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}}\n\n' +
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n' +
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":0}}\n\n' +
        STOP,
    );
    assert.deepEqual(checkMessageStream(wire).message.content, [{ type: 'tool_use', id: 'call_1', name: 'Write', input: {} }]);
  });
});

describe('MessageStreamEncoder: failures', () => {
  function failure(error: unknown, code: string, message: string): boolean {
    assert.ok(error instanceof UpstreamError);
    assert.equal(error.status, 502);
    assert.equal(error.code, code);
    assert.equal(error.message, message);
    return true;
  }

  test('the upstream ends before the choice finished: 502 upstream_stream_truncated, then every call rethrows it', () => {
    const encoder = createMessageStreamEncoder({ alias: 'a', id: 'msg_x' });
    const out = encoder.push(chunk({ content: 'cut' }));
    assert.throws(() => encoder.end(out), (e) => failure(e, 'upstream_stream_truncated', 'The upstream stream ended before the completion finished.'));
    assert.throws(() => encoder.push(chunk({}, 'stop')), UpstreamError);
    assert.throws(() => encoder.end(), UpstreamError);
    // What was written so far, then the error event, is a well-formed stream.
    const checked = checkMessageStream(out.join('') + messageErrorEvent('api_error', 'The upstream stream ended before the completion finished.'));
    assert.equal(checked.error?.type, 'api_error');
  });

  const badArguments: Array<[string[], string]> = [
    [['{"file_path":', '"/tmp/a"'], 'are not valid JSON'],
    [['[1]'], 'are not a JSON object'],
    [['null'], 'are not a JSON object'],
  ];
  for (const [pieces, what] of badArguments) {
    test(`streamed arguments ${JSON.stringify(pieces.join(''))}: the block is not stopped, 502 names the call`, () => {
      const encoder = createMessageStreamEncoder({ alias: 'a', id: 'msg_x' });
      const out: string[] = [];
      encoder.push(chunk(tool(0, { id: 'c0', name: 'Read', args: '{}' })), out);
      encoder.push(chunk(tool(1, { id: 'c1', name: 'Read', args: '' })), out);
      for (const piece of pieces) encoder.push(chunk(tool(1, { args: piece })), out);
      assert.throws(
        () => encoder.push(chunk({}, 'tool_calls'), out),
        (e) => failure(e, 'bad_upstream_response', `The upstream provider returned tool call arguments that ${what} (at tool_calls[1].function.arguments); a tool_use input must be a JSON object.`),
      );
      assert.ok(!out.join('').includes('"content_block_stop","index":1'));
      assert.equal(checkMessageStream(out.join('') + messageErrorEvent('api_error', 'x')).error?.message, 'x');
    });
  }

  test('a bad tool call is caught when the next block starts, not only at the finish', () => {
    const encoder = createMessageStreamEncoder({ alias: 'a' });
    encoder.push(chunk(tool(0, { id: 'c0', name: 'Read', args: '{"a"' })));
    assert.throws(() => encoder.push(chunk({ content: 'after' })), (e) => failure(e, 'bad_upstream_response', 'The upstream provider returned tool call arguments that are not valid JSON (at tool_calls[0].function.arguments); a tool_use input must be a JSON object.'));
  });

  test('arguments for an earlier call after a later one began cannot be expressed', () => {
    const encoder = createMessageStreamEncoder({ alias: 'a' });
    encoder.push(chunk(tool(0, { id: 'c0', name: 'A', args: '{}' })));
    encoder.push(chunk(tool(1, { id: 'c1', name: 'B', args: '{}' })));
    assert.throws(
      () => encoder.push(chunk(tool(0, { args: ' ' }))),
      (e) => failure(e, 'bad_upstream_response', 'The upstream provider sent arguments for tool call 0 after tool call 1 began; a Messages stream cannot reopen a content block.'),
    );
  });

  test('a tool call whose first delta has no name is malformed', () => {
    const encoder = createMessageStreamEncoder({ alias: 'a' });
    assert.throws(
      () => encoder.push(chunk(tool(0, { id: 'c0', args: '{}' }))),
      (e) => failure(e, 'bad_upstream_response', 'The upstream provider returned a malformed response (at choices[0].delta.tool_calls[0].function.name).'),
    );
  });

  test('a second choice is malformed (a Messages request has no n)', () => {
    const encoder = createMessageStreamEncoder({ alias: 'a' });
    assert.throws(
      () => encoder.push(chunk({ content: 'x' }, null, 1)),
      (e) => failure(e, 'bad_upstream_response', 'The upstream provider returned a malformed response (at choices[0].index).'),
    );
  });

  test('a tool call without an id gets a generated one', () => {
    const checked = checkMessageStream(encode([chunk(tool(0, { name: 'T', args: '{}' })), chunk({}, 'tool_calls')]));
    assert.match(checked.message.content[0]?.id ?? '', /^call_[0-9a-f]{24}$/);
  });
});

describe('behind the production ChunkRelay', () => {
  test('raw upstream chunks (name in pieces, usage on the last chunk) become a well-formed Messages stream', () => {
    const relay = new ChunkRelay({ alias: 'claude-haiku-4-5', includeUsage: true });
    const encoder = createMessageStreamEncoder({ alias: 'claude-haiku-4-5', id: 'msg_r' });
    const upstream: ChatCompletionChunk[] = [
      chunk({ role: 'assistant' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'Re', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { name: 'ad' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"file_path":"/w/a.txt"}' } }] }),
      { ...chunk({}, 'tool_calls'), usage: USAGE },
    ];
    const out: string[] = [];
    for (const c of upstream) for (const relayed of relay.push(c)) encoder.push(relayed, out);
    for (const relayed of relay.end()) encoder.push(relayed, out);
    encoder.end(out);
    const checked = checkMessageStream(out.join(''));
    assert.deepEqual(checked.events, ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    assert.deepEqual(checked.message.content, [{ type: 'tool_use', id: 'call_1', name: 'Read', input: { file_path: '/w/a.txt' } }]);
    assert.equal(checked.message.model, 'claude-haiku-4-5');
    assert.deepEqual(checked.message.usage, { input_tokens: 176, cache_creation_input_tokens: 0, cache_read_input_tokens: 1024, output_tokens: 31 });
  });
});

describe('the stream checker itself', () => {
  const start = START_ZERO;
  const textStart = 'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n';
  const textDelta = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}\n\n';
  const blockStop = 'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n';
  const messageDelta = 'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}\n\n';
  const broken: Array<[string, string]> = [
    ['a delta without its content_block_start', start + textDelta + blockStop + messageDelta + STOP],
    ['message_delta with a block still open', start + textStart + textDelta + messageDelta + STOP],
    ['no message_stop', start + messageDelta],
    ['an event after message_stop', start + messageDelta + STOP + PING_EVENT],
    ['an event before message_start', textStart + start + messageDelta + STOP],
    ['a tool_use start with input that is not {}', start + 'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"c","name":"T","input":{"a":1}}}\n\n' + blockStop + messageDelta + STOP],
    ['a tool_use block with no input at all', start + 'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"c","name":"T","input":{}}}\n\n' + blockStop + messageDelta + STOP],
    ['a tool_use block with a cut input, stop_reason end_turn', start + 'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"c","name":"T","input":{}}}\n\n' + 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"a"}}\n\n' + blockStop + messageDelta + STOP],
    ['a block after a tool_use with a cut input', start + 'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"c","name":"T","input":{}}}\n\n' + blockStop + textStart.replace('"index":0', '"index":1') + 'event: content_block_stop\ndata: {"type":"content_block_stop","index":1}\n\n' + messageDelta.replace('end_turn', 'max_tokens') + STOP],
    ['an event name that differs from the data type', start + 'event: message_delta\ndata: {"type":"message_stop"}\n\n'],
  ];
  for (const [what, wire] of broken) {
    test(`rejects ${what}`, () => {
      assert.throws(() => checkMessageStream(wire), assert.AssertionError);
    });
  }

  test('accepts a minimal well-formed stream with a ping', () => {
    assert.deepEqual(checkMessageStream(start + PING_EVENT + textStart + textDelta + blockStop + messageDelta + STOP).message.content, [{ type: 'text', text: 'a' }]);
  });
});
