// The gateway's trace export around the request path: trace context with no
// telemetry configured, the flush at shutdown, a failing collector (dropped
// spans in /metrics, one warn line without the headers), and a missing export
// credential stopping the start.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/config.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createGatewayTracer } from '../../src/telemetry/gateway-telemetry.ts';
import { createGatewayMetrics } from '../../src/metrics/gateway-metrics.ts';
import { parseTraceparent } from '../../src/telemetry/trace-context.ts';
import { postChat, startFakeUpstream, startGateway } from '../gateway/harness.ts';
import { startOtlpReceiver } from './otlp-receiver.ts';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const completion = { id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] };
const hi = { model: 'service-fake', messages: [{ role: 'user', content: 'hello' }] };
const answer = (_r: unknown, res: http.ServerResponse): void => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(completion));
};

function configWith(upstreamBaseUrl: string, telemetry?: unknown): Record<string, unknown> {
  return {
    providers: { fake: { type: 'openai', baseUrl: upstreamBaseUrl, apiKeyEnv: 'FAKE_UPSTREAM_KEY', retry: { maxAttempts: 1 } } },
    aliases: { 'service-fake': { provider: 'fake', model: 'm' } },
    auto: { default: 'service-fake' },
    ...(telemetry === undefined ? {} : { telemetry }),
  };
}

test('with no telemetry configured, trace context still reaches the upstream: the client trace continued, a new one not sampled', async () => {
  const upstream = await startFakeUpstream(answer);
  const gw = await startGateway({ configValue: configWith(upstream.baseUrl) });
  try {
    assert.equal((await postChat(gw, hi, { traceparent: `00-${TRACE}-00f067aa0ba902b7-01`, tracestate: 'rojo=1' })).status, 200);
    assert.equal((await postChat(gw, hi)).status, 200);
    const [continued, fresh] = upstream.requests.map((r) => r.headers);
    const first = parseTraceparent(continued?.['traceparent']);
    assert.equal(first?.traceId, TRACE);
    assert.equal(first?.sampled, true);
    assert.notEqual(first?.parentId, '00f067aa0ba902b7');
    assert.equal(continued?.['tracestate'], 'rojo=1');
    const second = parseTraceparent(fresh?.['traceparent']);
    assert.ok(second !== undefined && second.traceId !== TRACE);
    assert.equal(second.sampled, false);
    assert.equal(fresh?.['tracestate'], undefined);
    assert.equal(gw.logs.filter((l) => l['msg'] === 'request').map((l) => l['traceId'])[0], TRACE);
  } finally {
    await gw.close();
    await upstream.close();
  }
});

test('spans still queued at shutdown are sent before the gateway stops', async () => {
  const upstream = await startFakeUpstream(answer);
  const receiver = await startOtlpReceiver();
  const gw = await startGateway({ configValue: configWith(upstream.baseUrl, { otlp: { endpoint: receiver.url, scheduleDelayMs: 60_000 } }) });
  try {
    assert.equal((await postChat(gw, hi, { traceparent: `00-${TRACE}-00f067aa0ba902b7-01` })).status, 200);
    assert.equal(receiver.exports.length, 0, 'nothing sent before the schedule or the shutdown');
  } finally {
    await gw.close();
    await upstream.close();
  }
  assert.deepEqual(receiver.spans().map((s) => s.name).sort(), ['POST /v1/chat/completions', 'admission', 'chat m', 'route']);
  await receiver.close();
});

test('a collector that refuses: the spans are counted as dropped in /metrics and one warn line says so, without the headers', async () => {
  const upstream = await startFakeUpstream(answer);
  const receiver = await startOtlpReceiver();
  receiver.answers.push({ status: 401, body: '{"message":"bad token"}' });
  const metrics = createGatewayMetrics({ targets: () => [], isKnownAlias: () => true, stateBackendUp: () => 1 });
  const gw = await startGateway({
    metrics,
    env: { OTLP_TOKEN: 'tok-secret-42' },
    configValue: configWith(upstream.baseUrl, { otlp: { endpoint: receiver.url, scheduleDelayMs: 60_000, headers: { 'x-api-key': '${OTLP_TOKEN}' } } }),
  });
  try {
    assert.equal((await postChat(gw, hi, { traceparent: `00-${TRACE}-00f067aa0ba902b7-01` })).status, 200);
  } finally {
    await gw.close();
    await upstream.close();
    await receiver.close();
  }
  assert.match(metrics.expose(), /^portcullis_trace_spans_dropped_total\{reason="export_failed"\} 4$/m);
  assert.match(metrics.expose(), /^portcullis_trace_spans_exported_total 0$/m);
  const warn = gw.logs.filter((l) => l['msg'] === 'trace export failed; spans dropped');
  assert.deepEqual(warn.map(({ time: _t, ...rest }) => rest), [{ level: 'warn', msg: 'trace export failed; spans dropped', endpoint: receiver.url, status: 401, failure: null, spans: 4 }]);
  assert.equal(JSON.stringify(gw.logs).includes('tok-secret-42'), false);
});

