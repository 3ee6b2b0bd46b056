// The process's tracing, built from the `telemetry` section at start: the
// tracer, and when `telemetry.otlp` is set the batch exporter behind it with
// its resource (service.name, service.version, service.instance.id and the
// configured attributes). Export headers are resolved here (environment,
// headersFile) and go nowhere but the export requests: never into a log line.
// A host's TraceExporter takes the OTLP POST's place behind the same batching,
// queue limits and shutdown drain (telemetry.otlp's settings, or their defaults).
import { randomUUID } from 'node:crypto';
import type { GatewayConfig } from '../config/config.ts';
import { resolveOtlpHeaders } from '../config/telemetry-config.ts';
import type { Logger } from '../log/logger.ts';
import { createBatchExporter, type DropReason, type FailedExport } from './batch-exporter.ts';
import { encodeExportRequest } from './otlp-json.ts';
import { createOtlpPost, type ExportAnswer, type ExportPost } from './otlp-http.ts';
import type { Attributes, SpanRecord } from './span.ts';
import type { SpanData, TraceExporter } from '../api/ports.ts';
import type { OtlpExportConfig } from '../config/telemetry-config.ts';
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
  /** A host's exporter in place of the OTLP POST, with or without telemetry.otlp. */
  exporter?: TraceExporter | undefined;
}

/** The batching of a host's exporter without telemetry.otlp: OTLP's defaults, and no retries (the host's exporter has its own). */
const HOST_EXPORT_DEFAULTS = { timeoutMs: 10_000, maxQueueSize: 2048, maxExportBatchSize: 512, scheduleDelayMs: 5000, maxRetries: 0 } as const;

/** How long the shutdown's last export may take: telemetry.otlp.timeoutMs, or the host exporter's default. */
export function traceShutdownMs(config: Pick<GatewayConfig, 'telemetry'>): number {
  return config.telemetry.otlp?.timeoutMs ?? HOST_EXPORT_DEFAULTS.timeoutMs;
}

/** Throws ConfigError when an export header's variable or the headersFile is missing. */
export function createGatewayTracer(config: Pick<GatewayConfig, 'source' | 'telemetry'>, hooks: TelemetryHooks): Tracer {
  const { telemetry } = config;
  const otlp = telemetry.otlp;
  if (hooks.exporter !== undefined) return hostExportTracer(hooks.exporter, otlp, telemetry.samplerRatio, hooks);
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


/**
 * The tracer behind a host's exporter. An export that rejects or outlasts timeoutMs counts
 * its batch as failed (retried maxRetries times; logged at most once a minute); shutdown
 * drains the queue within the deadline, then calls the exporter's shutdown within what is left.
 */
function hostExportTracer(exporter: TraceExporter, otlp: OtlpExportConfig | null, ratio: number, hooks: TelemetryHooks): Tracer {
  const settings = otlp === null ? HOST_EXPORT_DEFAULTS : otlp;
  let lastFailureLog = Number.NEGATIVE_INFINITY;
  const batches = createBatchExporter<readonly SpanRecord[]>({
    timeoutMs: settings.timeoutMs,
    maxQueueSize: settings.maxQueueSize,
    maxExportBatchSize: settings.maxExportBatchSize,
    scheduleDelayMs: settings.scheduleDelayMs,
    maxRetries: settings.maxRetries,
    encode: (spans) => spans,
    post: (spans, timeoutMs) => exportWithin(exporter, spans, timeoutMs),
    onExported: (count) => hooks.onExported?.(count),
    onDropped: (reason, count) => hooks.onDropped?.(reason, count),
    onFailed: (failure) => {
      const now = performance.now();
      if (now - lastFailureLog < FAILURE_LOG_INTERVAL_MS) return;
      lastFailureLog = now;
      hooks.logger.warn('trace export failed; spans dropped', { endpoint: 'host exporter', status: null, failure: failure.failure ?? null, spans: failure.spans });
    },
  });
  return createTracer({
    sink: batches,
    ratio,
    shutdown: async (deadlineMs) => {
      const until = performance.now() + deadlineMs;
      await batches.shutdown(deadlineMs);
      if (exporter.shutdown === undefined) return;
      const answer = await exportWithin({ export: () => exporter.shutdown?.() ?? Promise.resolve() }, [], Math.max(0, until - performance.now()));
      if (answer.status !== 200) hooks.logger.warn('the trace exporter\'s shutdown failed', { failure: answer.failure ?? null });
    },
  });
}

/** One call of the host's export as the batch exporter sees an answer: 200, or 0 with why (never the error's text: it may hold anything). */
async function exportWithin(exporter: Pick<TraceExporter, 'export'>, spans: readonly SpanData[], timeoutMs: number): Promise<ExportAnswer> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<ExportAnswer>((resolve) => {
    timer = setTimeout(() => resolve({ status: 0, retryAfterMs: undefined, rejectedSpans: 0, failure: 'timeout' }), timeoutMs);
    timer.unref();
  });
  const exported = (async (): Promise<ExportAnswer> => {
    try {
      await exporter.export(spans);
      return { status: 200, retryAfterMs: undefined, rejectedSpans: 0, failure: undefined };
    } catch (error) {
      return { status: 0, retryAfterMs: undefined, rejectedSpans: 0, failure: error instanceof Error ? `rejected (${error.name})` : 'rejected' };
    }
  })();
  try {
    return await Promise.race([exported, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
