// A host's TraceExporter: held to the contract (a host-written one, public types
// only), and behind the gateway's batching: a request's spans reach it by
// shutdown without telemetry.otlp in the config; a rejecting exporter's batch is
// counted as dropped and logged without the error's text.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SpanData, TraceExporter } from '../../src/api/ports.ts';
import { DEFAULT_TELEMETRY } from '../../src/config/telemetry-config.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createGatewayTracer } from '../../src/telemetry/gateway-telemetry.ts';
import { runTraceExporterContract } from '../../src/testing/trace-exporter-contract.ts';
import { postChat, startPortsGateway } from './ports-harness.ts';

/** As a host writes one: the spans into its own pipeline (here an array), and a shutdown that flushes it. */
function hostExporter(): { exporter: TraceExporter; spans: SpanData[]; shutdowns: number } {
  const state = { spans: [] as SpanData[], shutdowns: 0 };
  return {
    get spans() {
      return state.spans;
    },
    get shutdowns() {
      return state.shutdowns;
    },
    exporter: {
      async export(batch) {
        state.spans.push(...batch);
      },
      async shutdown() {
        state.shutdowns++;
      },
    },
  };
}

runTraceExporterContract('a host pipeline', () => {
  const host = hostExporter();
  return { exporter: host.exporter, exported: () => host.spans };
});

describe('an embedded gateway with a host trace exporter', () => {
  test("a request's server span reaches the exporter by close, and its shutdown is called once", async () => {
    const host = hostExporter();
    const gw = await startPortsGateway({ traceExporter: host.exporter });
    const { key } = await gw.state.keys.create('client');
    assert.equal((await postChat(gw, key)).status, 200);
    await gw.close();
    const server = host.spans.find((span) => span.kind === 2);
    assert.equal(server?.name, 'POST /v1/chat/completions');
    assert.equal(server?.attributes['http.response.status_code'], 200);
    assert.equal(host.shutdowns, 1);
  });
});

describe('a rejecting host exporter', () => {
  test('its batch is counted as dropped (export_failed) and logged without the error text', async () => {
    const lines: Record<string, unknown>[] = [];
    const dropped: [string, number][] = [];
    const logger = createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    const exporter: TraceExporter = { export: () => Promise.reject(new Error('intake refused token sk-secret-value')) };
    const tracer = createGatewayTracer({ source: null, telemetry: DEFAULT_TELEMETRY }, { logger, env: {}, exporter, onDropped: (reason, count) => dropped.push([reason, count]), onExported: () => assert.fail('nothing was exported') });
    const context = tracer.traceOf({});
    tracer.startServerSpan(context, 'POST /v1/chat/completions').end();
    await tracer.shutdown(5000);
    assert.deepEqual(dropped, [['export_failed', 1]]);
    const failed = lines.filter((line) => line['msg'] === 'trace export failed; spans dropped');
    assert.deepEqual(failed.map((line) => [line['endpoint'], line['failure'], line['spans']]), [['host exporter', 'rejected (Error)', 1]]);
    assert.equal(JSON.stringify(lines).includes('sk-secret-value'), false);
  });
});
