// Spans as the gateway records them: ids, timing, attributes, events and a
// status, handed once to a sink when they end. A span that is not sampled (or
// with no exporter configured) records nothing, but still has its ids, so the
// trace context reaches the upstream either way.
import { formatTraceparent, newSpanId } from './trace-context.ts';

/** OTLP's Span.SpanKind values. */
export const SpanKind = { Internal: 1, Server: 2, Client: 3 } as const;
export type SpanKind = (typeof SpanKind)[keyof typeof SpanKind];

/** OTLP's Status.StatusCode values. */
export const SpanStatusCode = { Unset: 0, Ok: 1, Error: 2 } as const;
export type SpanStatusCode = (typeof SpanStatusCode)[keyof typeof SpanStatusCode];

export type AttributeValue = string | number | boolean;
export type Attributes = Record<string, AttributeValue>;

/** Bounds per span: a span cannot grow without limit, whatever calls it. */
const MAX_ATTRIBUTES = 64;
const MAX_EVENTS = 16;
const MAX_STRING_LENGTH = 256;

export interface SpanEvent {
  name: string;
  timeNs: bigint;
  attributes: Attributes;
}

/** A finished span, as the exporter encodes it. */
export interface SpanRecord {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  traceState: string | undefined;
  name: string;
  kind: SpanKind;
  startNs: bigint;
  endNs: bigint;
  attributes: Attributes;
  events: SpanEvent[];
  status: { code: SpanStatusCode; message: string | undefined };
  /** The parent's context came from the client's traceparent. */
  remoteParent: boolean;
  sampled: boolean;
}

/** Where ended, recorded spans go (the batch exporter). */
export interface SpanSink {
  add(span: SpanRecord): void;
}

export interface Span {
  readonly traceId: string;
  readonly spanId: string;
  readonly sampled: boolean;
  /** The client's validated tracestate, passed on unchanged. */
  readonly traceState: string | undefined;
  /** False when nothing is kept: not sampled, or no exporter. */
  readonly recording: boolean;
  setAttribute(key: string, value: AttributeValue | undefined | null): void;
  addEvent(name: string, attributes?: Attributes): void;
  /** Status Error with `type` as `error.type` (a catalogue code or cause; never a message with text from a client). */
  setError(type: string): void;
  setOk(): void;
  /** Idempotent: only the first call hands the span to the sink. */
  end(): void;
  readonly ended: boolean;
  /** A child span, started now. */
  child(name: string, kind: SpanKind, attributes?: Attributes): Span;
  /** This span as the parent in a `traceparent` header. */
  traceparent(): string;
}

export interface SpanStart {
  traceId: string;
  parentSpanId: string | undefined;
  traceState: string | undefined;
  remoteParent: boolean;
  sampled: boolean;
  name: string;
  kind: SpanKind;
  attributes?: Attributes | undefined;
}

/** Epoch nanoseconds now, from the monotonic clock (microsecond resolution). */
export function nowNs(): bigint {
  return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000)) * 1000n;
}

/** A span started now; it records when `sink` is given and the trace is sampled. */
export function startSpan(start: SpanStart, sink: SpanSink | undefined): Span {
  const spanId = newSpanId();
  const recording = sink !== undefined && start.sampled;
  const attributes: Attributes = {};
  const events: SpanEvent[] = [];
  const status: SpanRecord['status'] = { code: SpanStatusCode.Unset, message: undefined };
  const startNs = recording ? nowNs() : 0n;
  let ended = false;

  const setAttribute = (key: string, value: AttributeValue | undefined | null): void => {
    if (!recording || ended || value === undefined || value === null) return;
    if (!(key in attributes) && Object.keys(attributes).length >= MAX_ATTRIBUTES) return;
    attributes[key] = typeof value === 'string' && value.length > MAX_STRING_LENGTH ? value.slice(0, MAX_STRING_LENGTH) : value;
  };
  for (const [key, value] of Object.entries(start.attributes ?? {})) setAttribute(key, value);

  const span: Span = {
    traceId: start.traceId,
    spanId,
    sampled: start.sampled,
    traceState: start.traceState,
    recording,
    setAttribute,
    addEvent(name, eventAttributes = {}) {
      if (!recording || ended || events.length >= MAX_EVENTS) return;
      events.push({ name, timeNs: nowNs(), attributes: eventAttributes });
    },
    setError(type) {
      setAttribute('error.type', type);
      if (recording && !ended) status.code = SpanStatusCode.Error;
    },
    setOk() {
      if (recording && !ended && status.code === SpanStatusCode.Unset) status.code = SpanStatusCode.Ok;
    },
    end() {
      if (ended) return;
      ended = true;
      if (!recording || sink === undefined) return;
      sink.add({
        traceId: start.traceId,
        spanId,
        parentSpanId: start.parentSpanId,
        traceState: start.traceState,
        name: start.name,
        kind: start.kind,
        startNs,
        endNs: nowNs(),
        attributes,
        events,
        status,
        remoteParent: start.remoteParent,
        sampled: start.sampled,
      });
    },
    get ended() {
      return ended;
    },
    child(name, kind, childAttributes) {
      return startSpan(
        { traceId: start.traceId, parentSpanId: spanId, traceState: start.traceState, remoteParent: false, sampled: start.sampled, name, kind, attributes: childAttributes },
        sink,
      );
    },
    traceparent: () => formatTraceparent(start.traceId, spanId, start.sampled),
  };
  return span;
}
