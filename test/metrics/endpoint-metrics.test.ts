// The model doors' metrics: requests by endpoint; a token count is a request
// but neither an answer's latency nor its tokens.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AccessLine } from '../../src/log/access-line.ts';
import { createGatewayMetrics } from '../../src/metrics/gateway-metrics.ts';
import { parsePrometheusText, sampleValue } from './prometheus-text.ts';

function line(path: string, fields: Partial<AccessLine> = {}): AccessLine {
  return {
    requestId: 'r', method: 'POST', path, client: '127.0.0.1', status: 200, keyId: 'k', alias: 'claude-opus-5-5', target: 'up/m', route: 'requested', stream: false,
    promptTokens: 10, completionTokens: 5, charge: 'usage', chargedTokens: 15, costNanos: 0, cost: 0, ttfbMs: 5, totalMs: 20, completed: true, error: null,
    ...fields,
  } as AccessLine;
}

test('chat, messages and count_tokens are counted apart; a count adds no tokens and no duration', () => {
  const metrics = createGatewayMetrics({ targets: () => [], isKnownAlias: () => true, stateBackendUp: () => 1 });
  metrics.requestDone(line('/v1/chat/completions'));
  metrics.requestDone(line('/v1/messages'));
  metrics.requestDone(line('/v1/messages/count_tokens', { promptTokens: null, completionTokens: null, countedTokens: 30000 }));
  metrics.requestDone(line('/v1/models'));
  const families = parsePrometheusText(metrics.registry.expose());
  for (const endpoint of ['chat_completions', 'messages', 'count_tokens']) {
    assert.equal(sampleValue(families, 'portcullis_requests_total', { endpoint, alias: 'claude-opus-5-5', status: '200' }), 1, endpoint);
  }
  assert.equal(sampleValue(families, 'portcullis_tokens_total', { alias: 'claude-opus-5-5', kind: 'prompt' }), 20);
  assert.equal(sampleValue(families, 'portcullis_request_duration_seconds_count', { alias: 'claude-opus-5-5' }), 2);
});

test('embeddings are counted as their own endpoint, with their prompt tokens and duration', () => {
  const metrics = createGatewayMetrics({ targets: () => [], isKnownAlias: () => true, stateBackendUp: () => 1 });
  metrics.requestDone(line('/v1/embeddings', { alias: 'text-embed', promptTokens: 40, completionTokens: 0 }));
  const families = parsePrometheusText(metrics.registry.expose());
  assert.equal(sampleValue(families, 'portcullis_requests_total', { endpoint: 'embeddings', alias: 'text-embed', status: '200' }), 1);
  assert.equal(sampleValue(families, 'portcullis_tokens_total', { alias: 'text-embed', kind: 'prompt' }), 40);
  assert.equal(sampleValue(families, 'portcullis_request_duration_seconds_count', { alias: 'text-embed' }), 1);
});
