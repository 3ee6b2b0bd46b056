// The server span's status as the request ended: a 4xx leaves it unset, a 5xx
// and a client gone set it, and an answer cut after its 200 (a stream ended by a
// shutdown or by its upstream) is an error with a reason.
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { describe, test } from 'node:test';
import { parseConfig } from '../../src/config/config-parser.ts';
import { describeTarget, describeTargets, openChatTrace, type ChatTrace, type ChatTraceResult } from '../../src/telemetry/chat-trace.ts';
import { SpanKind, SpanStatusCode, type SpanRecord } from '../../src/telemetry/span.ts';
import { parseTraceparent } from '../../src/telemetry/trace-context.ts';
import { createContextOnlyTracer, createTracer, type Tracer } from '../../src/telemetry/tracer.ts';

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

// A request whose trace nothing records (no exporter, or not sampled) must cost
// next to nothing: no spans, no target attributes, no per-request functions;
// only the trace context it passes upstream.
describe('a request nothing records', () => {
  const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
  const CLIENT_SPAN = '00f067aa0ba902b7';
  const cases: { name: string; tracer: () => Tracer; headers: IncomingHttpHeaders; traceId: string | undefined; sampled: boolean; traceState: string | undefined }[] = [
    { name: 'no exporter, a sampled client trace', tracer: createContextOnlyTracer, headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`, tracestate: 'rojo=1' }, traceId: CLIENT_TRACE, sampled: true, traceState: 'rojo=1' },
    { name: 'no exporter, a new trace', tracer: createContextOnlyTracer, headers: {}, traceId: undefined, sampled: false, traceState: undefined },
    { name: 'an exporter, an unsampled client trace', tracer: () => createTracer({ ratio: 1, sink: refusingSink }), headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-00` }, traceId: CLIENT_TRACE, sampled: false, traceState: undefined },
    { name: 'an exporter, a new trace the ratio leaves out', tracer: () => createTracer({ ratio: 0, sink: refusingSink }), headers: {}, traceId: undefined, sampled: false, traceState: undefined },
  ];

  for (const c of cases) {
    test(`${c.name}: no span, no target attributes, no functions of its own; the context still goes upstream`, () => {
      let described = 0;
      const describe = (): { model: string; attributes: Record<string, string> } => {
        described++;
        return { model: 'm', attributes: {} };
      };
      const spans = countingSpans(c.tracer());
      const trace = openChatTrace(spans.tracer, c.headers, 'req_u', describe);
      const sent = driveRequest(trace);

      assert.equal(spans.started(), 0, 'no span started');
      assert.equal(trace.recording, false);
      assert.equal(described, 0, 'no target attributes looked up');
      assert.deepEqual(Object.entries(trace).filter(([, value]) => typeof value === 'function'), [], 'no closures made for this request');
      if (c.traceId !== undefined) assert.equal(trace.traceId, c.traceId);
      else assert.match(trace.traceId, /^[0-9a-f]{32}$/);
      // Each attempt has its own parent id (never the client's), in the request's trace.
      const parents = sent.map((headers) => {
        const seen = parseTraceparent(headers['traceparent']);
        assert.ok(seen !== undefined);
        assert.equal(seen.traceId, trace.traceId);
        assert.equal(seen.sampled, c.sampled);
        assert.equal(headers['tracestate'], c.traceState);
        assert.deepEqual(Object.keys(headers), c.traceState === undefined ? ['traceparent'] : ['traceparent', 'tracestate']);
        return seen.parentId;
      });
      assert.equal(new Set([...parents, CLIENT_SPAN]).size, 3);
    });
  }

  test('the route and admission spans are one shared object that records nothing', () => {
    const tracer = createContextOnlyTracer();
    const first = openChatTrace(tracer, {}, 'req_a', () => ({ model: 'm', attributes: {} }));
    const second = openChatTrace(tracer, {}, 'req_b', () => ({ model: 'm', attributes: {} }));
    assert.equal(first.startRoute(), second.startRoute());
    assert.equal(first.startAdmission(), second.startAdmission());
    assert.equal(first.startRoute(), first.startAdmission());
    assert.notEqual(first.traceId, second.traceId);
  });
});

test('a recorded request starts its server span once, and its spans reach the sink', () => {
  const records: SpanRecord[] = [];
  const spans = countingSpans(createTracer({ ratio: 1, sink: { add: (span) => records.push(span) } }));
  const trace = openChatTrace(spans.tracer, SAMPLED, 'req_r', () => ({ model: 'm', attributes: { 'portcullis.target': 'fake/m' } }));
  const sent = driveRequest(trace);
  assert.equal(spans.started(), 1);
  assert.equal(trace.recording, true);
  assert.deepEqual(records.map((r) => r.name), ['route', 'admission', 'chat m', 'chat m', 'POST /v1/chat/completions']);
  const attempts = records.filter((r) => r.kind === SpanKind.Client);
  assert.deepEqual(sent.map((h) => parseTraceparent(h['traceparent'])?.parentId), attempts.map((r) => r.spanId));
});

