// The tracer: places each request in a trace (the client's, or a new one),
// decides sampling, and starts the server span of a trace that is recorded,
// handing its spans to the exporter. One per process. With no exporter
// configured it still continues the client's trace and propagates it; it only
// records nothing, and then nothing needs a span.
import type { IncomingHttpHeaders } from 'node:http';
import { startSpan, SpanKind, type Attributes, type Span, type SpanSink } from './span.ts';
import { newTraceId, parseTraceparent, parseTracestate } from './trace-context.ts';

/** Where a request stands in its trace, decided once as it arrives. */
export interface TraceContext {
  readonly traceId: string;
  /** The client's span, when its `traceparent` was valid; undefined for a new trace. */
  readonly parentSpanId: string | undefined;
  /** The client's validated tracestate, passed on unchanged. */
  readonly traceState: string | undefined;
  /** The sampled flag passed upstream. */
  readonly sampled: boolean;
  /** Spans of this request are kept: sampled, and an exporter is on. When false, make none. */
  readonly recorded: boolean;
}

export interface Tracer {
  /** The request's trace: the client's when its `traceparent` is valid, else a new one. */
  traceOf(headers: IncomingHttpHeaders): TraceContext;
  /** The server span of a request, a child of the client's span when there is one. Call it only when
   * `context.recorded`: the attributes of a span nothing records are work for nothing. */
  startServerSpan(context: TraceContext, name: string, attributes?: Attributes): Span;
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
    traceOf(headers) {
      const parent = parseTraceparent(headers['traceparent']);
      if (parent === undefined) {
        const traceId = newTraceId();
        // A new root: sampled by ratio when an exporter records it, else not
        // (nothing upstream of us recorded, and neither do we).
        const sampled = sink !== undefined && sampledByRatio(traceId, options.ratio);
        return { traceId, parentSpanId: undefined, traceState: undefined, sampled, recorded: sampled };
      }
      // Parent-based: the client's sampled flag decides, recorded or not here.
      const traceState = parseTracestate(headers['tracestate']);
      return { traceId: parent.traceId, parentSpanId: parent.parentId, traceState, sampled: parent.sampled, recorded: parent.sampled && sink !== undefined };
    },
    startServerSpan(context, name, attributes) {
      const { traceId, parentSpanId, traceState, sampled } = context;
      // Recorded when sampled and the sink is still there (none once shut down).
      return startSpan({ traceId, parentSpanId, traceState, remoteParent: parentSpanId !== undefined, sampled, name, kind: SpanKind.Server, attributes }, sink);
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
