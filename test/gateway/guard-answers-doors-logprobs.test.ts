// Responses logprobs while the answer scan is on: the tokens are the text as
// the model wrote it, so they go from every output_text part (left out),
// delta and done event (`[]`: the field is required there), and the terminal
// event's output; a guard that only restores keeps them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RawEvent } from '../../src/chat/messages-origin.ts';
import { guardRawAnswer, RawEventGuard } from '../../src/gateway/answer-raw-guard.ts';
import { guardFor } from '../guard/answer-rig.ts';
import { FakeAnswerGuard } from './answer-guard-fake.ts';
import { at, created, ev, msgItem } from './guard-doors-fixtures.ts';

const CARD = '4111111111111111';
const tokens = (text: string) => text.split(/(?= )/).map((token) => ({ token, logprob: -0.1, bytes: [], top_logprobs: [] }));
const part = (text: string, logprobs?: unknown[]) => ({ type: 'output_text', annotations: [], text, ...(logprobs === undefined ? {} : { logprobs }) });

/** The fake guard (SECRET masked, BLOCK blocked) as a guard with the scan on. */
class ScanningFake extends FakeAnswerGuard {
  override readonly scanning = true;
}

function run(events: readonly RawEvent[], guard: ConstructorParameters<typeof RawEventGuard>[1]): RawEvent[] {
  const raw = new RawEventGuard('responses', guard);
  const out: RawEvent[] = [];
  for (const event of events) raw.push(event, out);
  raw.end(out);
  return out;
}

/** A streamed message of `pieces`, each delta with its tokens, the whole text's tokens in its done events. */
function stream(pieces: readonly string[]): RawEvent[] {
  const text = pieces.join('');
  let n = 1;
  return [
    ev('response.created', created),
    ev('response.output_item.added', { type: 'response.output_item.added', sequence_number: n++, output_index: 0, item: msgItem('in_progress', []) }),
    ev('response.content_part.added', { type: 'response.content_part.added', sequence_number: n++, ...at, part: part('', []) }),
    ...pieces.map((delta) => ev('response.output_text.delta', { type: 'response.output_text.delta', sequence_number: n++, ...at, delta, logprobs: tokens(delta) })),
    ev('response.output_text.done', { type: 'response.output_text.done', sequence_number: n++, ...at, text, logprobs: tokens(text) }),
    ev('response.content_part.done', { type: 'response.content_part.done', sequence_number: n++, ...at, part: part(text, tokens(text)) }),
    ev('response.output_item.done', { type: 'response.output_item.done', sequence_number: n++, output_index: 0, item: msgItem('completed', [part(text, tokens(text))]) }),
    ev('response.completed', { type: 'response.completed', sequence_number: n++, response: { ...created.response, status: 'completed', output: [msgItem('completed', [part(text, tokens(text))])] } }),
  ];
}

test('Responses stream, scan on: every delta and done event says logprobs [], parts and items none, even where no text changed', () => {
  const out = run(stream(['plain words', ' and more']), new ScanningFake()).map((e) => [e.event, JSON.parse(e.data) as unknown]);
  const text = 'plain words and more';
  assert.deepEqual(out.slice(3), [
    ['response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 3, ...at, delta: 'plain ', logprobs: [] }],
    ['response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 4, ...at, delta: 'words and', logprobs: [] }],
    ['response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 5, ...at, delta: ' more', logprobs: [] }],
    ['response.output_text.done', { type: 'response.output_text.done', sequence_number: 6, ...at, text, logprobs: [] }],
    ['response.content_part.done', { type: 'response.content_part.done', sequence_number: 7, ...at, part: part(text) }],
    ['response.output_item.done', { type: 'response.output_item.done', sequence_number: 8, output_index: 0, item: msgItem('completed', [part(text)]) }],
    ['response.completed', { type: 'response.completed', sequence_number: 9, response: { ...created.response, status: 'completed', output: [msgItem('completed', [part(text)])] } }],
  ]);
});

test('Responses stream, the real guard: a masked card is in no event, its logprobs included', () => {
  const text = `${'Some words before it, enough to start the release of the held text. '.repeat(2)}Your card is ${CARD} ok, and some more words to push the held tail out of the window here.`;
  const out = run(stream(text.split(/(?= )/)), guardFor({ card_number: 'mask' }, { holdBackChars: 64 }));
  assert.deepEqual(out.filter((e) => e.data.includes('4111')).map((e) => e.event), []);
  assert.deepEqual((JSON.parse(out.at(-1)?.data as string) as { response: { output: unknown } }).response.output, [msgItem('completed', [part(text.replace(CARD, '[CARD_NUMBER_1]'))])]);
});

test('Responses stream, the real guard: a blocked card is in no event before the cut, its logprobs included', () => {
  const text = `${'Some words before it, enough to start the release of the held text. '.repeat(2)}Your card is ${CARD} ok.`;
  const out = run(stream(text.split(/(?= )/)), guardFor({ card_number: 'block' }, { holdBackChars: 64 }));
  assert.equal(out.at(-1)?.event, 'response.incomplete');
  assert.deepEqual(out.filter((e) => e.data.includes(CARD)).map((e) => e.event), []);
});

test('Responses stream, restore only: the logprobs go as they came', () => {
  const guard = guardFor({ card_number: 'mask' }, { scan: false }, { '[CARD_NUMBER_1]': ['card_number', CARD] });
  const events = stream(['no values', ' here at all']);
  assert.deepEqual(run(events, guard), events);
});

test('Responses whole answer: scan on, output_text parts lose their logprobs; restore only keeps them', () => {
  const text = `Your card is ${CARD} ok`;
  const raw = { id: 'resp_1', object: 'response', status: 'completed', output: [msgItem('completed', [part(text, tokens(text)), part('plain', tokens('plain'))])] };
  assert.deepEqual(guardRawAnswer(raw, guardFor({ card_number: 'mask' })), {
    ...raw,
    output: [msgItem('completed', [part('Your card is [CARD_NUMBER_1] ok'), part('plain')])],
  });
  const placeholder = 'Your card is [CARD_NUMBER_1] ok';
  const restoring = { ...raw, output: [msgItem('completed', [part(placeholder, tokens(placeholder))])] };
  assert.deepEqual(guardRawAnswer(restoring, guardFor({ card_number: 'mask' }, { scan: false }, { '[CARD_NUMBER_1]': ['card_number', CARD] })), {
    ...raw,
    output: [msgItem('completed', [part(text, tokens(placeholder))])],
  });
});
