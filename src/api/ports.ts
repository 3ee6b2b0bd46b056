// The ports a host may implement when it embeds the gateway beside keys
// (./keys.ts) and limits (./limits.ts): the audit tee, logging, provider keys and
// trace export. Public types only: this file imports nothing from the gateway.
// Each port has a contract suite in `portcullis/testing`.

// ---------------------------------------------------------------- audit

/** A plain JSON value. */
export type AuditValue = string | number | boolean | null | readonly AuditValue[] | { readonly [field: string]: AuditValue };

/** One record of the audit chain, after the chain gave it its seq and hashes. */
export interface AuditRecord {
  seq: number;
  time: string;
  prev: string;
  hash: string;
  actor: { kind: string; id: string; uid?: number | null; issuer?: string; name?: string };
  source: string;
  action: string;
  target: string | null;
  before: { readonly [field: string]: AuditValue } | null;
  after: { readonly [field: string]: AuditValue } | null;
  detail?: { readonly [field: string]: AuditValue };
}

/**
 * A copy of each audit record, after the chain took it (a SIEM), one at a time in
 * chain order. A rejection is logged and counted; it never blocks the change or
 * loses the chain's record. An append gets 10 s: one unanswered by then is logged
 * and counted, and the next record is handed over. At most 1000 records wait their
 * turn; past that the oldest waiting one is dropped, with a warning naming its seq.
 * At close the sink gets until the drain deadline for what is queued; what it never
 * confirmed is logged by seq.
 */
export interface AuditSink {
  append(record: AuditRecord): Promise<void>;
}

// ---------------------------------------------------------------- logs

/**
 * A log record's fields, as the gateway passes them: never undefined. A field
 * the gateway does not know is left out, or null where the record always has it
 * (RequestLogFields).
 */
export type LogFields = Record<string, string | number | boolean | null>;

/**
 * The fields of the 'request' record (the access line), one per request: each
 * of these always present, null where the gateway does not know it, never
 * undefined; a route may add fields of its own (traceId, guard, ...).
 */
export interface RequestLogFields extends LogFields {
  requestId: string;
  /** null (with path and totalMs) for an answer to bytes that never became a request (400, 408, 431). */
  method: string | null;
  path: string | null;
  /** The client's address, after the configured trusted proxies. */
  client: string | null;
  /** null when the client left before any answer was written. */
  status: number | null;
  keyId: string | null;
  alias: string | null;
  /** The upstream target that answered, `provider/model`. */
  target: string | null;
  /** Why the alias was chosen; the alias name when asked for directly. */
  route: string | null;
  stream: boolean | null;
  promptTokens: number | null;
  completionTokens: number | null;
  /** What the request was charged on: usage, reservation, prompt, partial or none. */
  charge: string | null;
  chargedTokens: number | null;
  /** Integer nanos of the configured currency. */
  costNanos: number | null;
  /** The cost in currency units. */
  cost: number | null;
  /** Milliseconds to the status line and headers. */
  ttfbMs: number | null;
  totalMs: number | null;
  /** The whole answer was handed to the socket. */
  completed: boolean;
  /** The error code of a failed request. */
  error: string | null;
}

/**
 * Where the gateway's log records go: the records it writes to stdout otherwise,
 * at every level (a given logger filters by its own level). The 'request' record
 * (info) carries RequestLogFields. A method must not change `fields` (the gateway may reuse the object).
 */
export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

// ---------------------------------------------------------------- upstream keys

/**
 * The key for a provider (its name in the config), asked on every upstream exchange:
 * a rotated key is used by the next one. undefined: the config's apiKeyEnv/apiKeyFile.
 * Synchronous: keep a cache and refresh it. Never logged.
 */
export type ProviderKeySource = (provider: string) => string | undefined;

// ---------------------------------------------------------------- traces

export type SpanAttributes = Record<string, string | number | boolean>;

/** A finished span. Times in nanoseconds since the epoch. */
export interface SpanData {
  traceId: string;
  spanId: string;
  /** The parent's span id; undefined for a root span (no traceparent came in). */
  parentSpanId: string | undefined;
  /** The W3C tracestate the request brought; undefined when none. */
  traceState: string | undefined;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: 1 | 2 | 3;
  startNs: bigint;
  endNs: bigint;
  attributes: SpanAttributes;
  events: { name: string; timeNs: bigint; attributes: SpanAttributes }[];
  /** OTLP StatusCode: 0 unset, 1 ok, 2 error. */
  /** message: undefined unless code is 2 and the gateway has words for it. */
  status: { code: 0 | 1 | 2; message: string | undefined };
  remoteParent: boolean;
  sampled: boolean;
}

/**
 * Where batches of finished spans go, in place of the OTLP POST (batching, queue limits
 * and sampling stay the gateway's). A rejection counts the batch as dropped.
 */
export interface TraceExporter {
  export(spans: readonly SpanData[]): Promise<void>;
  /** Called once at close, after the last batch. */
  shutdown?(): Promise<void>;
}
