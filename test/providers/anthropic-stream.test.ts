import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatCompletionChunk } from '../../src/chat/types.ts';
import { ApiError } from '../../src/errors/api-error.ts';
import { createAnthropicStreamTranslator, type AnthropicStreamEvent, type AnthropicStreamTranslator } from '../../src/providers/anthropic-translate.ts';
import { createEventStreamParser } from '../../src/sse/event-stream-parser.ts';
import type { UpstreamResponse } from '../../src/upstream/transport.ts';
import { eventStreamResponse, readAllEvents } from '../upstream/event-stream-fixtures.ts';
import { fixtureJson, fixtureText } from '../fixtures/anthropic/fixtures.ts';

const CREATED = 1700000000;

function translator(): AnthropicStreamTranslator {
  return createAnthropicStreamTranslator({ created: CREATED });
}

/** Event-stream text → chunks, fed to the parser in the given slices. */
function translateText(slices: readonly string[]): ChatCompletionChunk[] {
  const t = translator();
  const out: ChatCompletionChunk[] = [];
  const parser = createEventStreamParser({
    onEvent(event) {
      out.push(...t.push(event));
    },
  });
  for (const slice of slices) parser.feed(slice);
  parser.end();
  out.push(...t.end());
  return out;
}

const EVENT_STREAM_HEADERS = new Headers({ 'content-type': 'text/event-stream' });

/**
 * A response whose body reads exactly `pieces`, as a transport hands it over;
 * made without a fetch Response and its web stream, which cost more per split
 * than the translation.
 */
function piecesResponse(pieces: readonly Uint8Array[]): UpstreamResponse {
  let next = 0;
  return {
    status: 200,
    headers: EVENT_STREAM_HEADERS,
    body: {
      read: () => Promise.resolve(pieces[next++]),
      cancel: () => undefined,
    },
  };
}

/** Response bytes → events through the exchange's own reader (UTF-8 decoded across reads) → chunks. */
async function translateResponse(response: UpstreamResponse): Promise<ChatCompletionChunk[]> {
  const t = translator();
  const out: ChatCompletionChunk[] = [];
  for (const event of await readAllEvents(response)) out.push(...t.push(event));
  out.push(...t.end());
  return out;
}

/**
 * Fails unless `actual` is the expected chunks, checked by what reaches the
 * client: the JSON text each chunk is sent as. Made once per split where a
 * deepEqual per split cost more than the translation; deepEqual still
 * reports a difference.
 */
function assertSameChunks(actual: readonly ChatCompletionChunk[], expected: readonly ChatCompletionChunk[], expectedJson: string, message: string): void {
  if (JSON.stringify(actual) !== expectedJson) assert.deepEqual(actual, expected, message);
}

function data(value: unknown, event?: string): AnthropicStreamEvent {
  const type = (value as { type?: string }).type;
  return { event: event ?? type ?? 'message', data: JSON.stringify(value) };
}

const MESSAGE_START = data({
  type: 'message_start',
  message: { id: 'msg_s', type: 'message', role: 'assistant', model: 'claude-test', content: [], stop_reason: null, usage: { input_tokens: 7, output_tokens: 1 } },
});
const MESSAGE_STOP = data({ type: 'message_stop' });

function base(): Omit<ChatCompletionChunk, 'choices'> {
  return { id: 'msg_s', object: 'chat.completion.chunk', created: CREATED, model: 'claude-test' };
}

function deltaChunk(delta: ChatCompletionChunk['choices'][number]['delta'], finishReason: ChatCompletionChunk['choices'][number]['finish_reason'] = null): ChatCompletionChunk {
  return { ...base(), choices: [{ index: 0, delta, finish_reason: finishReason }] };
}

function rendered(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ApiError, `expected an ApiError, got ${String(error)}`);
    return { status: error.status, body: error.toBody() };
  }
  return assert.fail('expected a throw');
}

function upstreamError(message: string, code: string): unknown {
  return { status: 502, body: { error: { message, type: 'upstream_error', param: null, code } } };
}

