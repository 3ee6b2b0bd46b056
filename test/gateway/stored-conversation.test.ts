import assert from 'node:assert/strict';
import { test } from 'node:test';
import { continuedBody, inputItems, storedResponseOf } from '../../src/gateway/stored-conversation.ts';
import { conversationOf } from '../../src/state/response-store-port.ts';

const T0 = Date.UTC(2026, 0, 1);
const LIMITS = { ttlMs: 60_000, maxRecordBytes: 1 << 20, maxTotalBytes: 1 << 24, maxChainDepth: 10 };
const answer = (text: string) => ({ id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] });
const call = { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}', status: 'completed' };
const usage = { input_tokens: 9, output_tokens: 4, total_tokens: 13 };

test('a string input is one user message; items stay as they are; no input is none', () => {
  assert.deepEqual(inputItems('hi'), [{ role: 'user', content: 'hi' }]);
  assert.deepEqual(inputItems([{ type: 'function_call_output', call_id: 'c', output: 'x' }]), [{ type: 'function_call_output', call_id: 'c', output: 'x' }]);
  assert.deepEqual(inputItems(undefined), []);
});

test('three turns: each record holds the conversation so far, each continued body the whole of it, without previous_response_id', () => {
  const first = storedResponseOf({ id: 'resp_1', keyId: 'key_a', nowMs: T0, ttlMs: 60_000, previous: null, input: 'Weather in Oslo?', output: [call], usage });
  assert.deepEqual(first, {
    id: 'resp_1',
    keyId: 'key_a',
    createdAt: T0,
    expiresAt: T0 + 60_000,
    previousId: null,
    depth: 1,
    input: [{ role: 'user', content: 'Weather in Oslo?' }],
    output: [call],
    usage,
  });

  const toolTurn = [{ type: 'function_call_output', call_id: 'call_1', output: '{"c":4}' }];
  const body = { model: 'service-chat', previous_response_id: 'resp_1', input: toolTurn, store: true, instructions: 'Be brief.' };
  const resolved = conversationOf(first, LIMITS);
  assert.deepEqual(continuedBody(body, resolved), {
    model: 'service-chat',
    input: [{ role: 'user', content: 'Weather in Oslo?' }, call, ...toolTurn],
    store: true,
    instructions: 'Be brief.',
  });
  const second = storedResponseOf({ id: 'resp_2', keyId: 'key_a', nowMs: T0 + 5, ttlMs: 60_000, previous: { id: 'resp_1', conversation: resolved }, input: toolTurn, output: [answer('4 °C')], usage });
  assert.deepEqual([second.previousId, second.depth, second.createdAt, second.expiresAt], ['resp_1', 2, T0 + 5, T0 + 60_005]);
  assert.deepEqual(second.input, [{ role: 'user', content: 'Weather in Oslo?' }, call, ...toolTurn]);

  const third = continuedBody({ model: 'service-chat', previous_response_id: 'resp_2', input: 'Thanks' }, conversationOf(second, LIMITS));
  assert.deepEqual(third.input, [{ role: 'user', content: 'Weather in Oslo?' }, call, ...toolTurn, answer('4 °C'), { role: 'user', content: 'Thanks' }]);
  assert.equal('previous_response_id' in third, false);
});

test('an answer without usage stores null', () => {
  assert.equal(storedResponseOf({ id: 'resp_u', keyId: 'key_a', nowMs: T0, ttlMs: 1, previous: null, input: 'x', output: [], usage: undefined }).usage, null);
});
