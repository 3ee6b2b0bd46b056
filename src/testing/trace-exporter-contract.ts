// The trace exporter port (TraceExporter in src/api/ports.ts): where the gateway's
// batches of finished spans go. An export resolves once the batch is taken, the
// spans kept as given (ids, nanosecond bigint times, attributes, events, status);
// behind the gateway's tracer every span of a request reaches it by shutdown,
// and shutdown, when the exporter has one, is called once, last.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SpanData, TraceExporter } from '../api/ports.ts';
import { DEFAULT_TELEMETRY } from '../config/telemetry-config.ts';
import type { Logger } from '../log/logger.ts';
import { createGatewayTracer } from '../telemetry/gateway-telemetry.ts';

/** The exporter to hold to the contract, and how to read back the spans it took. */
export interface TraceExporterUnderTest {
  exporter: TraceExporter;
  /** The spans it took, in order. */
  exported(): readonly SpanData[] | Promise<readonly SpanData[]>;
}

const SILENT: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

function sampleSpan(name: string, spanId: string): SpanData {
  return {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId,
    parentSpanId: spanId === 'b7ad6b7169203331' ? undefined : 'b7ad6b7169203331',
    traceState: undefined,
    name,
    kind: 2,
    startNs: 1_795_000_000_000_000_000n,
    endNs: 1_795_000_000_250_000_000n,
    attributes: { 'http.request.method': 'POST', 'http.response.status_code': 200, 'portcullis.stream': false },
    events: [{ name: 'first_byte', timeNs: 1_795_000_000_100_000_000n, attributes: {} }],
    status: { code: 1, message: undefined },
    remoteParent: false,
    sampled: true,
  };
}

/**
 * Registers the trace exporter cases as node:test tests in a describe block named after `name`:
 * spans kept as given, every span of a request exported by shutdown behind the
 * gateway's tracer, and shutdown (when there is one) called once, last.
 */
export function runTraceExporterContract(name: string, make: () => TraceExporterUnderTest | Promise<TraceExporterUnderTest>): void {
  describe(`trace exporter contract: ${name}`, () => {
    test('an export resolves and keeps the spans as given', async () => {
      const { exporter, exported } = await make();
      const batch = [sampleSpan('POST /v1/chat/completions', 'b7ad6b7169203331'), sampleSpan('chat upstream', '00f067aa0ba902b7')];
      await exporter.export(batch);
      assert.deepEqual(await exported(), batch);
    });

    test('the batch given is not changed', async () => {
      const { exporter } = await make();
      const batch = Object.freeze([Object.freeze(sampleSpan('POST /v1/embeddings', 'b7ad6b7169203331'))]);
      await exporter.export(batch);
      assert.deepEqual(batch, [sampleSpan('POST /v1/embeddings', 'b7ad6b7169203331')]);
    });

    test("behind the gateway's tracer: a request's spans arrive by shutdown", async () => {
      const { exporter, exported } = await make();
      const tracer = createGatewayTracer({ source: null, telemetry: DEFAULT_TELEMETRY }, { logger: SILENT, env: {}, exporter });
      const context = tracer.traceOf({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
      assert.equal(context.recorded, true);
      const server = tracer.startServerSpan(context, 'POST /v1/chat/completions', { 'http.request.method': 'POST' });
      const upstream = server.child('chat upstream', 3);
      upstream.setOk();
      upstream.end();
      server.end();
      await tracer.shutdown(5000);
      const spans = await exported();
      assert.deepEqual(spans.map((s) => [s.traceId, s.name, s.kind]), [
        ['0af7651916cd43dd8448eb211c80319c', 'chat upstream', 3],
        ['0af7651916cd43dd8448eb211c80319c', 'POST /v1/chat/completions', 2],
      ]);
      assert.equal(spans[0]?.parentSpanId, spans[1]?.spanId);
    });
  });
}
