// The answer guard on passed-through events and answers (RawEventGuard,
// guardRawAnswer), with a guard whose rules the tests can predict
// (./answer-guard-fake.ts: SECRET masked, BLOCK blocked, 5 characters held):
// every event each door's client gets, exactly.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RawEvent } from '../../src/chat/messages-origin.ts';
import { guardRawAnswer, RawEventGuard } from '../../src/gateway/answer-raw-guard.ts';
import { FakeAnswerGuard } from './answer-guard-fake.ts';
import { at, created, ev, messageDelta, msgItem, start, stop, textDelta, textPart, textStart } from './guard-doors-fixtures.ts';

/** Each event as [name, data] (the data parsed), for one guard over `events` and its end. */
function run(door: 'messages' | 'responses', events: readonly RawEvent[], guard = new FakeAnswerGuard()): { out: [string, unknown][]; same: boolean[]; guard: FakeAnswerGuard } {
  const raw = new RawEventGuard(door, guard);
  const got: RawEvent[] = [];
  for (const event of events) raw.push(event, got);
  raw.end(got);
  return { out: got.map((e) => [e.event, JSON.parse(e.data) as unknown]), same: got.map((e) => events.includes(e)), guard };
}

// --- Messages ---

test('Messages: a value split over deltas masked; held text out before the block stops; untouched events as they came', () => {
  const events = [
    ev('message_start', start),
    ev('content_block_start', textStart(0)),
    ev('content_block_delta', textDelta(0, 'hi there SEC')),
    ev('ping', { type: 'ping' }),
    ev('content_block_delta', textDelta(0, 'RET, bye')),
    ev('content_block_stop', stop(0)),
    ev('message_delta', messageDelta('end_turn')),
    ev('message_stop', { type: 'message_stop' }),
  ];
  const { out, same, guard } = run('messages', events);
  assert.deepEqual(out, [
    ['message_start', start],
    ['content_block_start', textStart(0)],
    ['content_block_delta', textDelta(0, 'hi ther')],
    ['ping', { type: 'ping' }],
    ['content_block_delta', textDelta(0, 'e [SECRET_1]')],
    ['content_block_delta', textDelta(0, ', bye')],
    ['content_block_stop', stop(0)],
    ['message_delta', messageDelta('end_turn')],
    ['message_stop', { type: 'message_stop' }],
  ]);
  assert.deepEqual(same, [true, true, false, true, false, false, true, true, true]);
  assert.deepEqual(guard.channels, ['answer.content[0].text:text']);
  assert.deepEqual(guard.drain(), [{ detector: 'secret_word', path: 'answer.content[0].text', action: 'mask' }]);
});

test('Messages: a block cuts before the value, stops the block, drops later blocks, and says refusal with the upstream usage', () => {
  const tool = { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} } };
  const events = [
    ev('message_start', start),
    ev('content_block_start', textStart(0)),
    ev('content_block_delta', textDelta(0, 'one two three BL')),
    ev('content_block_delta', textDelta(0, 'OCK after')),
    ev('content_block_delta', textDelta(0, ' more')),
    ev('content_block_stop', stop(0)),
    ev('content_block_start', tool),
    ev('content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{}' } }),
    ev('content_block_stop', stop(1)),
    ev('message_delta', messageDelta('tool_use')),
    ev('message_stop', { type: 'message_stop' }),
  ];
  const { out, guard } = run('messages', events);
  assert.deepEqual(out, [
    ['message_start', start],
    ['content_block_start', textStart(0)],
    ['content_block_delta', textDelta(0, 'one two thr')],
    ['content_block_delta', textDelta(0, 'ee ')],
    ['content_block_stop', stop(0)],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: 'refusal', stop_sequence: null }, usage: { output_tokens: 9 } }],
    ['message_stop', { type: 'message_stop' }],
  ]);
  assert.deepEqual(guard.drain(), [{ detector: 'block_word', path: 'answer.content[0].text', action: 'block' }]);
});

