import assert from 'node:assert/strict';
import { test } from 'node:test';
import { estimatePromptTokens } from '../../src/routing/token-estimate.ts';

test('3 + per message (4 + ceil(chars / 4)) + 85 per image + tools JSON / 4', () => {
  assert.equal(estimatePromptTokens({ messages: [{ role: 'user', content: 'abcd' }] }), 3 + 4 + 1);
  assert.equal(estimatePromptTokens({ messages: [{ role: 'user', content: 'abcde' }] }), 3 + 4 + 2);
  assert.equal(estimatePromptTokens({ messages: [{ role: 'user', content: '' }, { role: 'assistant', content: null }] }), 3 + 8);
  assert.equal(
    estimatePromptTokens({
      messages: [{ role: 'user', name: 'ann', content: [{ type: 'text', text: 'hello' }, { type: 'image_url', image_url: { url: 'https://x.test/a.png' } }] }],
    }),
    3 + 4 + Math.ceil(8 / 4) + 85,
  );
  assert.equal(
    estimatePromptTokens({
      messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }],
    }),
    3 + 4 + Math.ceil(8 / 4),
  );
  const tools = [{ type: 'function' as const, function: { name: 'get_weather' } }];
  assert.equal(estimatePromptTokens({ messages: [], tools }), 3 + Math.ceil(JSON.stringify(tools).length / 4));
});
