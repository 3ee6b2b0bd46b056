// The server span's status as the request ended: a 4xx leaves it unset, a 5xx
// and a client gone set it, and an answer cut after its 200 (a stream ended by a
// shutdown or by its upstream) is an error with a reason.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openChatTrace, type ChatTraceResult } from '../../src/telemetry/chat-trace.ts';
import { SpanKind, SpanStatusCode, type SpanRecord } from '../../src/telemetry/span.ts';
import { createTracer } from '../../src/telemetry/tracer.ts';

const SAMPLED = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' };

function serverSpanOf(result: Partial<ChatTraceResult>): SpanRecord {
  const spans: SpanRecord[] = [];
  const tracer = createTracer({ ratio: 1, sink: { add: (span) => spans.push(span) } });
  const trace = openChatTrace(tracer, SAMPLED, 'req_t', () => ({ model: 'm', attributes: {} }));
  trace.finish({ status: 200, error: undefined, promptTokens: undefined, completionTokens: undefined, ...result });
  const server = spans.find((s) => s.kind === SpanKind.Server);
  assert.ok(server !== undefined);
  return server;
}

test('a stream cut by a shutdown after its 200: error status with the reason, error.type the code', () => {
  const span = serverSpanOf({ status: 200, error: 'server_shutting_down' });
  assert.deepEqual(span.status, { code: SpanStatusCode.Error, message: 'the gateway shut down before the stream completed; the 200 answer was cut' });
  assert.equal(span.attributes['error.type'], 'server_shutting_down');
});

test('a stream cut by its upstream after its 200: error status naming the code', () => {
  const span = serverSpanOf({ status: 200, error: 'upstream_error' });
  assert.deepEqual(span.status, { code: SpanStatusCode.Error, message: 'the 200 answer was cut by upstream_error before it completed' });
});

test('a completed answer, and a 4xx, leave the status unset', () => {
  assert.deepEqual(serverSpanOf({ status: 200 }).status, { code: SpanStatusCode.Unset, message: undefined });
  const refused = serverSpanOf({ status: 429, error: 'rate_limit_exceeded' });
  assert.deepEqual(refused.status, { code: SpanStatusCode.Unset, message: undefined });
  assert.equal(refused.attributes['error.type'], 'rate_limit_exceeded');
});

test('a 5xx answer and a client gone before any answer are errors, as before', () => {
  assert.equal(serverSpanOf({ status: 502, error: 'upstream_error' }).status.code, SpanStatusCode.Error);
  assert.equal(serverSpanOf({ status: null }).status.code, SpanStatusCode.Error);
});
