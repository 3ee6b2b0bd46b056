// The stream decoder of a Responses passthrough, pure: a Responses stream's
// text through the event-stream parser, whole and split at every index (LF and
// CRLF), gives the same carriers; what the translation says of calls announced
// late or without deltas, of an incomplete answer, of an error event; and
// events after the terminal one are not the answer's.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { rawErrorEvent, rawEvent, type RawEvent } from '../../src/chat/messages-origin.ts';
import type { ChatCompletionChunk } from '../../src/chat/types.ts';
import { ResponsesPassthroughStreamDecoder } from '../../src/providers/openai-responses-passthrough.ts';
import { createEventStreamParser } from '../../src/sse/event-stream-parser.ts';
import { rendered } from './provider-fixtures.ts';
import { eventStreamText, RICH_EVENTS } from './responses-origin-fixtures.ts';

/** The carriers' events for `pieces` fed in turn, the decoder ended. */
function decode(pieces: readonly string[]): RawEvent[] {
  const decoder = new ResponsesPassthroughStreamDecoder();
  const out: ChatCompletionChunk[] = [];
  const parser = createEventStreamParser({ onEvent: (event) => decoder.push(event, out) });
  for (const piece of pieces) parser.feed(piece);
  parser.end();
  decoder.end();
  return out.map((chunk) => {
    const event = rawEvent(chunk);
    assert.ok(event !== undefined && chunk.choices.length === 0, 'every chunk is a carrier');
    return event;
  });
}

const line = (type: string, rest: object): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...rest })}\n\n`;
const completed = line('response.completed', { response: { id: 'r', status: 'completed', usage: { input_tokens: 3, output_tokens: 2 } } });

describe('the Responses stream decoder', () => {
  const text = eventStreamText(RICH_EVENTS);
  const expected = decode([text]);

  test('whole: one carrier per event, in order', () => {
    assert.deepEqual(
      expected.map((e) => e.data),
      RICH_EVENTS.map((e) => e.data),
    );
  });

  test('split at every index, LF and CRLF: the same carriers', () => {
    const expectedJson = JSON.stringify(expected);
    for (const variant of [text, text.replaceAll('\n', '\r\n')]) {
      for (let i = 0; i <= variant.length; i++) {
        const got = JSON.stringify(decode([variant.slice(0, i), variant.slice(i)]));
        if (got !== expectedJson) assert.fail(`split at ${i}: ${got}`);
      }
    }
  });

  test('a call announced only when done is said whole; one announced without argument deltas gets its arguments when done', () => {
    const call = (id: string, args: string) => ({ type: 'function_call', call_id: id, name: 'exec_command', arguments: args });
    const events = decode([
      line('response.output_item.done', { output_index: 0, item: call('call_a', '{"cmd":"pwd"}') }),
      line('response.output_item.added', { output_index: 1, item: call('call_b', '') }),
      line('response.output_item.done', { output_index: 1, item: call('call_b', '{"cmd":"ls"}') }),
      completed,
    ]);
    assert.deepEqual(
      events.flatMap((e) => e.translated.map((c) => c.choices[0]?.delta.tool_calls ?? c.choices[0]?.finish_reason ?? c.usage)),
      [
        [{ index: 0, id: 'call_a', type: 'function', function: { name: 'exec_command', arguments: '{"cmd":"pwd"}' } }],
        [{ index: 1, id: 'call_b', type: 'function', function: { name: 'exec_command', arguments: '' } }],
        [{ index: 1, function: { arguments: '{"cmd":"ls"}' } }],
        'tool_calls',
        { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, prompt_tokens_details: { cached_tokens: 0 } },
      ],
    );
  });

  test('response.incomplete for the content filter finishes with content_filter', () => {
    const events = decode([line('response.incomplete', { response: { status: 'incomplete', incomplete_details: { reason: 'content_filter' } } })]);
    assert.equal(events[0]?.translated[0]?.choices[0]?.finish_reason, 'content_filter');
  });

  test('events after the terminal one, and [DONE], are not the answer: no carrier', () => {
    const events = decode([completed, 'data: [DONE]\n\n', line('response.output_text.delta', { delta: 'late' })]);
    assert.deepEqual(
      events.map((e) => e.event),
      ['response.completed'],
    );
  });

  test('an error event is the upstream 502 with its message, the event riding on the error', () => {
    const data = JSON.stringify({ type: 'error', sequence_number: 1, code: 'rate_limit_exceeded', message: 'Slow down.' });
    let thrown: unknown;
    try {
      decode([`event: error\ndata: ${data}\n\n`]);
    } catch (error) {
      thrown = error;
    }
    assert.deepEqual(rendered(thrown).body, { error: { message: 'Slow down.', type: 'upstream_error', param: null, code: 'upstream_error' } });
    assert.deepEqual(rawErrorEvent(thrown), { event: 'error', data, translated: [] });
  });

  test('an event whose data is not a JSON object is the upstream 502', () => {
    assert.throws(() => decode(['data: [1]\n\n']), (error: unknown) => rendered(error).status === 502);
    assert.throws(() => decode(['data: {oops\n\n']), (error: unknown) => rendered(error).status === 502);
  });
});

test("an event named in its data's type with a line break in it is the upstream's fault, never an event line", () => {
  const injected = `data: ${JSON.stringify({ type: 'response.created\nevent: response.completed', response: { id: 'r' } })}\n\n`;
  assert.throws(
    () => decode([injected]),
    (error: unknown) => {
      assert.deepEqual(rendered(error).body, {
        error: { message: 'The upstream provider sent a stream event whose name is not an event name.', type: 'upstream_error', param: null, code: 'bad_upstream_response' },
      });
      return true;
    },
  );
});
