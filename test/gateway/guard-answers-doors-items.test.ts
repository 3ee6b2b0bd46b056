// The answer guard on Responses texts outside the usual deltas: the items the
// client runs (shell commands, a computer's typed text, a patch's diff) and
// MCP approval requests, texts that come already in added events, the
// terminal event's output_text, and an upstream failure's error message. The
// fake guard (./answer-guard-fake.ts: SECRET masked, BLOCK blocked, 5
// characters held) pins every event.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RawEvent } from '../../src/chat/messages-origin.ts';
import { guardRawAnswer, RawEventGuard } from '../../src/gateway/answer-raw-guard.ts';
import { FakeAnswerGuard } from './answer-guard-fake.ts';
import { at, created, ev, msgItem, textPart } from './guard-doors-fixtures.ts';

function run(events: readonly [string, Record<string, unknown>][]): [string, unknown][] {
  const raw = new RawEventGuard('responses', new FakeAnswerGuard());
  const got: RawEvent[] = [];
  events.forEach(([name, data], n) => raw.push(ev(name, { type: name, sequence_number: n, ...data }), got));
  raw.end(got);
  return got.map((e) => [e.event, JSON.parse(e.data) as unknown]);
}

const incomplete = (output: unknown[]) => ({ ...created.response, status: 'incomplete', completed_at: null, output, incomplete_details: { reason: 'content_filter' } });

/** Items whose text the client runs or shows, each with the value `word` in it. */
function clientItems(word: string): [string, Record<string, unknown>][] {
  return [
    ['shell_call', { id: 'sh_1', type: 'shell_call', status: 'completed', call_id: 'c2', action: { commands: ['ls', `echo ${word}`] } }],
    ['local_shell_call', { id: 'ls_1', type: 'local_shell_call', status: 'completed', call_id: 'c3', action: { type: 'exec', command: ['echo', word], env: {} } }],
    ['computer_call', { id: 'cu_1', type: 'computer_call', status: 'completed', call_id: 'c4', action: { type: 'type', text: word }, pending_safety_checks: [] }],
    ['apply_patch_call', { id: 'ap_1', type: 'apply_patch_call', status: 'completed', call_id: 'c5', operation: { type: 'update_file', path: 'a.txt', diff: `+${word}` } }],
    ['mcp_approval_request', { id: 'mr_1', type: 'mcp_approval_request', server_label: 's', name: 'f', arguments: `{"q":"${word}"}` }],
  ];
}

const masked = clientItems('[SECRET_1]');
const before = { id: 'msg_0', type: 'message', status: 'completed', role: 'assistant', content: [textPart('ok')] };

clientItems('BLOCK').forEach(([name, item]) => {
  test(`Responses whole answer: a ${name} item with a blocked value is left out whole, the answer incomplete`, () => {
    const raw = { id: 'resp_1', object: 'response', status: 'completed', output: [before, item], output_text: 'ok' };
    assert.deepEqual(guardRawAnswer(raw, new FakeAnswerGuard()), { ...raw, status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output: [before], output_text: 'ok' });
  });

  test(`Responses stream: a ${name} item with a blocked value is left out whole (added and done), the answer incomplete`, () => {
    const out = run([
      ['response.created', { response: created.response }],
      ['response.output_item.added', { output_index: 0, item }],
      ['response.output_item.done', { output_index: 0, item }],
      ['response.completed', { response: { ...created.response, status: 'completed', output: [item] } }],
    ]);
    assert.deepEqual(out, [
      ['response.created', { type: 'response.created', sequence_number: 0, response: created.response }],
      ['response.incomplete', { type: 'response.incomplete', sequence_number: 1, response: incomplete([]) }],
    ]);
  });
});

// A shell call's commands are channels in a stream (their held rest goes out in shell_call_command deltas): pinned below.
clientItems('SECRET').forEach(([name, item], n) => {
  if (name === 'shell_call') return;
  const guarded = (masked[n] as [string, Record<string, unknown>])[1];
  test(`Responses whole answer and stream: a ${name} item's value is masked where it sits, in its added and done events`, () => {
    const raw = { id: 'resp_1', object: 'response', status: 'completed', output: [item] };
    assert.deepEqual(guardRawAnswer(raw, new FakeAnswerGuard()), { ...raw, output: [guarded] });
    const out = run([
      ['response.output_item.added', { output_index: 0, item }],
      ['response.output_item.done', { output_index: 0, item }],
    ]);
    assert.deepEqual(out, [
      ['response.output_item.added', { type: 'response.output_item.added', sequence_number: 0, output_index: 0, item: guarded }],
      ['response.output_item.done', { type: 'response.output_item.done', sequence_number: 1, output_index: 0, item: guarded }],
    ]);
  });
});

