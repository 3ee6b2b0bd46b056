import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildUpstreamRequest } from '../../src/chat/upstream-request.ts';
import type { ChatRequest } from '../../src/chat/types.ts';

const base: ChatRequest = { model: 'service-chat', messages: [{ role: 'user', content: 'hi' }] };
const uncapped = { model: 'llama-3.1-8b', maxOutputTokens: null, maxTokensParam: 'max_tokens' as const };
const uncappedMct = { ...uncapped, maxTokensParam: 'max_completion_tokens' as const };

test('neither max field: 4096 goes upstream in the provider\'s field, model rewritten', () => {
  const plan = buildUpstreamRequest(base, uncapped);
  assert.deepEqual(plan, {
    request: { model: 'llama-3.1-8b', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4096 },
    maxOutputTokens: 4096,
    clamped: false,
  });
  assert.deepEqual(buildUpstreamRequest(base, uncappedMct).request, {
    model: 'llama-3.1-8b',
    messages: [{ role: 'user', content: 'hi' }],
    max_completion_tokens: 4096,
  });
});

test('the client\'s field is translated so exactly one max field reaches the upstream', () => {
  const a = buildUpstreamRequest({ ...base, max_completion_tokens: 100 }, uncapped).request;
  assert.equal(a.max_tokens, 100);
  assert.equal('max_completion_tokens' in a, false);
  const b = buildUpstreamRequest({ ...base, max_tokens: 7 }, uncappedMct).request;
  assert.equal(b.max_completion_tokens, 7);
  assert.equal('max_tokens' in b, false);
});

test('an alias cap clamps the requested and the default maximum, and says so', () => {
  const capped = { ...uncapped, maxOutputTokens: 1000 };
  assert.deepEqual(
    [buildUpstreamRequest({ ...base, max_tokens: 5000 }, capped)].map((p) => [p.request.max_tokens, p.clamped]),
    [[1000, true]],
  );
  const d = buildUpstreamRequest(base, capped);
  assert.deepEqual([d.request.max_tokens, d.clamped], [1000, true]);
  const under = buildUpstreamRequest({ ...base, max_tokens: 999 }, capped);
  assert.deepEqual([under.request.max_tokens, under.clamped], [999, false]);
  const equal = buildUpstreamRequest({ ...base, max_tokens: 1000 }, capped);
  assert.deepEqual([equal.request.max_tokens, equal.clamped], [1000, false]);
});

test('the client request is not mutated', () => {
  const req: ChatRequest = { ...base, max_tokens: 10 };
  buildUpstreamRequest(req, uncappedMct);
  assert.deepEqual(req, { ...base, max_tokens: 10 });
});
