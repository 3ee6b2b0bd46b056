// The answer guard on the texts a passed-through stream says other than by
// its usual deltas: whole in done events or in a block's start, in custom
// tool input, reasoning summaries, MCP arguments and code interpreter code,
// and text still held when an upstream ends without its done events. The
// fake guard (./answer-guard-fake.ts: SECRET masked, BLOCK blocked, 5
// characters held) pins every event.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RawEvent } from '../../src/chat/messages-origin.ts';
import { guardRawAnswer, RawEventGuard } from '../../src/gateway/answer-raw-guard.ts';
import { FakeAnswerGuard } from './answer-guard-fake.ts';
import { at, created, ev, messageDelta, msgItem, start, textPart } from './guard-doors-fixtures.ts';

function run(door: 'messages' | 'responses', events: readonly RawEvent[], guard = new FakeAnswerGuard()): { out: [string, unknown][]; guard: FakeAnswerGuard } {
  const raw = new RawEventGuard(door, guard);
  const got: RawEvent[] = [];
  for (const event of events) raw.push(event, got);
  raw.end(got);
  return { out: got.map((e) => [e.event, JSON.parse(e.data) as unknown]), guard };
}

/** `events` numbered in order (sequence_number 0, 1, ...). */
function numbered(events: readonly [string, Record<string, unknown>][]): RawEvent[] {
  return events.map(([name, data], n) => ev(name, { type: name, sequence_number: n, ...data }));
}

const incomplete = (output: unknown[]) => ({ ...created.response, status: 'incomplete', completed_at: null, output, incomplete_details: { reason: 'content_filter' } });

test('Responses stream: a text said only in its done events is masked there; a call said only in its done events is blocked: left out, the answer incomplete', () => {
  const fc = { id: 'fc_1', type: 'function_call', status: 'in_progress', call_id: 'c1', name: 'f', arguments: '' };
  const args = '{"q":"BLOCK"}';
  const text = 'a SECRET here';
  const { out, guard } = run('responses', numbered([
    ['response.created', { response: created.response }],
    ['response.output_item.added', { output_index: 0, item: msgItem('in_progress', []) }],
    ['response.content_part.added', { ...at, part: textPart('') }],
    ['response.output_text.done', { ...at, text, logprobs: [] }],
    ['response.content_part.done', { ...at, part: textPart(text) }],
    ['response.output_item.done', { output_index: 0, item: msgItem('completed', [textPart(text)]) }],
    ['response.output_item.added', { output_index: 1, item: fc }],
    ['response.function_call_arguments.done', { item_id: 'fc_1', output_index: 1, arguments: args }],
    ['response.output_item.done', { output_index: 1, item: { ...fc, status: 'completed', arguments: args } }],
    ['response.completed', { response: { ...created.response, status: 'completed', output: [msgItem('completed', [textPart(text)]), { ...fc, status: 'completed', arguments: args }] } }],
  ]));
  const masked = 'a [SECRET_1] here';
  const item = msgItem('completed', [textPart(masked)]);
  assert.deepEqual(out, [
    ['response.created', { type: 'response.created', sequence_number: 0, response: created.response }],
    ['response.output_item.added', { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: msgItem('in_progress', []) }],
    ['response.content_part.added', { type: 'response.content_part.added', sequence_number: 2, ...at, part: textPart('') }],
    ['response.output_text.done', { type: 'response.output_text.done', sequence_number: 3, ...at, text: masked, logprobs: [] }],
    ['response.content_part.done', { type: 'response.content_part.done', sequence_number: 4, ...at, part: textPart(masked) }],
    ['response.output_item.done', { type: 'response.output_item.done', sequence_number: 5, output_index: 0, item }],
    ['response.output_item.added', { type: 'response.output_item.added', sequence_number: 6, output_index: 1, item: fc }],
    ['response.incomplete', { type: 'response.incomplete', sequence_number: 7, response: incomplete([item]) }],
  ]);
  assert.deepEqual(guard.drain(), [
    { detector: 'secret_word', path: 'answer.output[0].content[0].text', action: 'mask' },
    { detector: 'block_word', path: 'answer.output[1].arguments', action: 'block' },
  ]);
});

