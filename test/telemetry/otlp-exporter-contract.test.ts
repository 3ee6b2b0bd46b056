// The built-in OTLP/HTTP export held to the trace exporter contract that host
// exporters pass (src/testing/trace-exporter-contract.ts): each batch goes as
// the gateway's batch exporter sends it without a host exporter (its encode,
// encodeExportRequest, then its post, createOtlpPost) to a collector on port 0,
// and what the collector received is read back as spans, so the contract's
// "kept as given" holds over the wire. Each request the collector took is also
// the one the official OpenTelemetry encoder makes of the same spans. What the
// built-in adds beyond a host's exporter (retries, Retry-After, partial
// success) is in batch-exporter.test.ts and otlp-http.test.ts.
import { after } from 'node:test';
import type { SpanAttributes, SpanData, TraceExporter } from '../../src/api/ports.ts';
import { createOtlpPost } from '../../src/telemetry/otlp-http.ts';
import { encodeExportRequest } from '../../src/telemetry/otlp-json.ts';
import { runTraceExporterContract } from '../../src/testing/trace-exporter-contract.ts';
import { assertOfficialOtlpJson } from './otlp-decoder.ts';
import { startOtlpReceiver, type OtlpKeyValue, type OtlpReceiver, type OtlpSpan } from './otlp-receiver.ts';

const RESOURCE = { 'service.name': 'portcullis', 'service.version': '0.0.0-test' };
const EXPORT_TIMEOUT_MS = 10_000;
/** OTLP's span flags: bit 0 sampled (W3C trace-flags), bit 9 the parent is remote. */
const FLAG_SAMPLED = 0x1;
const FLAG_IS_REMOTE = 0x200;

const collectors: OtlpReceiver[] = [];
after(() => Promise.all(collectors.map((collector) => collector.close())));

function attributesOf(list: readonly OtlpKeyValue[]): SpanAttributes {
  const out: SpanAttributes = {};
  for (const { key, value } of list) {
    const v = value.stringValue ?? value.boolValue ?? value.doubleValue ?? (value.intValue === undefined ? undefined : Number(value.intValue));
    if (v === undefined) throw new Error(`attribute ${key} has no value the gateway sends`);
    out[key] = v;
  }
  return out;
}

/** A span the collector received, as the SpanData it was encoded from. */
function spanDataOf(span: OtlpSpan): SpanData {
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId,
    traceState: span.traceState,
    name: span.name,
    kind: span.kind as SpanData['kind'],
    startNs: BigInt(span.startTimeUnixNano),
    endNs: BigInt(span.endTimeUnixNano),
    attributes: attributesOf(span.attributes),
    events: span.events.map((event) => ({ name: event.name, timeNs: BigInt(event.timeUnixNano), attributes: attributesOf(event.attributes) })),
    status: { code: span.status.code as SpanData['status']['code'], message: span.status.message },
    remoteParent: (span.flags & FLAG_IS_REMOTE) !== 0,
    sampled: (span.flags & FLAG_SAMPLED) !== 0,
  };
}

runTraceExporterContract('the built-in OTLP/HTTP export', async () => {
  const collector = await startOtlpReceiver();
  collectors.push(collector);
  const post = createOtlpPost(collector.url, {});
  const exporter: TraceExporter = {
    async export(spans) {
      const answer = await post(encodeExportRequest(spans, RESOURCE, '0.0.0-test'), EXPORT_TIMEOUT_MS);
      if (answer.status < 200 || answer.status > 299) throw new Error(`the collector answered ${answer.status} (${answer.failure ?? 'no failure'})`);
    },
  };
  return {
    exporter,
    exported: () => {
      for (const received of collector.exports) assertOfficialOtlpJson(received.text);
      return collector.spans().map(spanDataOf);
    },
  };
});
