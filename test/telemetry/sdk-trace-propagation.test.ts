// End to end: a client instrumented with the official OpenTelemetry
// SDK calls the gateway; the fake upstream sees a traceparent with the
// client's trace id whose parent is the gateway's attempt span; the gateway's
// OTLP/HTTP JSON export (to a receiver on loopback) decodes as OTLP by the
// official encoder and forms one tree with the client's span. Non-streaming,
// streaming, a retry and a fallback; and what is never exported or echoed.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { context, defaultTextMapSetter, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createGatewayMetrics } from '../../src/metrics/gateway-metrics.ts';
import { parseTraceparent } from '../../src/telemetry/trace-context.ts';
import { postChat, sseData, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from '../gateway/harness.ts';
import { assertOfficialOtlpJson } from './otlp-decoder.ts';
import { attributesOf, startOtlpReceiver, type OtlpReceiver, type OtlpSpan } from './otlp-receiver.ts';

const PROMPT = 'the secret plan is under the blue stone';
const ANSWER = 'a completion text that must stay out of traces';
const OTLP_TOKEN = 'otlp-token-7f3a';

let upstream: FakeUpstream;
let receiver: OtlpReceiver;
let gw: TestGateway;
const metrics = createGatewayMetrics({ targets: () => [], isKnownAlias: () => true, stateBackendUp: () => 1 });
const sdkSpans = new InMemorySpanExporter();
const clientTracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(sdkSpans)] }).getTracer('test-client');
const propagator = new W3CTraceContextPropagator();

function completion(model: string, content = ANSWER): Record<string, unknown> {
  return { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model, choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } };
}
function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

before(async () => {
  upstream = await startFakeUpstream(() => {});
  receiver = await startOtlpReceiver();
  const fast = { retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 }, circuitBreaker: { failureThreshold: 1000 } };
  gw = await startGateway({
    metrics,
    env: { OTLP_TOKEN },
    configValue: {
      providers: {
        fake: { type: 'openai', baseUrl: upstream.baseUrl, apiKeyEnv: 'FAKE_UPSTREAM_KEY', ...fast },
        backup: { type: 'openai', baseUrl: upstream.baseUrl, apiKeyEnv: 'FAKE_UPSTREAM_KEY', ...fast, retry: { maxAttempts: 1 } },
      },
      aliases: {
        'service-fake': { provider: 'fake', model: 'upstream-model-1' },
        'service-ha': { targets: [{ provider: 'backup', model: 'm-primary' }, { provider: 'fake', model: 'm-backup', priority: 1 }] },
      },
      auto: { default: 'service-fake' },
      telemetry: {
        resourceAttributes: { 'deployment.environment.name': 'test' },
        otlp: { endpoint: receiver.url, scheduleDelayMs: 10, headers: { authorization: 'Bearer ${OTLP_TOKEN}' } },
      },
    },
  });
});
after(async () => {
  await gw.close();
  await upstream.close();
  await receiver.close();
});

/** Calls the gateway inside a client span of the official SDK; returns that span's ids. */
async function tracedCall(body: unknown, extra: Record<string, string> = {}): Promise<{ traceId: string; spanId: string; status: number; text: string }> {
  const span = clientTracer.startSpan('client chat', { kind: SpanKind.CLIENT });
  const carrier: Record<string, string> = {};
  propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
  const res = await context.with(ROOT_CONTEXT, () => postChat(gw, body, { ...carrier, ...extra }));
  span.end();
  return { traceId: span.spanContext().traceId, spanId: span.spanContext().spanId, status: res.status, text: res.text };
}

/** The spans of one trace once its server span (the last to end) arrived. */
async function spansOf(traceId: string): Promise<OtlpSpan[]> {
  for (;;) {
    const spans = receiver.spans().filter((s) => s.traceId === traceId);
    if (spans.some((s) => s.kind === 2)) return spans;
    await receiver.waitForSpans(receiver.spans().length + 1);
  }
}