test('Messages: an upstream that ends after a block without its ending gets one made', () => {
  const events = [ev('message_start', start), ev('content_block_start', textStart(0)), ev('content_block_delta', textDelta(0, 'BLOCK'))];
  const { out } = run('messages', events);
  assert.deepEqual(out.slice(2), [
    ['content_block_stop', stop(0)],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: 'refusal', stop_sequence: null }, usage: { output_tokens: 0 } }],
    ['message_stop', { type: 'message_stop' }],
  ]);
});

test('Messages: tool input JSON is a json channel; thinking is signed: the same text, re-cut, its signature after all of it', () => {
  const thinkingStart = { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } };
  const think = (thinking: string) => ({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking } });
  const signature = { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQBCgIYAhIM' } };
  const tool = { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} } };
  const json = (partial_json: string) => ({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json } });
  const events = [
    ev('message_start', start),
    ev('content_block_start', thinkingStart),
    ev('content_block_delta', think('I hold a SECRET here')),
    ev('content_block_delta', signature),
    ev('content_block_stop', stop(0)),
    ev('content_block_start', tool),
    ev('content_block_delta', json('{"q": "a SE')),
    ev('content_block_delta', json('CRET"}')),
    ev('content_block_stop', stop(1)),
    ev('message_delta', messageDelta('tool_use')),
    ev('message_stop', { type: 'message_stop' }),
  ];
  const { out, guard } = run('messages', events);
  assert.deepEqual(out, [
    ['message_start', start],
    ['content_block_start', thinkingStart],
    ['content_block_delta', think('I hold a SECRET')],
    ['content_block_delta', think(' here')],
    ['content_block_delta', signature],
    ['content_block_stop', stop(0)],
    ['content_block_start', tool],
    ['content_block_delta', json('{"q": ')],
    ['content_block_delta', json('"a [SECRET_1]')],
    ['content_block_delta', json('"}')],
    ['content_block_stop', stop(1)],
    ['message_delta', messageDelta('tool_use')],
    ['message_stop', { type: 'message_stop' }],
  ]);
  const thought = out.filter(([, d]) => (d as { delta?: { type?: string } }).delta?.type === 'thinking_delta').map(([, d]) => (d as { delta: { thinking: string } }).delta.thinking);
  assert.equal(thought.join(''), 'I hold a SECRET here');
  assert.deepEqual(guard.channels, ['answer.content[0].thinking:signed', 'answer.content[1].input:json']);
  assert.deepEqual(guard.drain(), [
    { detector: 'secret_word', path: 'answer.content[0].thinking', action: 'log' },
    { detector: 'secret_word', path: 'answer.content[1].input', action: 'mask' },
  ]);
});

test('Messages: a whole answer: text masked, tool input masked (still an object), thinking kept, a block cuts and drops the rest', () => {
  const thinking = { type: 'thinking', thinking: 'SECRET thought', signature: 'sig' };
  const raw = {
    id: 'msg_1',
    type: 'message',
    content: [thinking, { type: 'text', text: 'a SECRET' }, { type: 'tool_use', id: 't', name: 'f', input: { q: 'SECRET' } }],
    stop_reason: 'tool_use',
    stop_sequence: null,
  };
  const guard = new FakeAnswerGuard();
  const guarded = guardRawAnswer(raw, guard);
  assert.deepEqual(guarded, { ...raw, content: [thinking, { type: 'text', text: 'a [SECRET_1]' }, { type: 'tool_use', id: 't', name: 'f', input: { q: '[SECRET_1]' } }] });
  assert.equal((guarded['content'] as unknown[])[0], thinking);
  assert.deepEqual(guard.drain().map((f) => `${f.path}:${f.action}`), ['answer.content[0].thinking:log', 'answer.content[1].text:mask', 'answer.content[2].input:mask']);

  const plain = { id: 'msg_2', type: 'message', content: [{ type: 'text', text: 'nothing here' }], stop_reason: 'end_turn' };
  assert.equal(guardRawAnswer(plain, new FakeAnswerGuard()), plain);

  const blocked = { ...raw, content: [{ type: 'text', text: 'keep this BLOCK not this' }, { type: 'tool_use', id: 't', name: 'f', input: {} }] };
  assert.deepEqual(guardRawAnswer(blocked, new FakeAnswerGuard()), { ...raw, content: [{ type: 'text', text: 'keep this ' }], stop_reason: 'refusal', stop_sequence: null });
  const inTool = { ...raw, content: [{ type: 'text', text: 'calling' }, { type: 'tool_use', id: 't', name: 'f', input: { q: 'BLOCK' } }] };
  assert.deepEqual(guardRawAnswer(inTool, new FakeAnswerGuard()), { ...raw, content: [{ type: 'text', text: 'calling' }], stop_reason: 'refusal', stop_sequence: null });
});