describe('stream translator: fixtures', () => {
  const text = fixtureText('stream-text-tool.sse');
  const expected = fixtureJson<ChatCompletionChunk[]>('stream-text-tool.openai.json');

  test('text then two tool calls: first delta has index, id, type and whole name; arguments in pieces; {} for none', () => {
    assert.deepEqual(translateText([text]), expected);
  });

  test('the same, the text split at every index', () => {
    const expectedJson = JSON.stringify(expected);
    for (let i = 0; i <= text.length; i++) assertSameChunks(translateText([text.slice(0, i), text.slice(i)]), expected, expectedJson, `split at ${i}`);
  });

  test('the same with CRLF line ends, split at every index', () => {
    const crlf = text.replaceAll('\n', '\r\n');
    const expectedJson = JSON.stringify(expected);
    // The data values hold no raw newline, so CRLF changes framing only.
    for (let i = 0; i <= crlf.length; i++) assertSameChunks(translateText([crlf.slice(0, i), crlf.slice(i)]), expected, expectedJson, `split at ${i}`);
  });

  test('the same as bytes: byte by byte, and split at every byte index (UTF-8 cut inside characters)', async () => {
    const bytes = Buffer.from(text, 'utf8');
    const single: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; i++) single.push(bytes.subarray(i, i + 1));
    assert.deepEqual(await translateResponse(piecesResponse(single)), expected);
    // Once through a fetch Response, as a transport hands bodies over.
    assert.deepEqual(await translateResponse(eventStreamResponse([bytes])), expected);
    const expectedJson = JSON.stringify(expected);
    for (let i = 0; i <= bytes.length; i++) {
      assertSameChunks(await translateResponse(piecesResponse([bytes.subarray(0, i), bytes.subarray(i)])), expected, expectedJson, `split at byte ${i}`);
    }
  });

  test('an error event: the chunks before it, then a 502 with Anthropic message; every later call rethrows', () => {
    const t = translator();
    const out: ChatCompletionChunk[] = [];
    let thrown: unknown;
    const parser = createEventStreamParser({
      onEvent(event) {
        out.push(...t.push(event));
      },
    });
    try {
      parser.feed(fixtureText('stream-error.sse'));
    } catch (error) {
      thrown = error;
    }
    assert.deepEqual(out, fixtureJson('stream-error.openai.json'));
    assert.ok(thrown instanceof ApiError);
    assert.deepEqual({ status: thrown.status, body: thrown.toBody() }, upstreamError('Overloaded', 'upstream_error'));
    assert.throws(() => t.push(MESSAGE_STOP), (error) => error === thrown);
    assert.throws(() => t.end(), (error) => error === thrown);
  });
});