function one(spans: OtlpSpan[], name: string): OtlpSpan {
  const found = spans.filter((s) => s.name === name);
  assert.equal(found.length, 1, `one span named ${name}: ${spans.map((s) => s.name).join(', ')}`);
  return found[0] as OtlpSpan;
}

const hi = (model: string, stream = false): Record<string, unknown> => ({ model, messages: [{ role: 'user', content: PROMPT }], ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) });

describe('a client traced with the official SDK', () => {
  test('its trace continues through the gateway to the upstream, and the spans form one tree', async () => {
    upstream.handle = (_r, res) => json(res, 200, completion('upstream-model-1-2025'));
    const sent = upstream.requests.length;
    const call = await tracedCall(hi('service-fake'), { tracestate: 'vendor=abc,other@sys=1' });
    assert.equal(call.status, 200);

    const seen = parseTraceparent(upstream.requests[sent]?.headers['traceparent']);
    assert.ok(seen !== undefined, 'the upstream got a valid traceparent');
    assert.equal(seen.traceId, call.traceId);
    assert.equal(seen.sampled, true);
    assert.notEqual(seen.parentId, call.spanId, "the client's traceparent is not forwarded as it is");
    assert.equal(upstream.requests[sent]?.headers['tracestate'], 'vendor=abc,other@sys=1');

    const spans = await spansOf(call.traceId);
    const server = one(spans, 'POST /v1/chat/completions');
    const attempt = one(spans, 'chat upstream-model-1');
    const route = one(spans, 'route');
    const admission = one(spans, 'admission');
    assert.equal(spans.length, 4);
    // The tree: client span -> server span -> {route, admission, attempt}; the upstream's parent is the attempt.
    assert.equal(server.parentSpanId, call.spanId);
    assert.equal(server.kind, 2);
    assert.equal(server.flags, 0x301, 'sampled, with a remote parent');
    for (const child of [route, admission, attempt]) assert.equal(child.parentSpanId, server.spanId);
    assert.equal(attempt.kind, 3);
    assert.equal(attempt.spanId, seen.parentId);
    assert.equal(server.traceState, 'vendor=abc,other@sys=1');

    const port = Number(new URL(upstream.baseUrl).port);
    assert.deepEqual(attributesOf(attempt), {
      'portcullis.target': 'fake/upstream-model-1',
      'portcullis.provider': 'fake',
      'gen_ai.provider.name': 'openai',
      'gen_ai.system': 'openai',
      'server.address': '127.0.0.1',
      'server.port': port,
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'service-fake',
      'portcullis.attempt': 1,
      'portcullis.attempt.outcome': 'ok',
      'gen_ai.response.model': 'upstream-model-1-2025',
      'gen_ai.usage.input_tokens': 11,
      'gen_ai.usage.output_tokens': 7,
    });
    const serverAttributes = attributesOf(server);
    assert.equal(serverAttributes['gen_ai.operation.name'], 'chat');
    assert.equal(serverAttributes['gen_ai.request.model'], 'service-fake');
    assert.equal(serverAttributes['gen_ai.response.model'], 'upstream-model-1-2025');
    assert.equal(serverAttributes['http.response.status_code'], 200);
    assert.equal(serverAttributes['gen_ai.usage.input_tokens'], 11);
    assert.equal(serverAttributes['gen_ai.usage.output_tokens'], 7);
    assert.equal(serverAttributes['portcullis.route.reason'], 'requested');
    assert.equal(server.status.code, 0);
    assert.deepEqual(attributesOf(route), { 'gen_ai.request.model': 'service-fake', 'portcullis.route.reason': 'requested' });

    const access = gw.logs.find((l) => l['msg'] === 'request' && l['traceId'] === call.traceId);
    assert.ok(access !== undefined, 'the access-log line names the trace id');
  });

  test('every export decodes as OTLP by the official encoder, to /v1/traces with the configured headers, without text or keys', async () => {
    const exports = receiver.exports;
    assert.ok(exports.length > 0);
    for (const e of exports) {
      assert.equal(e.path, '/v1/traces');
      assert.equal(e.headers['content-type'], 'application/json');
      assert.equal(e.headers['authorization'], `Bearer ${OTLP_TOKEN}`);
      assertOfficialOtlpJson(e.text);
      for (const secret of [PROMPT, ANSWER, gw.key, 'sk-upstream-secret', OTLP_TOKEN]) assert.equal(e.text.includes(secret), false, 'no prompt, completion or key in a span');
    }
    const resource = attributesOf(exports[0]?.body.resourceSpans[0]?.resource ?? { attributes: [] });
    assert.equal(resource['service.name'], 'portcullis');
    assert.equal(resource['deployment.environment.name'], 'test');
    assert.match(String(resource['service.version']), /^\d+\.\d+\.\d+/);
    assert.match(String(resource['service.instance.id']), /^[0-9a-f-]{36}$/);
    // Everything received is counted as exported, once the gateway has read the collector's answer.
    const exportedLine = (): string | undefined => /^portcullis_trace_spans_exported_total .*$/m.exec(metrics.expose())?.[0];
    for (let i = 0; i < 500 && exportedLine() !== `portcullis_trace_spans_exported_total ${receiver.spans().length}`; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(exportedLine(), `portcullis_trace_spans_exported_total ${receiver.spans().length}`);
  });

  test('a stream: the attempt spans the whole stream, with the first token as an event', async () => {
    upstream.handle = (_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta: unknown, extra: Record<string, unknown> = {}): string => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-model-1', choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;
      res.write(chunk({ role: 'assistant', content: ANSWER }));
      setTimeout(() => {
        res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-model-1', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
        res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-model-1', choices: [], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } })}\n\n`);
        res.end('data: [DONE]\n\n');
      }, 20);
    };
    const call = await tracedCall(hi('service-fake', true));
    assert.equal(call.status, 200);
    assert.equal(sseData(call.text).at(-1), '[DONE]');
    const spans = await spansOf(call.traceId);
    const attempt = one(spans, 'chat upstream-model-1');
    const server = one(spans, 'POST /v1/chat/completions');
    assert.equal(attempt.parentSpanId, server.spanId);
    assert.equal(server.parentSpanId, call.spanId);
    assert.deepEqual(attempt.events.map((e) => e.name), ['first_token']);
    const firstToken = BigInt(attempt.events[0]?.timeUnixNano ?? '0');
    assert.ok(firstToken >= BigInt(attempt.startTimeUnixNano) && firstToken <= BigInt(attempt.endTimeUnixNano));
    // The attempt ended with the stream (the usage came in its last event).
    assert.equal(attributesOf(attempt)['gen_ai.usage.output_tokens'], 3);
    assert.equal(attributesOf(server)['portcullis.stream'], true);
    assert.equal(typeof attributesOf(server)['portcullis.time_to_first_token_ms'], 'number');
  });

  test('a retry: each attempt is its own span, and each upstream request has its own attempt as parent', async () => {
    let n = 0;
    upstream.handle = (_r, res) => (n++ === 0 ? json(res, 503, { error: { message: 'busy' } }) : json(res, 200, completion('upstream-model-1')));
    const sent = upstream.requests.length;
    const call = await tracedCall(hi('service-fake'));
    assert.equal(call.status, 200);
    const parents = upstream.requests.slice(sent).map((r) => parseTraceparent(r.headers['traceparent'])?.parentId);
    assert.equal(parents.length, 2);
    const spans = await spansOf(call.traceId);
    const attempts = spans.filter((s) => s.kind === 3).sort((a, b) => Number(attributesOf(a)['portcullis.attempt']) - Number(attributesOf(b)['portcullis.attempt']));
    assert.deepEqual(attempts.map((s) => s.spanId), parents);
    const [first, second] = attempts.map(attributesOf);
    assert.equal(first?.['portcullis.attempt.outcome'], 'retry');
    assert.equal(first?.['error.type'], 'upstream_error');
    assert.equal(first?.['http.response.status_code'], 503);
    assert.equal(attempts[0]?.status.code, 2);
    assert.equal(second?.['portcullis.attempt.outcome'], 'ok');
    assert.equal(second?.['portcullis.attempt'], 2);
  });

  test('a fallback: the failed target and the next one are sibling spans naming their targets', async () => {
    upstream.handle = (r, res) => ((r.body as { model: string }).model === 'm-primary' ? json(res, 500, { error: { message: 'down' } }) : json(res, 200, completion('m-backup')));
    const call = await tracedCall(hi('service-ha'));
    assert.equal(call.status, 200);
    const spans = await spansOf(call.traceId);
    const server = one(spans, 'POST /v1/chat/completions');
    const primary = one(spans, 'chat m-primary');
    const backup = one(spans, 'chat m-backup');
    assert.equal(primary.parentSpanId, server.spanId);
    assert.equal(backup.parentSpanId, server.spanId);
    assert.equal(attributesOf(primary)['portcullis.attempt.outcome'], 'fallback');
    assert.equal(attributesOf(primary)['portcullis.target'], 'backup/m-primary');
    assert.equal(attributesOf(backup)['portcullis.target'], 'fake/m-backup');
    assert.equal(attributesOf(server)['portcullis.target'], 'fake/m-backup');
  });
});

