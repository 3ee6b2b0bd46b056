// The checker guards every streamed Responses test, so each rule it holds is
// shown to fail a stream that breaks it: a well-formed stream from the encoder,
// then one change per case, and the AssertionError naming the rule.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatCompletionChunk } from '../../src/chat/types.ts';
import { createResponseStreamEncoder } from '../../src/responses/response-stream.ts';
import { checkResponseStream } from './responses-stream-checker.ts';

type Event = { type: string; [field: string]: any };

function chunk(delta: ChatCompletionChunk['choices'][number]['delta'], finish: ChatCompletionChunk['choices'][number]['finish_reason'] = null): ChatCompletionChunk {
  return { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] };
}

/** Text "Hi", then a call: 15 events. */
function goodEvents(): Event[] {
  const encoder = createResponseStreamEncoder({ alias: 'a', id: 'resp_c', now: () => 1_800_000_000_000 });
  const out: string[] = [];
  encoder.push(chunk({ content: 'H' }), out);
  encoder.push(chunk({ content: 'i' }), out);
  encoder.push(chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":' } }] }), out);
  encoder.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }), out);
  encoder.push(chunk({}, 'tool_calls'), out);
  encoder.end(out);
  return out.map((frame) => JSON.parse(frame.slice(frame.indexOf('data: ') + 6)) as Event);
}

function wire(events: Event[]): string {
  return events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
}

/** Renumbers sequence_number after events were removed or added. */
function renumber(events: Event[]): Event[] {
  return events.map((event, n) => ({ ...event, sequence_number: n }));
}

describe('checkResponseStream', () => {
  test('the encoder stream passes and rebuilds the response', () => {
    const events = goodEvents();
    assert.deepEqual(
      events.map((e) => e.type),
      [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.output_item.added',
        'response.function_call_arguments.delta',
        'response.function_call_arguments.delta',
        'response.function_call_arguments.done',
        'response.output_item.done',
        'response.completed',
      ],
    );
    assert.equal(checkResponseStream(wire(events)).response['output_text'], 'Hi');
  });

  const cases: Array<[string, (events: Event[]) => Event[] | string, RegExp]> = [
    ['a sequence number skipped', (e) => e.map((x, n) => (n === 5 ? { ...x, sequence_number: 6 } : x)), /sequence_number counts the events from 0/],
    ['the event name differs from data.type', (e) => wire(e).replace('event: response.output_text.done', 'event: response.output_text.delta'), /data.type equals the event name/],
    ['an SSE id field', (e) => `id: 1\n${wire(e)}`, /no SSE id field/],
    ['not starting with response.created', (e) => renumber(e.slice(1)), /starts with response.created/],
    ['an item added while another is open', (e) => renumber([...e.slice(0, 8), e[9] as Event, ...e.slice(8)]), /added only after the previous one is done/],
    ['a wrong output_index', (e) => e.map((x, n) => (n === 4 ? { ...x, output_index: 1 } : x)), /output_index of the open item/],
    ['a wrong item_id', (e) => e.map((x, n) => (n === 10 ? { ...x, item_id: 'fc_other' } : x)), /item_id of the open item/],
    ['done text not the deltas joined', (e) => e.map((x, n) => (n === 6 ? { ...x, text: 'Ho' } : x)), /the whole text is the deltas joined/],
    ['a delta after the text was done', (e) => renumber([...e.slice(0, 7), e[5] as Event, ...e.slice(7)]), /after the part's text was done/],
    ['content_part.done without output_text.done', (e) => renumber([...e.slice(0, 6), ...e.slice(7)]), /the part's text was not done/],
    ['arguments done not the deltas joined', (e) => e.map((x, n) => (n === 12 ? { ...x, arguments: '{"a":2}' } : x)), /the whole arguments are the deltas joined/],
    [
      'arguments that are not a JSON object',
      (e) => e.map((x, n) => (n === 11 ? { ...x, delta: ']' } : n === 12 ? { ...x, arguments: '{"a":]' } : x)),
      /arguments are a JSON object/,
    ],
    ['output_item.done of a call without arguments.done', (e) => renumber([...e.slice(0, 12), ...e.slice(13)]), /function_call_arguments.done first/],
    [
      'response.completed whose output is not what the events built',
      (e) => e.map((x, n) => (n === 14 ? { ...x, response: { ...x.response, output: x.response.output.slice(1) } } : x)),
      /output is the items done, in order/,
    ],
    ['no terminal event', (e) => e.slice(0, 14), /ends with response.completed, response.incomplete or response.failed/],
    ['an event after response.completed', (e) => renumber([...e, e[4] as Event]), /nothing but error may follow response.completed/],
    ['error after response.completed', (e) => [...e, { type: 'error', sequence_number: 15, code: null, message: 'x', param: null }], /error only after response.failed/],
    ['usage on response.created', (e) => e.map((x, n) => (n === 0 ? { ...x, response: { ...x.response, usage: {} } } : x)), /no usage before the end/],
    ['store true', (e) => e.map((x, n) => (n === 14 ? { ...x, response: { ...x.response, store: true } } : x)), /store/],
    ['a required response key missing', (e) => e.map((x, n) => (n === 1 ? { ...x, response: { ...x.response, tools: undefined } } : x)), /response.tools is required/],
    ['a cut stream without its end', (e) => wire(e).slice(0, -1), /complete event/],
  ];
  for (const [name, mutate, rule] of cases) {
    test(`rejects ${name}`, () => {
      const mutated = mutate(goodEvents());
      const text = typeof mutated === 'string' ? mutated : wire(mutated);
      assert.throws(() => checkResponseStream(text), (error: unknown) => error instanceof Error && rule.test(error.message));
    });
  }
});
