import assert from 'node:assert/strict';
import { test } from 'node:test';
import { estimatePromptTokens } from '../../src/routing/token-estimate.ts';
import { estimateRequestTokens } from '../../src/limits/token-estimate.ts';

test('the prompt estimate service-auto uses, plus the whole output allowance', () => {
  const request = { messages: [{ role: 'system' as const, content: 'Be brief.' }, { role: 'user' as const, content: 'Hello there, how are you?' }] };
  // 3 + (4 + ceil(9 / 4)) + (4 + ceil(25 / 4)) = 3 + 7 + 11
  assert.equal(estimatePromptTokens(request), 21);
  assert.equal(estimateRequestTokens(request, 256), 21 + 256);
  assert.equal(estimateRequestTokens(request, 0), 21);
  assert.equal(estimateRequestTokens({ messages: [] }, 10), 13);
});

test('a maxOutputTokens that is not a non-negative integer is a programming error', () => {
  for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    assert.throws(() => estimateRequestTokens({ messages: [] }, bad), RangeError);
  }
});
