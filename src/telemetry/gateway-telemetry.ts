// The process's tracing, built from the `telemetry` section at start: the
// tracer, and when `telemetry.otlp` is set the batch exporter behind it with
// its resource (service.name, service.version, service.instance.id and the
// configured attributes). Export headers are resolved here (environment,
// headersFile) and go nowhere but the export requests: never into a log line.
import { randomUUID } from 'node:crypto';
import type { GatewayConfig } from '../config/config.ts';
import { resolveOtlpHeaders } from '../config/telemetry-config.ts';
import type { Logger } from '../log/logger.ts';
import { createBatchExporter, type DropReason, type FailedExport } from './batch-exporter.ts';
import { encodeExportRequest } from './otlp-json.ts';
import { createOtlpPost, type ExportPost } from './otlp-http.ts';
import type { Attributes } from './span.ts';
import { createTracer, type Tracer } from './tracer.ts';
import { packageVersion } from '../config/package-version.ts';

/** At most one "trace export failed" line per this many ms. */
const FAILURE_LOG_INTERVAL_MS = 60_000;

export interface TelemetryHooks {
  logger: Logger;
  env: NodeJS.ProcessEnv;
  /** Spans the collector accepted (portcullis_trace_spans_exported_total). */
  onExported?(count: number): void;
  /** Spans given up on, by reason (portcullis_trace_spans_dropped_total). */
  onDropped?(reason: DropReason, count: number): void;
  /** Replaces the HTTP POST (tests). */
  post?: ExportPost;
}

/** Throws ConfigError when an export header's variable or the headersFile is missing. */
export function createGatewayTracer(config: Pick<GatewayConfig, 'source' | 'telemetry'>, hooks: TelemetryHooks): Tracer {
  const { telemetry } = config;
  const otlp = telemetry.otlp;
  if (otlp === null) return createTracer({ ratio: telemetry.samplerRatio });
  const headers = resolveOtlpHeaders(config.source, otlp, hooks.env);
  const version = packageVersion();
  const resource: Attributes = {
    ...telemetry.resourceAttributes,
    'service.name': telemetry.serviceName,
    'service.version': version,
    'service.instance.id': telemetry.resourceAttributes['service.instance.id'] ?? randomUUID(),
    'telemetry.sdk.name': 'portcullis',
    'telemetry.sdk.language': 'nodejs',
    'telemetry.sdk.version': version,
  };
  // The config refuses user:password in the endpoint, but a query string may carry a
  // token (some intakes take one there): the logs show the URL without it.
  const shownEndpoint = endpointForLog(otlp.endpoint);
  let lastFailureLog = Number.NEGATIVE_INFINITY;
  const onFailed = (failure: FailedExport): void => {
    const now = performance.now();
    if (now - lastFailureLog < FAILURE_LOG_INTERVAL_MS) return;
    lastFailureLog = now;
    // Headers are never logged, nor the endpoint's query.
    hooks.logger.warn('trace export failed; spans dropped', { endpoint: shownEndpoint, status: failure.status, failure: failure.failure ?? null, spans: failure.spans });
  };
  const exporter = createBatchExporter({
    ...otlp,
    post: hooks.post ?? createOtlpPost(otlp.endpoint, headers),
    encode: (spans) => encodeExportRequest(spans, resource, version),
    onExported: (count) => hooks.onExported?.(count),
    onDropped: (reason, count) => hooks.onDropped?.(reason, count),
    onFailed,
  });
  hooks.logger.info('trace export on', { endpoint: shownEndpoint, samplerRatio: telemetry.samplerRatio, headers: Object.keys(headers).length });
  return createTracer({ sink: exporter, ratio: telemetry.samplerRatio, shutdown: (deadlineMs) => exporter.shutdown(deadlineMs) });
}

/** The endpoint for a log line: scheme, host, port and path; a query or fragment shows as `?...`. */
function endpointForLog(endpoint: string): string {
  const url = new URL(endpoint);
  return `${url.origin}${url.pathname}${url.search !== '' || url.hash !== '' ? '?...' : ''}`;
}