// --- Responses ---

function responsesStream(pieces: readonly string[], tail: readonly RawEvent[] = []): RawEvent[] {
  let n = 1;
  const seq = () => n++;
  const whole = pieces.join('');
  const events = [
    ev('response.created', created),
    ev('response.output_item.added', { type: 'response.output_item.added', sequence_number: seq(), output_index: 0, item: msgItem('in_progress', []) }),
    ev('response.content_part.added', { type: 'response.content_part.added', sequence_number: seq(), ...at, part: textPart('') }),
    ...pieces.map((delta) => ev('response.output_text.delta', { type: 'response.output_text.delta', sequence_number: seq(), ...at, delta, logprobs: [] })),
    ev('response.output_text.done', { type: 'response.output_text.done', sequence_number: seq(), ...at, text: whole, logprobs: [] }),
    ev('response.content_part.done', { type: 'response.content_part.done', sequence_number: seq(), ...at, part: textPart(whole) }),
    ev('response.output_item.done', { type: 'response.output_item.done', sequence_number: seq(), output_index: 0, item: msgItem('completed', [textPart(whole)]) }),
  ];
  for (const t of tail) events.push({ ...t, data: t.data.replace('"sequence_number":0', `"sequence_number":${seq()}`) });
  const completed = { type: 'response.completed', sequence_number: seq(), response: { ...created.response, status: 'completed', completed_at: 2, output: [msgItem('completed', [textPart(whole)])], usage: { input_tokens: 3, output_tokens: 4, total_tokens: 7 } } };
  events.push(ev('response.completed', completed));
  return events;
}

function seqs(out: [string, unknown][]): number[] {
  return out.map(([, d]) => (d as { sequence_number: number }).sequence_number);
}