test('an embeddings request: its operation on the server span and on each attempt, which is named after it', () => {
  const records: SpanRecord[] = [];
  const tracer = createTracer({ ratio: 1, sink: { add: (span) => records.push(span) } });
  const route = { method: 'POST', path: '/v1/embeddings', operation: 'embeddings' };
  const trace = openChatTrace(tracer, SAMPLED, 'req_e', () => ({ model: 'text-embedding-3-small', attributes: {} }), route);
  driveRequest(trace);
  assert.deepEqual(records.map((r) => r.name), ['route', 'admission', 'embeddings text-embedding-3-small', 'embeddings text-embedding-3-small', 'POST /v1/embeddings']);
  for (const r of records.filter((x) => x.kind !== SpanKind.Internal)) assert.equal(r.attributes['gen_ai.operation.name'], 'embeddings', r.name);
  assert.equal(records.find((r) => r.kind === SpanKind.Server)?.attributes['http.route'], '/v1/embeddings');
});

test("a target's span attributes come from its provider's configuration, once per target", () => {
  const config = parseConfig(
    {
      providers: {
        demo: { type: 'demo' },
        cloud: { type: 'openai', baseUrl: 'https://api.example.com/v1', apiKeyEnv: 'CLOUD_KEY' },
        local: { type: 'anthropic', baseUrl: 'http://[::1]:8080', apiKeyEnv: 'LOCAL_KEY' },
      },
      aliases: { a: { provider: 'demo' }, b: { provider: 'cloud', model: 'gpt-x' }, c: { provider: 'local', model: 'claude-y' } },
    },
    null,
    '/etc',
  );
  assert.deepEqual(describeTarget(config, 'demo/portcullis-demo'), {
    model: 'portcullis-demo',
    attributes: { 'portcullis.target': 'demo/portcullis-demo', 'portcullis.provider': 'demo', 'gen_ai.provider.name': 'portcullis.demo', 'gen_ai.system': 'portcullis.demo' },
  });
  assert.deepEqual(describeTarget(config, 'cloud/gpt-x').attributes, {
    'portcullis.target': 'cloud/gpt-x',
    'portcullis.provider': 'cloud',
    'gen_ai.provider.name': 'openai',
    'gen_ai.system': 'openai',
    'server.address': 'api.example.com',
    'server.port': 443,
  });
  assert.equal(describeTarget(config, 'local/claude-y').attributes['server.address'], '::1');
  assert.equal(describeTarget(config, 'local/claude-y').attributes['server.port'], 8080);
  const describe = describeTargets(config);
  assert.equal(describe('cloud/gpt-x'), describe('cloud/gpt-x'));
  assert.deepEqual(describe('cloud/gpt-x'), describeTarget(config, 'cloud/gpt-x'));
});

/** The tracer, counting the server spans started through it. */
function countingSpans(tracer: Tracer): { tracer: Tracer; started: () => number } {
  let started = 0;
  return {
    tracer: {
      traceOf: (headers) => tracer.traceOf(headers),
      startServerSpan: (context, name, attributes) => {
        started++;
        return tracer.startServerSpan(context, name, attributes);
      },
      shutdown: (deadlineMs) => tracer.shutdown(deadlineMs),
    },
    started: () => started,
  };
}

const refusingSink = {
  add(): void {
    assert.fail('nothing is recorded for this request');
  },
};

/** Every call the pipeline makes for a request answered on its second attempt; the headers each attempt sent. */
function driveRequest(trace: ChatTrace): Record<string, string>[] {
  const route = trace.startRoute();
  trace.routed(route, 'service-chat', 'requested', true);
  const admission = trace.startAdmission();
  admission.setAttribute('portcullis.limit', 'tokens');
  admission.end();
  const sent = [trace.startAttempt('fake/m', 1)];
  trace.attemptDone({ targetId: 'fake/m', attempt: 1, outcome: 'retry', code: 'upstream_error', cause: { kind: 'http', detail: '503' } });
  trace.attemptDone({ targetId: 'other/m', attempt: 1, outcome: 'skipped_open' });
  sent.push(trace.startAttempt('fake/m', 2));
  trace.attemptDone({ targetId: 'fake/m', attempt: 2, outcome: 'ok' });
  trace.responseModel('m-2025');
  const result = { status: 200, error: undefined, promptTokens: 3, completionTokens: 4 };
  trace.finishAttempt(result);
  trace.finish(result);
  trace.finish(result);
  return sent;
}
