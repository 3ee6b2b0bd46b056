// The chat path under the answer guard, with the real guard: a stream's
// channels stay open however the upstream interleaves them, and go out in the
// upstream's order.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatCompletionChunk } from '../../src/chat/types.ts';
import { ChunkGuard } from '../../src/gateway/answer-chunk-guard.ts';
import type { AnswerGuard } from '../../src/guard/answer-guard.ts';
import { guardFor } from '../guard/answer-rig.ts';

const AWS_KEY = 'AKIAIOSFODNN7EXAMPLE';
const CARD = '4111111111111111';

type Choice = ChatCompletionChunk['choices'][number];
type Delta = Choice['delta'];

function chunk(delta: Delta, finish: Choice['finish_reason'] = null): ChatCompletionChunk {
  return { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] };
}

/** Choice 0's deltas and finishes out, for chunks in. */
function run(guard: AnswerGuard, chunks: ChatCompletionChunk[]): Array<[Delta, Choice['finish_reason']]> {
  const chunkGuard = new ChunkGuard(guard);
  const out: ChatCompletionChunk[] = [];
  for (const c of chunks) chunkGuard.push(c, out);
  chunkGuard.end(out);
  return out.map((c) => [(c.choices[0] as Choice).delta, (c.choices[0] as Choice).finish_reason]);
}

/** Each tool call's arguments as a client joins them, by index. */
function joinedArguments(deltas: Array<[Delta, Choice['finish_reason']]>): Record<number, string> {
  const joined: Record<number, string> = {};
  for (const [delta] of deltas) for (const call of delta.tool_calls ?? []) joined[call.index] = (joined[call.index] ?? '') + (call.function?.arguments ?? '');
  return joined;
}

describe('a stream whose channels interleave', () => {
  test('tool calls whose argument deltas interleave: a key split across the switch is still masked', () => {
    const out = run(guardFor({ aws_access_key: 'mask' }), [
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: `{"k":"${AWS_KEY.slice(0, 9)}` } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_1', type: 'function', function: { name: 'g', arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: `${AWS_KEY.slice(9)}"}` } }] }),
      chunk({}, 'tool_calls'),
    ]);
    assert.deepEqual(joinedArguments(out), { 0: '{"k":"[AWS_ACCESS_KEY_1]"}', 1: '{}' });
    // Call 0 whole, then call 1 with its id and name first, in the finish chunk.
    assert.deepEqual(out, [
      [{ role: 'assistant' }, null],
      [
        {
          tool_calls: [
            { index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: '{"k":"[AWS_ACCESS_KEY_1]"}' } },
            { index: 1, id: 'call_1', type: 'function', function: { name: 'g', arguments: '{}' } },
          ],
        },
        'tool_calls',
      ],
    ]);
  });

  test('a block split across the switch: the call with the key is cut before it, the call after it dropped, content_filter', () => {
    const out = run(guardFor({ aws_access_key: 'block' }), [
      chunk({ role: 'assistant', content: 'Calling.' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: `{"k":"${AWS_KEY.slice(0, 9)}` } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_1', type: 'function', function: { name: 'g', arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: `${AWS_KEY.slice(9)}"}` } }] }),
      chunk({}, 'tool_calls'),
    ]);
    assert.deepEqual(out, [
      [{ role: 'assistant' }, null],
      [{ content: 'Calling.', tool_calls: [{ index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: '{"k":"' } }] }, 'content_filter'],
    ]);
  });

  test('content back after a tool call: one content channel, a value split across the calls still masked', () => {
    const out = run(guardFor({ card_number: 'mask' }), [
      chunk({ role: 'assistant', content: `The card ${CARD.slice(0, 6)}` }),
      chunk({ tool_calls: [{ index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: '{}' } }] }),
      chunk({ content: `${CARD.slice(6)} is on file.` }),
      chunk({}, 'stop'),
    ]);
    assert.deepEqual(out, [
      [{ role: 'assistant' }, null],
      [{ content: 'The card [CARD_NUMBER_1] is on file.', tool_calls: [{ index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: '{}' } }] }, 'stop'],
    ]);
  });

  test('content, then a tool call: the content goes out as released, the call after the content has ended', () => {
    const long = 'word '.repeat(40);
    const out = run(guardFor({ card_number: 'mask' }), [
      chunk({ role: 'assistant', content: long }),
      chunk({ tool_calls: [{ index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: `{"a":"${'x'.repeat(200)}"}` } }] }),
      chunk({}, 'tool_calls'),
    ]);
    const released = long.length - 64;
    assert.deepEqual(out, [
      [{ role: 'assistant', content: long.slice(0, released) }, null],
      [{ content: long.slice(released), tool_calls: [{ index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: `{"a":"${'x'.repeat(200)}"}` } }] }, 'tool_calls'],
    ]);
  });

  test('the stream ends without a finish: every channel out, in the upstream\'s order', () => {
    const out = run(guardFor({ card_number: 'mask' }), [
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: '{"a":' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_1', type: 'function', function: { name: 'g', arguments: '{"b":2}' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
    ]);
    assert.deepEqual(out, [
      [{ role: 'assistant' }, null],
      [
        {
          tool_calls: [
            { index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
            { index: 1, id: 'call_1', type: 'function', function: { name: 'g', arguments: '{"b":2}' } },
          ],
        },
        null,
      ],
    ]);
  });
});
