// The OTLP/HTTP JSON encoding (src/telemetry/otlp-json.ts) against the
// official encoder (@opentelemetry/otlp-transformer, via ./otlp-decoder.ts):
// every span feature the gateway uses comes out as the official exporter
// would write it, and the check itself fails on a wrong field name or type.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeExportRequest } from '../../src/telemetry/otlp-json.ts';
import { SpanKind, SpanStatusCode, type SpanRecord } from '../../src/telemetry/span.ts';
import { assertOfficialOtlpJson } from './otlp-decoder.ts';

const server: SpanRecord = {
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  spanId: '00f067aa0ba902b7',
  parentSpanId: 'b7ad6b7169203331',
  traceState: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE',
  name: 'POST /v1/chat/completions',
  kind: SpanKind.Server,
  startNs: 1_700_000_000_123_456_000n,
  endNs: 1_700_000_000_987_654_000n,
  attributes: { 'gen_ai.request.model': 'service-chat', 'http.response.status_code': 200, 'portcullis.time_to_first_token_ms': 12.5, 'portcullis.stream': true },
  events: [{ name: 'target_skipped', timeNs: 1_700_000_000_200_000_000n, attributes: { 'portcullis.target': 'a/b' } }],
  status: { code: SpanStatusCode.Error, message: undefined },
  remoteParent: true,
  sampled: true,
};
const root: SpanRecord = { ...server, spanId: '1111111111111111', parentSpanId: undefined, traceState: undefined, kind: SpanKind.Client, events: [], remoteParent: false, status: { code: SpanStatusCode.Unset, message: undefined } };
const resource = { 'service.name': 'portcullis', 'service.version': '0.1.0', 'service.instance.id': 'c2f7c6f2-1111-4a5e-9a56-0d6b0f3a1c11' };

test('spans with every feature the gateway uses encode exactly as the official exporter', () => {
  const body = encodeExportRequest([server, root], resource, '0.1.0');
  const spans = assertOfficialOtlpJson(body);
  assert.equal(spans.length, 2);
  const parsed = JSON.parse(body) as { resourceSpans: [{ scopeSpans: [{ scope: unknown; spans: Array<Record<string, unknown>> }] }] };
  const [first, second] = parsed.resourceSpans[0].scopeSpans[0].spans;
  assert.deepEqual(parsed.resourceSpans[0].scopeSpans[0].scope, { name: 'portcullis', version: '0.1.0' });
  assert.equal(first?.['startTimeUnixNano'], '1700000000123456000');
  assert.equal(first?.['kind'], 2);
  assert.equal(first?.['flags'], 0x301);
  assert.equal(second?.['flags'], 0x101);
  assert.equal(Object.hasOwn(second ?? {}, 'parentSpanId'), false);
});

test('the check fails on a misspelled field, a wrong id encoding or a wrong value type', () => {
  const body = encodeExportRequest([server], resource, '0.1.0');
  const broken = [
    body.replace('"startTimeUnixNano"', '"startTimeUnixNanos"'),
    body.replace('"parentSpanId"', '"parentSpanID"'),
    body.replace('"kind":2', '"kind":"SPAN_KIND_SERVER"'),
    body.replace('"stringValue":"service-chat"', '"stringvalue":"service-chat"'),
    body.replace('"intValue":200', '"intValue":"two hundred"'),
    body.replace('"4bf92f3577b34da6a3ce929d0e0e4736"', '"S/kvNXezTaajzpKdDg5HNg=="'),
    body.replace('"1700000000123456000"', '1700000000123456000'),
    body.replace('"scopeSpans"', '"instrumentationLibrarySpans"'),
    body.replace('"traceState"', '"tracestate"'),
  ];
  for (const text of broken) {
    assert.notEqual(text, body);
    assert.throws(() => assertOfficialOtlpJson(text), assert.AssertionError, text.slice(0, 120));
  }
});
