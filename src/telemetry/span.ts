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
  /** Status Error with `type` as `error.type` (a catalogue code or cause; never a message with text from a client),
   * and `reason` as the status message (the gateway's own words, never a client's or an upstream's text). */
  setError(type: string, reason?: string): void;
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
  return new GatewaySpan(start, sink);
}

/**
 * A class rather than an object of closures: a request makes several spans,
 * and one that records nothing must cost next to nothing (ids, no clock read,
 * no attribute copies).
 */
class GatewaySpan implements Span {
  readonly traceId: string;
  readonly spanId: string;
  readonly sampled: boolean;
  readonly traceState: string | undefined;
  readonly recording: boolean;
  readonly #start: SpanStart;
  readonly #sink: SpanSink | undefined;
  readonly #startNs: bigint;
  #attributes: Attributes | undefined;
  #events: SpanEvent[] | undefined;
  #status: SpanStatusCode = SpanStatusCode.Unset;
  #statusMessage: string | undefined = undefined;
  #ended = false;

  constructor(start: SpanStart, sink: SpanSink | undefined) {
    this.traceId = start.traceId;
    this.spanId = newSpanId();
    this.sampled = start.sampled;
    this.traceState = start.traceState;
    this.recording = sink !== undefined && start.sampled;
    this.#start = start;
    this.#sink = sink;
    this.#startNs = this.recording ? nowNs() : 0n;
    if (this.recording && start.attributes !== undefined) {
      for (const key of Object.keys(start.attributes)) this.setAttribute(key, start.attributes[key]);
    }
  }

  get ended(): boolean {
    return this.#ended;
  }

  setAttribute(key: string, value: AttributeValue | undefined | null): void {
    if (!this.recording || this.#ended || value === undefined || value === null) return;
    const attributes = (this.#attributes ??= {});
    if (!(key in attributes) && Object.keys(attributes).length >= MAX_ATTRIBUTES) return;
    attributes[key] = typeof value === 'string' && value.length > MAX_STRING_LENGTH ? value.slice(0, MAX_STRING_LENGTH) : value;
  }

  addEvent(name: string, attributes: Attributes = {}): void {
    if (!this.recording || this.#ended) return;
    const events = (this.#events ??= []);
    if (events.length < MAX_EVENTS) events.push({ name, timeNs: nowNs(), attributes });
  }

  setError(type: string, reason?: string): void {
    this.setAttribute('error.type', type);
    if (this.recording && !this.#ended) {
      this.#status = SpanStatusCode.Error;
      if (reason !== undefined) this.#statusMessage = reason;
    }
  }

  setOk(): void {
    if (this.recording && !this.#ended && this.#status === SpanStatusCode.Unset) this.#status = SpanStatusCode.Ok;
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (!this.recording || this.#sink === undefined) return;
    const start = this.#start;
    this.#sink.add({
      traceId: this.traceId,
      spanId: this.spanId,
      parentSpanId: start.parentSpanId,
      traceState: start.traceState,
      name: start.name,
      kind: start.kind,
      startNs: this.#startNs,
      endNs: nowNs(),
      attributes: this.#attributes ?? {},
      events: this.#events ?? [],
      status: { code: this.#status, message: this.#statusMessage },
      remoteParent: start.remoteParent,
      sampled: start.sampled,
    });
  }

  child(name: string, kind: SpanKind, attributes?: Attributes): Span {
    const start = this.#start;
    return new GatewaySpan({ traceId: this.traceId, parentSpanId: this.spanId, traceState: start.traceState, remoteParent: false, sampled: start.sampled, name, kind, attributes }, this.#sink);
  }

  traceparent(): string {
    return formatTraceparent(this.traceId, this.spanId, this.sampled);
  }
}