test('Responses stream: a function_call whose arguments come whole in output_item.added is left out whole when blocked', () => {
  const fc = { id: 'fc_1', type: 'function_call', status: 'completed', call_id: 'c1', name: 'f', arguments: '{"q":"BLOCK"}' };
  const out = run([
    ['response.created', { response: created.response }],
    ['response.output_item.added', { output_index: 0, item: fc }],
    ['response.output_item.done', { output_index: 0, item: fc }],
    ['response.completed', { response: { ...created.response, status: 'completed', output: [fc] } }],
  ]);
  assert.deepEqual(out, [
    ['response.created', { type: 'response.created', sequence_number: 0, response: created.response }],
    ['response.incomplete', { type: 'response.incomplete', sequence_number: 1, response: incomplete([]) }],
  ]);
});

test('Responses stream: arguments begun in output_item.added go on in deltas: masked as one text, the added part first', () => {
  const fc = (args: string) => ({ id: 'fc_1', type: 'function_call', status: 'in_progress', call_id: 'c1', name: 'f', arguments: args });
  const place = { item_id: 'fc_1', output_index: 0 };
  const out = run([
    ['response.output_item.added', { output_index: 0, item: fc('{"q":"a SEC') }],
    ['response.function_call_arguments.delta', { ...place, delta: 'RET b"}' }],
    ['response.function_call_arguments.done', { ...place, arguments: '{"q":"a SECRET b"}' }],
    ['response.output_item.done', { output_index: 0, item: fc('{"q":"a SECRET b"}') }],
  ]);
  const said = out.filter(([name]) => name !== 'response.function_call_arguments.done' && name !== 'response.output_item.done');
  const text = said.map(([, data]) => {
    const d = data as Record<string, unknown>;
    return typeof d['delta'] === 'string' ? d['delta'] : ((d['item'] as Record<string, unknown>)['arguments'] as string);
  }).join('');
  assert.equal(text, '{"q":"a [SECRET_1] b"}');
  assert.deepEqual(out.slice(-2), [
    ['response.function_call_arguments.done', { type: 'response.function_call_arguments.done', sequence_number: out.length - 2, ...place, arguments: '{"q":"a [SECRET_1] b"}' }],
    ['response.output_item.done', { type: 'response.output_item.done', sequence_number: out.length - 1, output_index: 0, item: fc('{"q":"a [SECRET_1] b"}') }],
  ]);
});

const cutItem = msgItem('incomplete', [textPart('say ')]);
const cutTail = (from: number): [string, unknown][] => [
  ['response.output_text.done', { type: 'response.output_text.done', sequence_number: from, ...at, text: 'say ', logprobs: [] }],
  ['response.content_part.done', { type: 'response.content_part.done', sequence_number: from + 1, ...at, part: textPart('say ') }],
  ['response.output_item.done', { type: 'response.output_item.done', sequence_number: from + 2, output_index: 0, item: cutItem }],
  ['response.incomplete', { type: 'response.incomplete', sequence_number: from + 3, response: incomplete([cutItem]) }],
];

test('Responses stream: a part whose text comes whole in content_part.added is cut there when blocked: the message done, incomplete', () => {
  const out = run([
    ['response.created', { response: created.response }],
    ['response.output_item.added', { output_index: 0, item: msgItem('in_progress', []) }],
    ['response.content_part.added', { ...at, part: textPart('say BLOCK now') }],
    ['response.output_text.done', { ...at, text: 'say BLOCK now', logprobs: [] }],
  ]);
  assert.deepEqual(out, [
    ['response.created', { type: 'response.created', sequence_number: 0, response: created.response }],
    ['response.output_item.added', { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: msgItem('in_progress', []) }],
    ['response.content_part.added', { type: 'response.content_part.added', sequence_number: 2, ...at, part: textPart('say ') }],
    ...cutTail(3),
  ]);
});

test('Responses stream: a message whose text comes whole in output_item.added is cut there when blocked: the message done, incomplete', () => {
  const out = run([
    ['response.created', { response: created.response }],
    ['response.output_item.added', { output_index: 0, item: msgItem('completed', [textPart('say BLOCK now')]) }],
  ]);
  assert.deepEqual(out, [
    ['response.created', { type: 'response.created', sequence_number: 0, response: created.response }],
    ['response.output_item.added', { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: msgItem('completed', [textPart('say ')]) }],
    ...cutTail(2),
  ]);
});

