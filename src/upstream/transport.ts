// The upstream transport: how one POST reaches an upstream and how its answer
// comes back, behind one small interface so that the exchange
// (./upstream-exchange.ts: timers, abort wiring, error mapping) and the
// bounded reads (./bounded-reads.ts) do not depend on which HTTP client runs
// underneath. Two implementations, held to the same test table
// (test/upstream/transport-table.test.ts): the built-in fetch
// (./fetch-transport.ts, the default) and node:http / node:https
// (./node-transport.ts: one keep-alive agent per provider, TLS settings, a proxy).
//
// What both promise:
// - Redirects are never followed (a redirect would resend the body, and the
//   key, elsewhere): a 3xx comes back as a response with that status.
// - The body is not decoded beyond what the transport's own content coding
//   needs; its bytes are read one chunk at a time, and cancel() frees the
//   connection.
// - send() hands back an abort function: calling it ends the request (and its
//   body) with the reason as the error. The exchange calls it directly; only
//   the fetch transport makes an AbortController (fetch needs a signal).

/** What the exchange sends: always one POST with a JSON or event-stream answer expected. */
export interface UpstreamRequest {
  /** The full endpoint URL. */
  url: string;
  /** Lower-case names; content-length is the transport's. */
  headers: Readonly<Record<string, string>>;
  body: string;
  /** Called at most once, when the request is on a connected (for https,
   * TLS-established) socket; may be called during send() for a pooled one. */
  onConnected: () => void;
}

/** The response headers: only lookups by lower-case name are needed. */
export interface UpstreamHeaders {
  get(name: string): string | null;
}

/** The response body as bytes, read one chunk at a time. */
export interface UpstreamBody {
  /** The next chunk, or undefined at the end. Rejects with the network error
   * (or the abort's reason) that cut the body. */
  read(): Promise<Uint8Array | undefined>;
  /** Stops reading and releases the connection; idempotent, never throws. */
  cancel(): void;
}

export interface UpstreamResponse {
  status: number;
  headers: UpstreamHeaders;
  body: UpstreamBody;
}

/** Whether the connect phase of one request can be observed. */
export const ConnectObservation = {
  /** onConnected will be called (or already was) when the socket is ready. */
  Observed: 'observed',
  /** The transport cannot tell: no connect timer can be armed; setup stays
   * bounded by the first-byte timer and the transport's own connect timeout. */
  Unobserved: 'unobserved',
} as const;
export type ConnectObservation = (typeof ConnectObservation)[keyof typeof ConnectObservation];

export interface UpstreamSend {
  response: Promise<UpstreamResponse>;
  connect: ConnectObservation;
  /** Ends the request and its body with `reason` (the response, or the body's
   * pending read, rejects with it); idempotent. */
  abort(reason: Error): void;
}

export interface UpstreamTransport {
  /** "fetch" or "node", for logs and tests. */
  readonly name: string;
  send(request: UpstreamRequest): UpstreamSend;
}

const NO_BYTES: Promise<undefined> = Promise.resolve(undefined);

/** A body with nothing in it (a refused redirect whose body fetch does not hand over). */
export const EMPTY_BODY: UpstreamBody = {
  read: () => NO_BYTES,
  cancel: () => undefined,
};