test('Responses stream: a message said only in output_item.done is guarded there; a block cuts it (incomplete) and ends the answer', () => {
  const text = 'fine BLOCK after';
  const { out } = run('responses', numbered([
    ['response.created', { response: created.response }],
    ['response.output_item.done', { output_index: 0, item: msgItem('completed', [textPart(text)]) }],
    ['response.completed', { response: { ...created.response, status: 'completed', output: [msgItem('completed', [textPart(text)])] } }],
  ]));
  const cut = msgItem('incomplete', [textPart('fine ')]);
  assert.deepEqual(out.slice(1), [
    ['response.output_item.done', { type: 'response.output_item.done', sequence_number: 1, output_index: 0, item: cut }],
    ['response.incomplete', { type: 'response.incomplete', sequence_number: 2, response: incomplete([cut]) }],
  ]);
});

test('Responses stream: a text said only in the terminal event is guarded there; a block ends the answer incomplete with the output cut', () => {
  const fc = { id: 'fc_1', type: 'function_call', status: 'completed', call_id: 'c1', name: 'f', arguments: '{"q":"SECRET"}' };
  const { out } = run('responses', numbered([
    ['response.created', { response: created.response }],
    ['response.completed', { response: { ...created.response, status: 'completed', output: [fc, msgItem('completed', [textPart('x BLOCK')])] } }],
  ]));
  assert.deepEqual(out.slice(1), [
    ['response.incomplete', { type: 'response.incomplete', sequence_number: 1, response: incomplete([{ ...fc, arguments: '{"q":"[SECRET_1]"}' }, msgItem('incomplete', [textPart('x ')])]) }],
  ]);
});

test('Responses stream: deltas and a done event that says more than they did: the done events say what the deltas gave', () => {
  const { out } = run('responses', numbered([
    ['response.created', { response: created.response }],
    ['response.output_text.delta', { ...at, delta: 'hello', logprobs: [] }],
    ['response.output_text.done', { ...at, text: 'hello SECRET', logprobs: [] }],
    ['response.content_part.done', { ...at, part: textPart('hello SECRET') }],
  ]));
  assert.deepEqual(out.slice(1).map(([name, d]) => [name, (d as { delta?: string; text?: string; part?: { text: string } }).delta ?? (d as { text?: string }).text ?? (d as { part: { text: string } }).part.text]), [
    ['response.output_text.delta', 'hello'],
    ['response.output_text.done', 'hello'],
    ['response.content_part.done', 'hello'],
  ]);
});

test('Responses stream: an upstream that ends without done events releases its held text, scanned; one that goes to its terminal event releases it before', () => {
  const deltas: [string, Record<string, unknown>][] = [
    ['response.created', { response: created.response }],
    ['response.output_text.delta', { ...at, delta: 'one SEC', logprobs: [] }],
    ['response.output_text.delta', { ...at, delta: 'RET two', logprobs: [] }],
  ];
  const said = (out: [string, unknown][]) => out.slice(1).map(([name, d]) => [name, (d as { delta?: string }).delta ?? (d as { response: { status: string } }).response.status]);
  assert.deepEqual(said(run('responses', numbered(deltas)).out), [
    ['response.output_text.delta', 'on'],
    ['response.output_text.delta', 'e [SECRET_1]'],
    ['response.output_text.delta', ' two'],
  ]);
  const whole = 'one SECRET two';
  const ended = run('responses', numbered([...deltas, ['response.completed', { response: { ...created.response, status: 'completed', output: [msgItem('completed', [textPart(whole)])] } }]])).out;
  assert.deepEqual(said(ended), [
    ['response.output_text.delta', 'on'],
    ['response.output_text.delta', 'e [SECRET_1]'],
    ['response.output_text.delta', ' two'],
    ['response.completed', 'completed'],
  ]);
  assert.deepEqual((ended.at(-1)?.[1] as { response: { output: unknown } }).response.output, [msgItem('completed', [textPart('one [SECRET_1] two')])]);
  const cut = run('responses', numbered([deltas[0] as [string, Record<string, unknown>], ['response.output_text.delta', { ...at, delta: 'one BLOCK', logprobs: [] }]])).out;
  assert.deepEqual(cut.slice(1).map(([name]) => name), ['response.output_text.delta', 'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.incomplete']);
  assert.equal((cut[1]?.[1] as { delta: string }).delta, 'one ');
});