test('Responses stream: text begun in content_part.added goes on in deltas: masked as one text, the same in the done events', () => {
  const out = run([
    ['response.output_item.added', { output_index: 0, item: msgItem('in_progress', []) }],
    ['response.content_part.added', { ...at, part: textPart('a SEC') }],
    ['response.output_text.delta', { ...at, delta: 'RET here', logprobs: [] }],
    ['response.output_text.done', { ...at, text: 'a SECRET here', logprobs: [] }],
    ['response.content_part.done', { ...at, part: textPart('a SECRET here') }],
  ]);
  assert.deepEqual(out, [
    ['response.output_item.added', { type: 'response.output_item.added', sequence_number: 0, output_index: 0, item: msgItem('in_progress', []) }],
    ['response.content_part.added', { type: 'response.content_part.added', sequence_number: 1, ...at, part: textPart('') }],
    ['response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 2, ...at, delta: 'a [SECRET_1]', logprobs: [] }],
    ['response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 3, ...at, delta: ' here', logprobs: [] }],
    ['response.output_text.done', { type: 'response.output_text.done', sequence_number: 4, ...at, text: 'a [SECRET_1] here', logprobs: [] }],
    ['response.content_part.done', { type: 'response.content_part.done', sequence_number: 5, ...at, part: textPart('a [SECRET_1] here') }],
  ]);
});

test('Responses stream: a summary part whose text comes in reasoning_summary_part.added is masked there; a blocked one cuts the answer', () => {
  const rs = { id: 'rs_1', type: 'reasoning', summary: [] };
  const place = { item_id: 'rs_1', output_index: 0, summary_index: 0 };
  const summary = (text: string) => ({ type: 'summary_text', text });
  const out = run([
    ['response.output_item.added', { output_index: 0, item: rs }],
    ['response.reasoning_summary_part.added', { ...place, part: summary('a SECRET b') }],
    ['response.reasoning_summary_part.done', { ...place, part: summary('a SECRET b') }],
    ['response.reasoning_summary_part.added', { ...place, summary_index: 1, part: summary('no BLOCK') }],
    ['response.reasoning_summary_part.done', { ...place, summary_index: 1, part: summary('no BLOCK') }],
  ]);
  assert.deepEqual(out, [
    ['response.output_item.added', { type: 'response.output_item.added', sequence_number: 0, output_index: 0, item: rs }],
    ['response.reasoning_summary_part.added', { type: 'response.reasoning_summary_part.added', sequence_number: 1, ...place, part: summary('a [SECRET_1]') }],
    ['response.reasoning_summary_text.delta', { type: 'response.reasoning_summary_text.delta', sequence_number: 2, ...place, delta: ' b' }],
    ['response.reasoning_summary_part.done', { type: 'response.reasoning_summary_part.done', sequence_number: 3, ...place, part: summary('a [SECRET_1] b') }],
    ['response.reasoning_summary_part.added', { type: 'response.reasoning_summary_part.added', sequence_number: 4, ...place, summary_index: 1, part: summary('no ') }],
    ['response.incomplete', { type: 'response.incomplete', sequence_number: 5, response: { status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output: [] } }],
  ]);
});

test('Responses stream: the terminal event\'s output_text says the output as guarded', () => {
  const text = 'a SECRET here';
  const out = run([
    ['response.created', { response: created.response }],
    ['response.output_item.added', { output_index: 0, item: msgItem('in_progress', []) }],
    ['response.content_part.added', { ...at, part: textPart('') }],
    ['response.output_text.delta', { ...at, delta: text, logprobs: [] }],
    ['response.output_text.done', { ...at, text, logprobs: [] }],
    ['response.content_part.done', { ...at, part: textPart(text) }],
    ['response.output_item.done', { output_index: 0, item: msgItem('completed', [textPart(text)]) }],
    ['response.completed', { response: { ...created.response, status: 'completed', output: [msgItem('completed', [textPart(text)])], output_text: text } }],
  ]);
  const guarded = msgItem('completed', [textPart('a [SECRET_1] here')]);
  assert.deepEqual(out.at(-1), ['response.completed', { type: 'response.completed', sequence_number: 8, response: { ...created.response, status: 'completed', output: [guarded], output_text: 'a [SECRET_1] here' } }]);
});

test('Responses stream: an output_text the upstream says unlike its output is remade from the output', () => {
  const item = msgItem('completed', [textPart('fine')]);
  const out = run([['response.completed', { response: { ...created.response, status: 'completed', output: [item], output_text: 'a SECRET' } }]]);
  assert.deepEqual(out, [['response.completed', { type: 'response.completed', sequence_number: 0, response: { ...created.response, status: 'completed', output: [item], output_text: 'fine' } }]]);
});

test('Responses stream: an upstream failure\'s error message is guarded as text (masked, cut at a block finding)', () => {
  const raw = new RawEventGuard('responses', new FakeAnswerGuard());
  const failed = ev('response.failed', { type: 'response.failed', sequence_number: 0, response: { id: 'resp_1', status: 'failed', output: [], error: { code: 'server_error', message: 'it said SECRET then BLOCK and more' } } });
  assert.deepEqual(JSON.parse(raw.failure(failed).data), { type: 'response.failed', sequence_number: 0, response: { id: 'resp_1', status: 'failed', output: [], error: { code: 'server_error', message: 'it said [SECRET_1] then ' } } });
  const bare = ev('response.failed', { type: 'response.failed', sequence_number: 0, response: { id: 'resp_1', status: 'failed', error: { code: 'server_error', message: 'SECRET' } } });
  assert.deepEqual(JSON.parse(raw.failure(bare).data), { type: 'response.failed', sequence_number: 1, response: { id: 'resp_1', status: 'failed', error: { code: 'server_error', message: '[SECRET_1]' } } });
});

const patch = (diff: string, status = 'in_progress') => ({ id: 'ap_1', type: 'apply_patch_call', status, call_id: 'c5', operation: { type: 'update_file', path: 'a.txt', diff } });
const diffAt = { item_id: 'ap_1', output_index: 0 };

test('Responses stream: a patch diff said in deltas is one channel: masked across deltas, the same in its done events', () => {
  const out = run([
    ['response.output_item.added', { output_index: 0, item: patch('') }],
    ['response.apply_patch_call_operation_diff.delta', { ...diffAt, delta: '+a SEC' }],
    ['response.apply_patch_call_operation_diff.delta', { ...diffAt, delta: 'RET b' }],
    ['response.apply_patch_call_operation_diff.done', { ...diffAt, diff: '+a SECRET b' }],
    ['response.output_item.done', { output_index: 0, item: patch('+a SECRET b', 'completed') }],
  ]);
  const delta = (sequence_number: number, text: string) => ['response.apply_patch_call_operation_diff.delta', { type: 'response.apply_patch_call_operation_diff.delta', sequence_number, ...diffAt, delta: text }];
  assert.deepEqual(out, [
    ['response.output_item.added', { type: 'response.output_item.added', sequence_number: 0, output_index: 0, item: patch('') }],
    delta(1, '+'),
    delta(2, 'a [SECRET_1]'),
    delta(3, ' b'),
    ['response.apply_patch_call_operation_diff.done', { type: 'response.apply_patch_call_operation_diff.done', sequence_number: 4, ...diffAt, diff: '+a [SECRET_1] b' }],
    ['response.output_item.done', { type: 'response.output_item.done', sequence_number: 5, output_index: 0, item: patch('+a [SECRET_1] b', 'completed') }],
  ]);
});

test('Responses stream: a patch diff blocked in its deltas: what came before the finding goes out, the call is left out (no done events)', () => {
  const out = run([
    ['response.created', { response: created.response }],
    ['response.output_item.added', { output_index: 0, item: patch('') }],
    ['response.apply_patch_call_operation_diff.delta', { ...diffAt, delta: '+a long line then BLO' }],
    ['response.apply_patch_call_operation_diff.delta', { ...diffAt, delta: 'CK' }],
    ['response.apply_patch_call_operation_diff.done', { ...diffAt, diff: '+a long line then BLOCK' }],
    ['response.output_item.done', { output_index: 0, item: patch('+a long line then BLOCK', 'completed') }],
  ]);
  const delta = (sequence_number: number, text: string) => ['response.apply_patch_call_operation_diff.delta', { type: 'response.apply_patch_call_operation_diff.delta', sequence_number, ...diffAt, delta: text }];
  assert.deepEqual(out, [
    ['response.created', { type: 'response.created', sequence_number: 0, response: created.response }],
    ['response.output_item.added', { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: patch('') }],
    delta(2, '+a long line the'),
    delta(3, 'n '),
    ['response.incomplete', { type: 'response.incomplete', sequence_number: 4, response: incomplete([]) }],
  ]);
});

const shell = (commands: string[], status = 'in_progress') => ({ id: 'sh_1', type: 'shell_call', status, call_id: 'c2', action: { commands } });
const cmdAt = (k: number) => ({ output_index: 0, command_index: k });

test('Responses stream: each shell command said in shell_call_command events is a channel (begun in .added, masked across deltas, the same in done events)', () => {
  const out = run([
    ['response.output_item.added', { output_index: 0, item: shell([]) }],
    ['response.shell_call_command.added', { ...cmdAt(0), command: 'echo SEC' }],
    ['response.shell_call_command.delta', { ...cmdAt(0), delta: 'RET ok' }],
    ['response.shell_call_command.done', { ...cmdAt(0), command: 'echo SECRET ok' }],
    ['response.output_item.done', { output_index: 0, item: shell(['echo SECRET ok'], 'completed') }],
  ]);
  assert.deepEqual(out, [
    ['response.output_item.added', { type: 'response.output_item.added', sequence_number: 0, output_index: 0, item: shell([]) }],
    ['response.shell_call_command.added', { type: 'response.shell_call_command.added', sequence_number: 1, ...cmdAt(0), command: 'ech' }],
    ['response.shell_call_command.delta', { type: 'response.shell_call_command.delta', sequence_number: 2, ...cmdAt(0), delta: 'o [SECRET_1]' }],
    ['response.shell_call_command.delta', { type: 'response.shell_call_command.delta', sequence_number: 3, ...cmdAt(0), delta: ' ok' }],
    ['response.shell_call_command.done', { type: 'response.shell_call_command.done', sequence_number: 4, ...cmdAt(0), command: 'echo [SECRET_1] ok' }],
    ['response.output_item.done', { type: 'response.output_item.done', sequence_number: 5, output_index: 0, item: shell(['echo [SECRET_1] ok'], 'completed') }],
  ]);
});

test('Responses stream: a shell command blocked in its .added event: the command not sent, the call left out (no done events)', () => {
  const out = run([
    ['response.created', { response: created.response }],
    ['response.output_item.added', { output_index: 0, item: shell([]) }],
    ['response.shell_call_command.added', { ...cmdAt(0), command: 'ls' }],
    ['response.shell_call_command.done', { ...cmdAt(0), command: 'ls' }],
    ['response.shell_call_command.added', { ...cmdAt(1), command: 'echo BLOCK' }],
    ['response.shell_call_command.done', { ...cmdAt(1), command: 'echo BLOCK' }],
    ['response.output_item.done', { output_index: 0, item: shell(['ls', 'echo BLOCK'], 'completed') }],
  ]);
  assert.deepEqual(out, [
    ['response.created', { type: 'response.created', sequence_number: 0, response: created.response }],
    ['response.output_item.added', { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: shell([]) }],
    ['response.shell_call_command.added', { type: 'response.shell_call_command.added', sequence_number: 2, ...cmdAt(0), command: '' }],
    ['response.shell_call_command.delta', { type: 'response.shell_call_command.delta', sequence_number: 3, ...cmdAt(0), delta: 'ls' }],
    ['response.shell_call_command.done', { type: 'response.shell_call_command.done', sequence_number: 4, ...cmdAt(0), command: 'ls' }],
    ['response.incomplete', { type: 'response.incomplete', sequence_number: 5, response: incomplete([]) }],
  ]);
});

test('Responses stream: a shell call that comes whole in its added event: each command begun there, its held rest in a command delta, the done item masked', () => {
  const out = run([
    ['response.output_item.added', { output_index: 0, item: shell(['ls', 'echo SECRET']) }],
    ['response.output_item.done', { output_index: 0, item: shell(['ls', 'echo SECRET'], 'completed') }],
  ]);
  assert.deepEqual(out, [
    ['response.output_item.added', { type: 'response.output_item.added', sequence_number: 0, output_index: 0, item: shell(['', 'echo [SECRET_1]']) }],
    ['response.shell_call_command.delta', { type: 'response.shell_call_command.delta', sequence_number: 1, ...cmdAt(0), delta: 'ls' }],
    ['response.output_item.done', { type: 'response.output_item.done', sequence_number: 2, output_index: 0, item: shell(['ls', 'echo [SECRET_1]'], 'completed') }],
  ]);
});

test('Responses whole answer: an output_text the upstream says unlike its output is remade from the output', () => {
  const item = msgItem('completed', [textPart('fine')]);
  const raw = { id: 'resp_1', object: 'response', status: 'completed', output: [item], output_text: 'a SECRET' };
  assert.deepEqual(guardRawAnswer(raw, new FakeAnswerGuard()), { ...raw, output_text: 'fine' });
  const same = { ...raw, output_text: 'fine' };
  assert.equal(guardRawAnswer(same, new FakeAnswerGuard()), same);
});
