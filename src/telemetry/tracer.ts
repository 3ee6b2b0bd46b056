// The tracer: starts a request's server span from the client's trace context
// (or a new trace), decides sampling, and hands recorded spans to the exporter.
// One per process. With no exporter configured it still continues the
// client's trace and propagates it; it only records nothing.
import type { IncomingHttpHeaders } from 'node:http';
import { startSpan, SpanKind, type Attributes, type Span, type SpanSink } from './span.ts';
import { newTraceId, parseTraceparent, parseTracestate } from './trace-context.ts';

export interface Tracer {
  /** The server span of one incoming request, a child of the client's `traceparent` when it is valid. */
  startServerSpan(headers: IncomingHttpHeaders, name: string, attributes?: Attributes): Span;
  /** Sends what is queued, within `deadlineMs`; then the tracer records nothing more. */
  shutdown(deadlineMs: number): Promise<void>;
}

interface TracerOptions {
  /** The exporter's queue; none: nothing is recorded (trace context still propagates). */
  sink?: SpanSink | undefined;
  /** Share of new traces (no sampled parent decision) recorded, 0 to 1. */
  ratio: number;
  /** Called at shutdown: the exporter's final flush. */
  shutdown?: ((deadlineMs: number) => Promise<void>) | undefined;
}

/** A tracer that records nothing: trace context only. */
export function createContextOnlyTracer(): Tracer {
  return createTracer({ ratio: 0 });
}

export function createTracer(options: TracerOptions): Tracer {
  let sink = options.sink;
  return {
    startServerSpan(headers, name, attributes) {
      const parent = parseTraceparent(headers['traceparent']);
      if (parent === undefined) {
        const traceId = newTraceId();
        // A new root: sampled by ratio when an exporter records it, else not
        // (nothing upstream of us recorded, and neither do we).
        const sampled = sink !== undefined && sampledByRatio(traceId, options.ratio);
        return startSpan({ traceId, parentSpanId: undefined, traceState: undefined, remoteParent: false, sampled, name, kind: SpanKind.Server, attributes }, sink);
      }
      // Parent-based: the client's sampled flag decides, recorded or not here.
      const traceState = parseTracestate(headers['tracestate']);
      return startSpan({ traceId: parent.traceId, parentSpanId: parent.parentId, traceState, remoteParent: true, sampled: parent.sampled, name, kind: SpanKind.Server, attributes }, sink);
    },
    async shutdown(deadlineMs) {
      sink = undefined;
      await options.shutdown?.(deadlineMs);
    },
  };
}

/**
 * The trace-id ratio sampler: the trace id's last 52 bits (random by W3C
 * Trace Context level 2, which makes the last 56 random; 52 fit a double
 * exactly) read as a fraction, below `ratio`. Deterministic per trace id, so
 * every instance that sees the same new trace decides alike.
 */
export function sampledByRatio(traceId: string, ratio: number): boolean {
  if (ratio >= 1) return true;
  if (ratio <= 0) return false;
  const random = Number.parseInt(traceId.slice(19), 16) / 2 ** 52;
  return random < ratio;
}