test('Responses stream: custom tool input is a text channel; a block leaves the call out and ends the answer incomplete', () => {
  const ctc = { id: 'ctc_1', type: 'custom_tool_call', call_id: 'c1', name: 'shell', input: '' };
  const place = { item_id: 'ctc_1', output_index: 0 };
  const events = (input: string) => numbered([
    ['response.created', { response: created.response }],
    ['response.output_item.added', { output_index: 0, item: ctc }],
    ['response.custom_tool_call_input.delta', { ...place, delta: input }],
    ['response.custom_tool_call_input.done', { ...place, input }],
    ['response.output_item.done', { output_index: 0, item: { ...ctc, input } }],
    ['response.completed', { response: { ...created.response, status: 'completed', output: [{ ...ctc, input }] } }],
  ]);
  const masked = run('responses', events('echo SECRET now'));
  type Said = { delta?: string; input?: string; item?: { input: string }; response?: { output: { input: string }[] } };
  const said = (d: Said) => d.delta ?? d.input ?? d.item?.input ?? d.response?.output[0]?.input;
  assert.deepEqual(masked.out.slice(2).map(([name, d]) => [name, said(d as Said)]), [
    ['response.custom_tool_call_input.delta', 'echo [SECRET_1]'],
    ['response.custom_tool_call_input.delta', ' now'],
    ['response.custom_tool_call_input.done', 'echo [SECRET_1] now'],
    ['response.output_item.done', 'echo [SECRET_1] now'],
    ['response.completed', 'echo [SECRET_1] now'],
  ]);
  assert.deepEqual(masked.guard.channels, ['answer.output[0].input:text']);
  const cut = run('responses', events('echo BLOCK now'));
  assert.deepEqual(cut.out.map(([name, d]) => [name, (d as { delta?: string }).delta]), [
    ['response.created', undefined],
    ['response.output_item.added', undefined],
    ['response.custom_tool_call_input.delta', 'echo '],
    ['response.incomplete', undefined],
  ]);
  assert.deepEqual((cut.out[3]?.[1] as { response: unknown }).response, incomplete([]));
});

test('Responses stream: a reasoning summary is a text channel (not signed), its encrypted_content as it came', () => {
  const reasoning = { id: 'rs_1', type: 'reasoning', summary: [], encrypted_content: 'opaque SECRET' };
  const place = { item_id: 'rs_1', output_index: 0, summary_index: 0 };
  const text = 'thought SECRET through';
  const done = { ...reasoning, summary: [{ type: 'summary_text', text }] };
  const { out, guard } = run('responses', numbered([
    ['response.created', { response: created.response }],
    ['response.output_item.added', { output_index: 0, item: reasoning }],
    ['response.reasoning_summary_part.added', { ...place, part: { type: 'summary_text', text: '' } }],
    ['response.reasoning_summary_text.delta', { ...place, delta: text }],
    ['response.reasoning_summary_text.done', { ...place, text }],
    ['response.reasoning_summary_part.done', { ...place, part: { type: 'summary_text', text } }],
    ['response.output_item.done', { output_index: 0, item: done }],
  ]));
  const masked = 'thought [SECRET_1] through';
  assert.deepEqual(out.slice(3), [
    ['response.reasoning_summary_text.delta', { type: 'response.reasoning_summary_text.delta', sequence_number: 3, ...place, delta: 'thought [SECRET_1] th' }],
    ['response.reasoning_summary_text.delta', { type: 'response.reasoning_summary_text.delta', sequence_number: 4, ...place, delta: 'rough' }],
    ['response.reasoning_summary_text.done', { type: 'response.reasoning_summary_text.done', sequence_number: 5, ...place, text: masked }],
    ['response.reasoning_summary_part.done', { type: 'response.reasoning_summary_part.done', sequence_number: 6, ...place, part: { type: 'summary_text', text: masked } }],
    ['response.output_item.done', { type: 'response.output_item.done', sequence_number: 7, output_index: 0, item: { ...reasoning, summary: [{ type: 'summary_text', text: masked }] } }],
  ]);
  assert.deepEqual(guard.channels, ['answer.output[0].summary[0].text:text']);
});

