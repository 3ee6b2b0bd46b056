// Spans as an OTLP/HTTP JSON export request (ExportTraceServiceRequest,
// https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): the
// protobuf messages in proto3's JSON mapping, with OTLP's exceptions: trace
// and span ids are hex strings, not base64, and enums are integers. JSON, not
// binary protobuf, because it needs no encoder beyond JSON.stringify (the
// gateway has no runtime dependency) and every OTLP/HTTP receiver must accept
// it. The shape matches the official JavaScript exporter's JSON field for
// field; test/telemetry/otlp-decode.test.ts holds the two equal.
import type { AttributeValue, Attributes, SpanRecord } from './span.ts';

/** The instrumentation scope every gateway span is reported under. */
export const SCOPE_NAME = 'portcullis';

/** OTLP's span flags: the low byte is W3C trace-flags; bit 8 says bit 9 (remote parent) is known. */
const FLAGS_HAS_IS_REMOTE = 0x100;
const FLAGS_IS_REMOTE = 0x200;

interface OtlpKeyValue {
  key: string;
  value: { stringValue: string } | { intValue: number } | { doubleValue: number } | { boolValue: boolean };
}

/** The export request body for `spans`, all under one resource and one scope. */
export function encodeExportRequest(spans: readonly SpanRecord[], resource: Attributes, scopeVersion: string): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: keyValues(resource), droppedAttributesCount: 0 },
        scopeSpans: [{ scope: { name: SCOPE_NAME, version: scopeVersion }, spans: spans.map(encodeSpan) }],
      },
    ],
  });
}

function encodeSpan(span: SpanRecord): Record<string, unknown> {
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    // Absent (undefined drops the key) for a root span, as the official exporter.
    parentSpanId: span.parentSpanId,
    traceState: span.traceState,
    name: span.name,
    kind: span.kind,
    startTimeUnixNano: span.startNs.toString(),
    endTimeUnixNano: span.endNs.toString(),
    attributes: keyValues(span.attributes),
    droppedAttributesCount: 0,
    events: span.events.map((event) => ({
      attributes: keyValues(event.attributes),
      name: event.name,
      timeUnixNano: event.timeNs.toString(),
      droppedAttributesCount: 0,
    })),
    droppedEventsCount: 0,
    status: { code: span.status.code, message: span.status.message },
    links: [],
    droppedLinksCount: 0,
    flags: (span.sampled ? 1 : 0) | FLAGS_HAS_IS_REMOTE | (span.remoteParent ? FLAGS_IS_REMOTE : 0),
  };
}

function keyValues(attributes: Attributes): OtlpKeyValue[] {
  return Object.entries(attributes).map(([key, value]) => ({ key, value: anyValue(value) }));
}

/** proto3 JSON allows int64 as a number or a string; numbers, like the official exporter (the gateway's counts are far below 2^53). */
function anyValue(value: AttributeValue): OtlpKeyValue['value'] {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  return Number.isInteger(value) ? { intValue: value } : { doubleValue: value };
}
