// The answer guard on the texts a passed-through stream says other than by
// its usual deltas: whole in done events or in a block's start, in custom
// tool input, reasoning summaries, MCP arguments and code interpreter code,
// and text still held when an upstream ends without its done events. The
// fake guard (./answer-guard-fake.ts: SECRET masked, BLOCK blocked, 5
// characters held) pins every event.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RawEvent } from '../../src/chat/messages-origin.ts';
import { RawEventGuard } from '../../src/gateway/answer-raw-guard.ts';
import { FakeAnswerGuard } from './answer-guard-fake.ts';
import { ev, messageDelta, start } from './guard-doors-fixtures.ts';

function run(door: 'messages' | 'responses', events: readonly RawEvent[], guard = new FakeAnswerGuard()): { out: [string, unknown][]; guard: FakeAnswerGuard } {
  const raw = new RawEventGuard(door, guard);
  const got: RawEvent[] = [];
  for (const event of events) raw.push(event, got);
  raw.end(got);
  return { out: got.map((e) => [e.event, JSON.parse(e.data) as unknown]), guard };
}

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