test('Responses whole answer: custom tool input, MCP arguments, code interpreter code and reasoning summaries are guarded; a blocked call is left out', () => {
  const output = [
    { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'a SECRET' }], encrypted_content: 'SECRET' },
    { id: 'ctc_1', type: 'custom_tool_call', call_id: 'c1', name: 'shell', input: 'echo SECRET' },
    { id: 'mcp_1', type: 'mcp_call', server_label: 's', name: 'f', arguments: '{"q":"SECRET"}', output: 'SECRET' },
    { id: 'ci_1', type: 'code_interpreter_call', status: 'completed', container_id: 'k', code: 'print("SECRET")', outputs: null },
  ];
  const raw = { id: 'resp_1', object: 'response', status: 'completed', output };
  const guard = new FakeAnswerGuard();
  assert.deepEqual(guardRawAnswer(raw, guard), {
    ...raw,
    output: [
      { ...output[0], summary: [{ type: 'summary_text', text: 'a [SECRET_1]' }] },
      { ...output[1], input: 'echo [SECRET_1]' },
      { ...output[2], arguments: '{"q":"[SECRET_1]"}' },
      { ...output[3], code: 'print("[SECRET_1]")' },
    ],
  });
  assert.deepEqual(guard.drain().map((f) => f.path), ['answer.output[0].summary[0].text', 'answer.output[1].input', 'answer.output[2].arguments', 'answer.output[3].code']);
  const cut = guardRawAnswer({ ...raw, output: [output[2], { ...output[1], input: 'rm BLOCK' }, output[3]] }, new FakeAnswerGuard());
  assert.deepEqual(cut, { ...raw, status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output: [{ ...output[2], arguments: '{"q":"[SECRET_1]"}' }] });
});

test('Messages stream: a tool call whose input comes whole in its start is guarded there: masked in the start; blocked: the call left out, stop_reason refusal', () => {
  const events = (input: Record<string, unknown>) => [
    ev('message_start', start),
    ev('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input } }),
    ev('content_block_stop', { type: 'content_block_stop', index: 0 }),
    ev('message_delta', messageDelta('tool_use')),
    ev('message_stop', { type: 'message_stop' }),
  ];
  const masked = run('messages', events({ q: 'SECRET' }));
  assert.deepEqual(masked.out.map(([name]) => name), ['message_start', 'content_block_start', 'content_block_stop', 'message_delta', 'message_stop']);
  assert.deepEqual(masked.out[1]?.[1], { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: { q: '[SECRET_1]' } } });
  assert.deepEqual(masked.guard.drain(), [{ detector: 'secret_word', path: 'answer.content[0].input', action: 'mask' }]);
  const cut = run('messages', events({ q: 'BLOCK' }));
  assert.deepEqual(cut.out, [
    ['message_start', start],
    ['message_delta', { ...messageDelta('refusal'), delta: { stop_reason: 'refusal', stop_sequence: null } }],
    ['message_stop', { type: 'message_stop' }],
  ]);
});

test('Responses stream: MCP arguments (json) and code interpreter code (text, under either event name) are channels; a block leaves the item out', () => {
  const cases = [
    { item: { id: 'it_1', type: 'mcp_call', server_label: 's', name: 'f', arguments: '' }, name: 'response.mcp_call_arguments', field: 'arguments', text: '{"q":"SECRET","r":"BLOCK"}', given: '{"q":"[SECRET_1]","r":"', channel: 'answer.output[0].arguments:json' },
    { item: { id: 'it_1', type: 'code_interpreter_call', status: 'in_progress', container_id: 'k', code: '', outputs: null }, name: 'response.code_interpreter_call_code', field: 'code', text: 'x = "SECRET" + "BLOCK"', given: 'x = "[SECRET_1]" + "', channel: 'answer.output[0].code:text' },
    { item: { id: 'it_1', type: 'code_interpreter_call', status: 'in_progress', container_id: 'k', code: '', outputs: null }, name: 'response.code_interpreter_call.code', field: 'code', text: 'x = "SECRET" + "BLOCK"', given: 'x = "[SECRET_1]" + "', channel: 'answer.output[0].code:text' },
  ];
  const seen = cases.map(({ item, name, field, text }) => {
    const place = { item_id: 'it_1', output_index: 0 };
    const { out, guard } = run('responses', numbered([
      ['response.created', { response: created.response }],
      ['response.output_item.added', { output_index: 0, item }],
      [`${name}.delta`, { ...place, delta: text }],
      [`${name}.done`, { ...place, [field]: text }],
      ['response.output_item.done', { output_index: 0, item: { ...item, [field]: text } }],
    ]));
    return { events: out.map(([e, d]) => [e, (d as { delta?: string }).delta]), channels: guard.channels };
  });
  assert.deepEqual(seen, cases.map(({ name, given, channel }) => ({
    events: [['response.created', undefined], ['response.output_item.added', undefined], [`${name}.delta`, given], ['response.incomplete', undefined]],
    channels: [channel],
  })));
});