test('Responses: a value split over deltas masked; the done events and the completed response say the guarded text; numbers recounted', () => {
  const { out, guard } = run('responses', responsesStream(['the key SEC', 'RET is', ' gone']));
  const text = 'the key [SECRET_1] is gone';
  assert.deepEqual(out, [
    ['response.created', created],
    ['response.output_item.added', { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: msgItem('in_progress', []) }],
    ['response.content_part.added', { type: 'response.content_part.added', sequence_number: 2, ...at, part: textPart('') }],
    ['response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 3, ...at, delta: 'the ke', logprobs: [] }],
    ['response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 4, ...at, delta: 'y [SECRET_1]', logprobs: [] }],
    ['response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 5, ...at, delta: ' is', logprobs: [] }],
    ['response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 6, ...at, delta: ' gone', logprobs: [] }],
    ['response.output_text.done', { type: 'response.output_text.done', sequence_number: 7, ...at, text, logprobs: [] }],
    ['response.content_part.done', { type: 'response.content_part.done', sequence_number: 8, ...at, part: textPart(text) }],
    ['response.output_item.done', { type: 'response.output_item.done', sequence_number: 9, output_index: 0, item: msgItem('completed', [textPart(text)]) }],
    [
      'response.completed',
      { type: 'response.completed', sequence_number: 10, response: { ...created.response, status: 'completed', completed_at: 2, output: [msgItem('completed', [textPart(text)])], usage: { input_tokens: 3, output_tokens: 4, total_tokens: 7 } } },
    ],
  ]);
  assert.deepEqual(guard.drain(), [{ detector: 'secret_word', path: 'answer.output[0].content[0].text', action: 'mask' }]);
});

test('Responses: nothing found: the deltas re-cut by the hold-back add up to the same text; the whole-text events say it as they came', () => {
  const events = responsesStream(['plain ', 'words only']);
  const { out, same, guard } = run('responses', events);
  const deltas = out.filter(([name]) => name === 'response.output_text.delta').map(([, d]) => (d as { delta: string }).delta);
  assert.deepEqual(deltas, ['p', 'lain words', ' only']);
  assert.deepEqual(same, [true, true, true, false, false, false, false, false, false, false]);
  const whole = out.slice(6).map(([, d]) => ({ ...(d as object), sequence_number: 0 }));
  assert.deepEqual(whole, events.slice(5).map((e) => ({ ...(JSON.parse(e.data) as object), sequence_number: 0 })));
  assert.deepEqual(seqs(out), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.deepEqual(guard.drain(), []);
});

test('Responses: a block cuts the message (done, incomplete), drops the later call, and ends incomplete by content_filter with the upstream usage', () => {
  const call = ev('response.output_item.added', { type: 'response.output_item.added', sequence_number: 0, output_index: 1, item: { id: 'fc_1', type: 'function_call', status: 'in_progress', call_id: 'c1', name: 'f', arguments: '' } });
  const { out, guard } = run('responses', responsesStream(['safe words here BL', 'OCK and more'], [call]));
  const text = 'safe words here ';
  const cutItem = msgItem('incomplete', [textPart(text)]);
  assert.deepEqual(out, [
    ['response.created', created],
    ['response.output_item.added', { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: msgItem('in_progress', []) }],
    ['response.content_part.added', { type: 'response.content_part.added', sequence_number: 2, ...at, part: textPart('') }],
    ['response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 3, ...at, delta: 'safe words he', logprobs: [] }],
    ['response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 4, ...at, delta: 're ', logprobs: [] }],
    ['response.output_text.done', { type: 'response.output_text.done', sequence_number: 5, ...at, text, logprobs: [] }],
    ['response.content_part.done', { type: 'response.content_part.done', sequence_number: 6, ...at, part: textPart(text) }],
    ['response.output_item.done', { type: 'response.output_item.done', sequence_number: 7, output_index: 0, item: cutItem }],
    [
      'response.incomplete',
      {
        type: 'response.incomplete',
        sequence_number: 8,
        response: { ...created.response, status: 'incomplete', completed_at: null, output: [cutItem], usage: { input_tokens: 3, output_tokens: 4, total_tokens: 7 }, incomplete_details: { reason: 'content_filter' } },
      },
    ],
  ]);
  assert.deepEqual(guard.drain(), [{ detector: 'block_word', path: 'answer.output[0].content[0].text', action: 'block' }]);
});

test('Responses: function-call arguments are a json channel; a call cut by a block gets no done events', () => {
  const fc = { id: 'fc_1', type: 'function_call', status: 'in_progress', call_id: 'c1', name: 'f', arguments: '' };
  const place = { item_id: 'fc_1', output_index: 0 };
  const events = (pieces: string[]) => {
    const whole = pieces.join('');
    let n = 1;
    return [
      ev('response.created', created),
      ev('response.output_item.added', { type: 'response.output_item.added', sequence_number: n++, output_index: 0, item: fc }),
      ...pieces.map((delta) => ev('response.function_call_arguments.delta', { type: 'response.function_call_arguments.delta', sequence_number: n++, ...place, delta })),
      ev('response.function_call_arguments.done', { type: 'response.function_call_arguments.done', sequence_number: n++, ...place, arguments: whole }),
      ev('response.output_item.done', { type: 'response.output_item.done', sequence_number: n++, output_index: 0, item: { ...fc, status: 'completed', arguments: whole } }),
      ev('response.completed', { type: 'response.completed', sequence_number: n++, response: { ...created.response, status: 'completed', output: [{ ...fc, status: 'completed', arguments: whole }] } }),
    ];
  };
  const masked = run('responses', events(['{"q":"SEC', 'RET"}']));
  const args = '{"q":"[SECRET_1]"}';
  type Said = { delta?: string; arguments?: string; item?: { arguments: string }; response?: { output: { arguments: string }[] } };
  const said = (d: Said) => d.delta ?? d.arguments ?? d.item?.arguments ?? d.response?.output[0]?.arguments;
  assert.deepEqual(masked.out.slice(2).map(([name, d]) => [name, said(d as Said)]), [
    ['response.function_call_arguments.delta', '{"q"'],
    ['response.function_call_arguments.delta', ':"[SECRET_1]'],
    ['response.function_call_arguments.delta', '"}'],
    ['response.function_call_arguments.done', args],
    ['response.output_item.done', args],
    ['response.completed', args],
  ]);
  assert.deepEqual(masked.guard.channels, ['answer.output[0].arguments:json']);

  const cut = run('responses', events(['{"q":"BLO', 'CK"}']));
  assert.deepEqual(cut.out.map(([name, d]) => [name, (d as { delta?: string }).delta]), [
    ['response.created', undefined],
    ['response.output_item.added', undefined],
    ['response.function_call_arguments.delta', '{"q"'],
    ['response.function_call_arguments.delta', ':"'],
    ['response.incomplete', undefined],
  ]);
  assert.deepEqual((cut.out[4]?.[1] as { response: unknown }).response, { ...created.response, status: 'incomplete', completed_at: null, output: [], incomplete_details: { reason: 'content_filter' } });
  assert.deepEqual(seqs(cut.out), [0, 1, 2, 3, 4]);
});

test('Responses: the upstream failure event repeats the guarded output', () => {
  const raw = new RawEventGuard('responses', new FakeAnswerGuard());
  const failed = ev('response.failed', { type: 'response.failed', sequence_number: 9, response: { id: 'resp_1', status: 'failed', output: [msgItem('incomplete', [textPart('so SECRET')])] } });
  assert.deepEqual(JSON.parse(raw.failure(failed).data), { type: 'response.failed', sequence_number: 0, response: { id: 'resp_1', status: 'failed', output: [msgItem('incomplete', [textPart('so [SECRET_1]')])] } });
});

test('Responses: a whole answer: texts and arguments masked; a block cuts the message, drops later items, status incomplete', () => {
  const raw = {
    id: 'resp_1',
    object: 'response',
    status: 'completed',
    completed_at: 2,
    incomplete_details: null,
    output: [msgItem('completed', [textPart('a SECRET'), { type: 'refusal', refusal: 'no SECRET' }]), { id: 'fc_1', type: 'function_call', status: 'completed', call_id: 'c', name: 'f', arguments: '{"q":"SECRET"}' }],
  };
  const guard = new FakeAnswerGuard();
  assert.deepEqual(guardRawAnswer(raw, guard), {
    ...raw,
    output: [msgItem('completed', [textPart('a [SECRET_1]'), { type: 'refusal', refusal: 'no [SECRET_1]' }]), { ...raw.output[1], arguments: '{"q":"[SECRET_1]"}' }],
  });
  assert.deepEqual(guard.drain().map((f) => f.path), ['answer.output[0].content[0].text', 'answer.output[0].content[1].refusal', 'answer.output[1].arguments']);
  const blocked = { ...raw, output: [msgItem('completed', [textPart('a BLOCK b'), textPart('later')]), raw.output[1]] };
  assert.deepEqual(guardRawAnswer(blocked, new FakeAnswerGuard()), {
    ...raw,
    status: 'incomplete',
    completed_at: null,
    incomplete_details: { reason: 'content_filter' },
    output: [msgItem('incomplete', [textPart('a ')])],
  });
});
