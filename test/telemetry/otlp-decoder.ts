// A strict reader of OTLP/HTTP JSON trace exports, checked against the
// official encoder: each span of the request is read field by field by its
// OTLP name (an unknown or misspelled field, a wrong id length, a time that is
// not a decimal string of nanoseconds, an enum out of range all fail), turned
// into the SDK's ReadableSpan shape, and encoded again with
// @opentelemetry/otlp-transformer's JsonTraceSerializer (what the official
// OTLP/HTTP JSON exporter sends). The two bodies must be equal.
import assert from 'node:assert/strict';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

type Json = Record<string, unknown>;

const HEX_TRACE = /^[0-9a-f]{32}$/;
const HEX_SPAN = /^[0-9a-f]{16}$/;
const NANOS = /^\d{1,20}$/;

function object(value: unknown, at: string, allowed: readonly string[]): Json {
  assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value), `${at} must be an object`);
  for (const key of Object.keys(value)) assert.ok(allowed.includes(key), `${at}.${key} is not a field of OTLP (allowed: ${allowed.join(', ')})`);
  return value as Json;
}

function array(value: unknown, at: string): unknown[] {
  assert.ok(Array.isArray(value), `${at} must be an array`);
  return value;
}

function hrTime(value: unknown, at: string): [number, number] {
  assert.ok(typeof value === 'string' && NANOS.test(value), `${at} must be nanoseconds as a decimal string`);
  const ns = BigInt(value);
  return [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];
}

function anyValue(value: unknown, at: string): string | number | boolean {
  const v = object(value, at, ['stringValue', 'intValue', 'doubleValue', 'boolValue']);
  const keys = Object.keys(v);
  assert.equal(keys.length, 1, `${at} must hold exactly one value`);
  if (typeof v['stringValue'] === 'string') return v['stringValue'];
  if (typeof v['boolValue'] === 'boolean') return v['boolValue'];
  if (typeof v['intValue'] === 'number' && Number.isSafeInteger(v['intValue'])) return v['intValue'];
  if (typeof v['doubleValue'] === 'number' && !Number.isInteger(v['doubleValue'])) return v['doubleValue'];
  assert.fail(`${at} has a value of the wrong JSON type: ${JSON.stringify(v)}`);
}

function attributes(value: unknown, at: string): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  array(value, at).forEach((kv, i) => {
    const o = object(kv, `${at}[${i}]`, ['key', 'value']);
    assert.equal(typeof o['key'], 'string', `${at}[${i}].key`);
    out[o['key'] as string] = anyValue(o['value'], `${at}[${i}].value`);
  });
  return out;
}

const SPAN_FIELDS = [
  'traceId', 'spanId', 'parentSpanId', 'traceState', 'name', 'kind', 'startTimeUnixNano', 'endTimeUnixNano', 'attributes',
  'droppedAttributesCount', 'events', 'droppedEventsCount', 'status', 'links', 'droppedLinksCount', 'flags',
];

/** The request decoded into ReadableSpans, or an assertion naming the first field that is not OTLP. */
export function decodeOtlpJson(text: string): ReadableSpan[] {
  const root = object(JSON.parse(text), 'request', ['resourceSpans']);
  const spans: ReadableSpan[] = [];
  array(root['resourceSpans'], 'resourceSpans').forEach((rs, r) => {
    const at = `resourceSpans[${r}]`;
    const resourceSpans = object(rs, at, ['resource', 'scopeSpans', 'schemaUrl']);
    const resourceJson = object(resourceSpans['resource'], `${at}.resource`, ['attributes', 'droppedAttributesCount']);
    const resource = { attributes: attributes(resourceJson['attributes'], `${at}.resource.attributes`) };
    array(resourceSpans['scopeSpans'], `${at}.scopeSpans`).forEach((ss, s) => {
      const sat = `${at}.scopeSpans[${s}]`;
      const scopeSpans = object(ss, sat, ['scope', 'spans', 'schemaUrl']);
      const scope = object(scopeSpans['scope'], `${sat}.scope`, ['name', 'version']);
      array(scopeSpans['spans'], `${sat}.spans`).forEach((sp, i) => {
        const pat = `${sat}.spans[${i}]`;
        const span = object(sp, pat, SPAN_FIELDS);
        assert.match(String(span['traceId']), HEX_TRACE, `${pat}.traceId`);
        assert.match(String(span['spanId']), HEX_SPAN, `${pat}.spanId`);
        if (span['parentSpanId'] !== undefined) assert.match(String(span['parentSpanId']), HEX_SPAN, `${pat}.parentSpanId`);
        assert.ok(Number.isInteger(span['kind']) && (span['kind'] as number) >= 1 && (span['kind'] as number) <= 5, `${pat}.kind must be a SpanKind number`);
        const status = object(span['status'], `${pat}.status`, ['code', 'message']);
        assert.ok([0, 1, 2].includes(status['code'] as number), `${pat}.status.code`);
        const flags = span['flags'] as number;
        const traceState = span['traceState'] as string | undefined;
        spans.push({
          name: span['name'] as string,
          kind: (span['kind'] as number) - 1,
          spanContext: () => ({ traceId: span['traceId'] as string, spanId: span['spanId'] as string, traceFlags: flags & 0xff, traceState: traceState === undefined ? undefined : { serialize: () => traceState } }),
          parentSpanContext: span['parentSpanId'] === undefined ? undefined : { traceId: span['traceId'] as string, spanId: span['parentSpanId'] as string, traceFlags: 0, isRemote: (flags & 0x200) !== 0 },
          startTime: hrTime(span['startTimeUnixNano'], `${pat}.startTimeUnixNano`),
          endTime: hrTime(span['endTimeUnixNano'], `${pat}.endTimeUnixNano`),
          status: { code: status['code'] as number, message: status['message'] as string | undefined },
          attributes: attributes(span['attributes'], `${pat}.attributes`),
          links: array(span['links'], `${pat}.links`).map(() => assert.fail('no links expected')),
          events: array(span['events'], `${pat}.events`).map((e, j) => {
            const event = object(e, `${pat}.events[${j}]`, ['attributes', 'name', 'timeUnixNano', 'droppedAttributesCount']);
            return { name: event['name'] as string, time: hrTime(event['timeUnixNano'], `${pat}.events[${j}].timeUnixNano`), attributes: attributes(event['attributes'], `${pat}.events[${j}].attributes`), droppedAttributesCount: event['droppedAttributesCount'] as number };
          }),
          duration: [0, 0],
          ended: true,
          resource,
          instrumentationScope: { name: scope['name'] as string, version: scope['version'] as string },
          droppedAttributesCount: span['droppedAttributesCount'] as number,
          droppedEventsCount: span['droppedEventsCount'] as number,
          droppedLinksCount: span['droppedLinksCount'] as number,
        } as unknown as ReadableSpan);
      });
    });
  });
  return spans;
}

/** Decodes `text` and asserts that the official encoder makes exactly the same request of it. */
export function assertOfficialOtlpJson(text: string): ReadableSpan[] {
  const spans = decodeOtlpJson(text);
  const official = JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans))) as unknown;
  assert.deepEqual(JSON.parse(text), official);
  return spans;
}