test('an export header naming an unset variable stops the start, naming the header', () => {
  const config = parseConfig(configWith('http://127.0.0.1:9/v1', { otlp: { endpoint: 'http://127.0.0.1:4318/v1/traces', headers: { authorization: 'Bearer ${OTLP_TOKEN}' } } }), '/etc/portcullis.json', '/etc');
  // What createGateway calls first; serve prints the ConfigError and exits 1.
  assert.throws(() => createGatewayTracer(config, { logger: createLogger({ write: () => {} }), env: {} }), (err: unknown) => {
    assert.ok(err instanceof ConfigError);
    assert.equal(err.message, '/etc/portcullis.json: telemetry.otlp.headers.authorization: environment variable OTLP_TOKEN is not set or empty');
    return true;
  });
});

test("the export's log lines show its endpoint without the query, which may hold a token", async () => {
  const config = parseConfig(configWith('http://127.0.0.1:9/v1', { otlp: { endpoint: 'https://intake.example:4318/v1/traces?api_key=q-secret-9', scheduleDelayMs: 60_000 } }), null, '/etc');
  const lines: string[] = [];
  const refused = { status: 401, retryAfterMs: undefined, rejectedSpans: 0, failure: undefined };
  const tracer = createGatewayTracer(config, { logger: createLogger({ write: (line) => lines.push(line) }), env: {}, post: async () => refused });
  tracer.startServerSpan(tracer.traceOf({ traceparent: `00-${TRACE}-00f067aa0ba902b7-01` }), 'POST /v1/chat/completions').end();
  await tracer.shutdown(1000);
  const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.deepEqual(logged.map((l) => [l['msg'], l['endpoint']]), [
    ['trace export on', 'https://intake.example:4318/v1/traces?...'],
    ['trace export failed; spans dropped', 'https://intake.example:4318/v1/traces?...'],
  ]);
  assert.equal(lines.join('').includes('q-secret-9'), false);
});

test("a provider's configured traceparent header is replaced by the attempt's own", async () => {
  const upstream = await startFakeUpstream(answer);
  const value = configWith(upstream.baseUrl);
  const providers = value['providers'] as { fake: Record<string, unknown> };
  providers.fake['headers'] = { traceparent: `00-${TRACE}-00f067aa0ba902b7-01`, 'x-team': 'blue' };
  const gw = await startGateway({ configValue: value });
  try {
    assert.equal((await postChat(gw, hi)).status, 200);
    const headers = upstream.requests[0]?.headers ?? {};
    assert.equal(headers['x-team'], 'blue');
    const seen = parseTraceparent(headers['traceparent']);
    assert.ok(seen !== undefined);
    assert.notEqual(seen.traceId, TRACE);
    assert.equal(gw.logs.find((l) => l['msg'] === 'request')?.['traceId'], seen.traceId);
  } finally {
    await gw.close();
    await upstream.close();
  }
});

test("a request the key's limits refuse: the admission span names the limit, the server span the 429's code", async () => {
  const upstream = await startFakeUpstream(answer);
  const receiver = await startOtlpReceiver();
  const gw = await startGateway({ keySettings: { limits: { requestsPerMinute: 1 } }, configValue: configWith(upstream.baseUrl, { otlp: { endpoint: receiver.url, scheduleDelayMs: 60_000 } }) });
  try {
    assert.equal((await postChat(gw, hi)).status, 200);
    assert.equal((await postChat(gw, hi, { traceparent: `00-${TRACE}-00f067aa0ba902b7-01` })).status, 429);
  } finally {
    await gw.close();
    await upstream.close();
    await receiver.close();
  }
  const refused = receiver.spans().filter((s) => s.traceId === TRACE);
  assert.deepEqual(refused.map((s) => s.name).sort(), ['POST /v1/chat/completions', 'admission', 'route']);
  const admission = refused.find((s) => s.name === 'admission');
  const server = refused.find((s) => s.kind === 2);
  assert.deepEqual(admission?.attributes, [{ key: 'portcullis.limit', value: { stringValue: 'requests' } }]);
  assert.deepEqual(
    server?.attributes.filter((a) => a.key === 'error.type' || a.key === 'http.response.status_code'),
    [{ key: 'http.response.status_code', value: { intValue: 429 } }, { key: 'error.type', value: { stringValue: 'rate_limit_exceeded' } }],
  );
  // A 4xx leaves the server span's status unset (HTTP semantic conventions).
  assert.equal(server?.status.code, 0);
});

test('a request for an unknown model: the route span ends with the 404 code', async () => {
  const upstream = await startFakeUpstream(answer);
  const receiver = await startOtlpReceiver();
  const gw = await startGateway({ configValue: configWith(upstream.baseUrl, { otlp: { endpoint: receiver.url, scheduleDelayMs: 60_000 } }) });
  try {
    assert.equal((await postChat(gw, { ...hi, model: 'no-such-model' }, { traceparent: `00-${TRACE}-00f067aa0ba902b7-01` })).status, 404);
  } finally {
    await gw.close();
    await upstream.close();
    await receiver.close();
  }
  const spans = receiver.spans();
  assert.deepEqual(spans.map((s) => s.name).sort(), ['POST /v1/chat/completions', 'route']);
  const route = spans.find((s) => s.name === 'route');
  assert.deepEqual(route?.attributes, [{ key: 'error.type', value: { stringValue: 'model_not_found' } }]);
  assert.equal(route?.status.code, 2);
});