describe('trace context without a usable client trace', () => {
  test('an invalid traceparent is ignored, never echoed: the gateway starts a trace; its tracestate is dropped', async () => {
    upstream.handle = (_r, res) => json(res, 200, completion('upstream-model-1'));
    const sent = upstream.requests.length;
    const bad = '00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01';
    const res = await postChat(gw, hi('service-fake'), { traceparent: bad, tracestate: 'vendor=abc' });
    assert.equal(res.status, 200);
    assert.equal(res.headers['traceparent'], undefined);
    const headers = upstream.requests[sent]?.headers ?? {};
    const seen = parseTraceparent(headers['traceparent']);
    assert.ok(seen !== undefined);
    assert.notEqual(seen.traceId, '0af7651916cd43dd8448eb211c80319c');
    assert.equal(headers['tracestate'], undefined);
    const spans = await spansOf(seen.traceId);
    assert.equal(one(spans, 'POST /v1/chat/completions').parentSpanId, undefined, 'a new root');
    const access = gw.logs.find((l) => l['msg'] === 'request' && l['traceId'] === seen.traceId);
    assert.ok(access !== undefined);
  });

  test("a client's unsampled trace is propagated (flag 00) and not exported", async () => {
    upstream.handle = (_r, res) => json(res, 200, completion('upstream-model-1'));
    const sent = upstream.requests.length;
    const unsampled = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00';
    assert.equal((await postChat(gw, hi('service-fake'), { traceparent: unsampled })).status, 200);
    const seen = parseTraceparent(upstream.requests[sent]?.headers['traceparent']);
    assert.equal(seen?.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
    assert.equal(seen?.sampled, false);
    assert.notEqual(seen?.parentId, '00f067aa0ba902b7');
    // A sampled request after it: once its spans are in, the unsampled one's would be too.
    const call = await tracedCall(hi('service-fake'));
    await spansOf(call.traceId);
    assert.equal(receiver.spans().filter((s) => s.traceId === '4bf92f3577b34da6a3ce929d0e0e4736').length, 0);
  });

  test('a refused request (bad key) still has a trace id in its access line and a server span with its error', async () => {
    const span = clientTracer.startSpan('client chat');
    const carrier: Record<string, string> = {};
    propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
    const res = await postChat({ ...gw, key: 'pcl_wrong' }, hi('service-fake'), carrier);
    span.end();
    assert.equal(res.status, 401);
    const traceId = span.spanContext().traceId;
    const [server] = await spansOf(traceId);
    assert.equal(attributesOf(server as OtlpSpan)['error.type'], 'invalid_api_key');
    assert.equal(attributesOf(server as OtlpSpan)['http.response.status_code'], 401);
    assert.ok(gw.logs.some((l) => l['msg'] === 'request' && l['traceId'] === traceId && l['status'] === 401));
  });
});