describe('stream translator: events', () => {
  test('end without message_stop is 502 upstream_stream_truncated, and stays failed', () => {
    const t = translator();
    assert.deepEqual(t.push(MESSAGE_START), [deltaChunk({ role: 'assistant', content: '' })]);
    assert.equal(t.done, false);
    assert.deepEqual(rendered(() => t.end()), upstreamError('The upstream stream ended unexpectedly.', 'upstream_stream_truncated'));
    assert.deepEqual(rendered(() => t.push(MESSAGE_STOP)), upstreamError('The upstream stream ended unexpectedly.', 'upstream_stream_truncated'));
  });

  test('end of an empty stream is truncated too', () => {
    assert.deepEqual(rendered(() => translator().end()), upstreamError('The upstream stream ended unexpectedly.', 'upstream_stream_truncated'));
  });

  test('message_stop without a stop_reason still ends with finish_reason stop; later events are ignored', () => {
    const t = translator();
    t.push(MESSAGE_START);
    assert.deepEqual(t.push(data({ type: 'message_delta', delta: { stop_reason: null }, usage: { output_tokens: 4 } })), []);
    assert.deepEqual(t.push(MESSAGE_STOP), [
      deltaChunk({}, 'stop'),
      { ...base(), choices: [], usage: { prompt_tokens: 7, completion_tokens: 4, total_tokens: 11, prompt_tokens_details: { cached_tokens: 0 } } },
    ]);
    assert.equal(t.done, true);
    assert.deepEqual(t.push(data({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'late' } })), []);
    assert.deepEqual(t.end(), []);
  });

  test('stop reasons: max_tokens is length, refusal is content_filter; only the first one is relayed', () => {
    for (const [reason, expected] of [['max_tokens', 'length'], ['refusal', 'content_filter'], ['end_turn', 'stop']] as const) {
      const t = translator();
      t.push(MESSAGE_START);
      assert.deepEqual(t.push(data({ type: 'message_delta', delta: { stop_reason: reason, stop_sequence: null } })), [deltaChunk({}, expected)]);
      assert.deepEqual(t.push(data({ type: 'message_delta', delta: { stop_reason: 'end_turn' } })), []);
      assert.equal(t.push(MESSAGE_STOP).length, 1, 'only the usage chunk');
    }
  });

  test('usage: message_delta counts are cumulative and replace message_start counts', () => {
    const t = translator();
    t.push(
      data({
        type: 'message_start',
        message: { id: 'msg_s', model: 'claude-test', usage: { input_tokens: 100, cache_read_input_tokens: 50, cache_creation_input_tokens: 25, output_tokens: 1 } },
      }),
    );
    t.push(data({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { input_tokens: 110, cache_read_input_tokens: 60, output_tokens: 30 } }));
    assert.deepEqual(t.push(MESSAGE_STOP), [
      { ...base(), choices: [], usage: { prompt_tokens: 195, completion_tokens: 30, total_tokens: 225, prompt_tokens_details: { cached_tokens: 60 } } },
    ]);
  });

  test('no usage anywhere: no usage chunk', () => {
    const t = translator();
    t.push(data({ type: 'message_start', message: { id: 'msg_s', model: 'claude-test' } }));
    t.push(data({ type: 'message_delta', delta: { stop_reason: 'end_turn' } }));
    assert.deepEqual(t.push(MESSAGE_STOP), []);
  });

  test('pings and unknown event types are ignored, before and after message_start', () => {
    const t = translator();
    assert.deepEqual(t.push({ event: 'ping', data: '{"type": "ping"}' }), []);
    t.push(MESSAGE_START);
    assert.deepEqual(t.push({ event: 'ping', data: '{"type": "ping"}' }), []);
    assert.deepEqual(t.push(data({ type: 'future_event', payload: 1 })), []);
  });

  test('the SSE event name is used when the data has no type', () => {
    const t = translator();
    t.push(MESSAGE_START);
    t.push({ event: 'message_delta', data: '{"delta":{"stop_reason":"end_turn"}}' });
    assert.deepEqual(t.push({ event: 'message_stop', data: '{}' }).length, 1);
    assert.equal(t.done, true);
  });

  test('thinking and server-tool blocks are skipped and do not shift tool-call indexes', () => {
    const t = translator();
    t.push(MESSAGE_START);
    const events = [
      data({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } }),
      data({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } }),
      data({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'abc' } }),
      data({ type: 'content_block_stop', index: 0 }),
      data({ type: 'content_block_start', index: 1, content_block: { type: 'server_tool_use', id: 'srv_1', name: 'web_search', input: {} } }),
      data({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"q":"x"}' } }),
      data({ type: 'content_block_stop', index: 1 }),
      data({ type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_a', name: 'f', input: {} } }),
      data({ type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"a":1}' } }),
      data({ type: 'content_block_stop', index: 2 }),
    ];
    const out = events.flatMap((event) => t.push(event));
    assert.deepEqual(out, [
      deltaChunk({ tool_calls: [{ index: 0, id: 'toolu_a', type: 'function', function: { name: 'f', arguments: '' } }] }),
      deltaChunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] }),
    ]);
  });

  test('a text block that starts with text relays it; empty deltas are not relayed', () => {
    const t = translator();
    t.push(MESSAGE_START);
    assert.deepEqual(t.push(data({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'Hi' } })), [deltaChunk({ content: 'Hi' })]);
    assert.deepEqual(t.push(data({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '' } })), []);
  });

  test('a tool_use block whose input came whole at the start and no delta followed', () => {
    const t = translator();
    t.push(MESSAGE_START);
    t.push(data({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_w', name: 'f', input: { a: [1, 2] } } }));
    assert.deepEqual(t.push(data({ type: 'content_block_stop', index: 0 })), [deltaChunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":[1,2]}' } }] })]);
  });

  test('a tool_use id the gateway encoded reaches the client as its own id again; Anthropic ids as they are', () => {
    const t = translator();
    t.push(MESSAGE_START);
    assert.deepEqual(t.push(data({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'pcl_id-functions_002ef_003a0', name: 'f', input: {} } })), [
      deltaChunk({ tool_calls: [{ index: 0, id: 'functions.f:0', type: 'function', function: { name: 'f', arguments: '' } }] }),
    ]);
    t.push(data({ type: 'content_block_stop', index: 0 }));
    assert.deepEqual(t.push(data({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_01A', name: 'f', input: {} } })), [
      deltaChunk({ tool_calls: [{ index: 1, id: 'toolu_01A', type: 'function', function: { name: 'f', arguments: '' } }] }),
    ]);
  });

  test('an error event before message_start, and one without a message', () => {
    assert.deepEqual(
      rendered(() => translator().push({ event: 'error', data: '{"type":"error","error":{"type":"api_error","message":"Internal server error"}}' })),
      upstreamError('Internal server error', 'upstream_error'),
    );
    assert.deepEqual(rendered(() => translator().push({ event: 'error', data: '{}' })), upstreamError('The upstream provider reported an error during the stream.', 'upstream_error'));
  });
});

describe('stream translator: malformed events are 502', () => {
  const notJson = upstreamError('The upstream provider returned a response that is not valid JSON.', 'bad_upstream_response');
  const at = (path: string): unknown => upstreamError(`The upstream provider returned a malformed response (at ${path}).`, 'bad_upstream_response');

  function afterStart(...events: AnthropicStreamEvent[]): unknown {
    const t = translator();
    t.push(MESSAGE_START);
    return rendered(() => {
      for (const event of events) t.push(event);
    });
  }

  test('data that is not JSON, or not an object', () => {
    assert.deepEqual(rendered(() => translator().push({ event: 'message_start', data: '{"type":' })), notJson);
    assert.deepEqual(rendered(() => translator().push({ event: 'message_start', data: '[1]' })), upstreamError('The upstream provider returned a malformed response.', 'bad_upstream_response'));
  });

  test('a stream that does not begin with message_start', () => {
    assert.deepEqual(
      rendered(() => translator().push(data({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x' } }))),
      upstreamError('The upstream stream did not begin with message_start.', 'bad_upstream_response'),
    );
  });

  test('message_start without a message or an id, or twice', () => {
    assert.deepEqual(rendered(() => translator().push(data({ type: 'message_start' }))), at('message_start.message'));
    assert.deepEqual(rendered(() => translator().push(data({ type: 'message_start', message: { model: 'm' } }))), at('message_start.message.id'));
    assert.deepEqual(afterStart(MESSAGE_START), at('message_start'));
  });

  test('block events that do not fit', () => {
    const textStart = data({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    const toolStart = data({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't', name: 'f', input: {} } });
    assert.deepEqual(afterStart(data({ type: 'content_block_start', index: -1, content_block: { type: 'text' } })), at('content_block_start.index'));
    assert.deepEqual(afterStart(textStart, textStart), at('content_block_start.index'));
    assert.deepEqual(afterStart(data({ type: 'content_block_start', index: 0 })), at('content_block_start.content_block'));
    assert.deepEqual(afterStart(data({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', name: 'f' } })), at('content_block_start.content_block.id'));
    assert.deepEqual(afterStart(data({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't' } })), at('content_block_start.content_block.name'));
    assert.deepEqual(
      afterStart(data({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't', name: 'f', input: 'x' } })),
      at('content_block_start.content_block.input'),
    );
    assert.deepEqual(afterStart(data({ type: 'content_block_delta', index: 3, delta: { type: 'text_delta', text: 'x' } })), at('content_block_delta.index'));
    assert.deepEqual(afterStart(textStart, data({ type: 'content_block_delta', index: 0 })), at('content_block_delta.delta'));
    assert.deepEqual(afterStart(textStart, data({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{' } })), at('content_block_delta.delta.type'));
    assert.deepEqual(afterStart(toolStart, data({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x' } })), at('content_block_delta.delta.type'));
    assert.deepEqual(afterStart(textStart, data({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 5 } })), at('content_block_delta.delta.text'));
    assert.deepEqual(afterStart(toolStart, data({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: {} } })), at('content_block_delta.delta.partial_json'));
    assert.deepEqual(afterStart(data({ type: 'content_block_stop', index: 0 })), at('content_block_stop.index'));
  });

  test('message_delta fields of the wrong type', () => {
    assert.deepEqual(afterStart(data({ type: 'message_delta', delta: 'end' })), at('message_delta.delta'));
    assert.deepEqual(afterStart(data({ type: 'message_delta', delta: { stop_reason: 3 } })), at('message_delta.delta.stop_reason'));
    assert.deepEqual(afterStart(data({ type: 'message_delta', usage: { output_tokens: -2 } })), at('message_delta.usage.output_tokens'));
  });
});
