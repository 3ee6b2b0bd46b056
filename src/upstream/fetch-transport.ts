// The built-in fetch behind the transport interface (./transport.ts): the
// default, as the design chose (no dependency, Node's own HTTP client, HTTP/1.1
// keep-alive pooling per origin in undici's global agent). It takes no
// per-upstream TLS settings and no proxy on any supported Node line (its
// undici Agent is not exposed); the config check refuses those with fetch.

import { watchConnectPhase, ConnectState } from './connect-phase.ts';
import { boundUndiciSocketReads } from './undici-socket-reads.ts';
import { ConnectObservation, EMPTY_BODY, type UpstreamBody, type UpstreamRequest, type UpstreamSend, type UpstreamTransport } from './transport.ts';

/** The statuses fetch's redirect: 'error' refuses (Fetch standard, "redirect status"). */
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

// Made on first use: the first Headers loads undici, which opens stderr, and
// importing the package must start nothing.
let noHeaders: Headers | null = null;

export function createFetchTransport(): UpstreamTransport {
  return { name: 'fetch', send };
}

function send(request: UpstreamRequest): UpstreamSend {
  // fetch needs a signal: the one AbortController of an exchange over fetch.
  const controller = new AbortController();
  const { signal } = controller;
  const init: RequestInit = {
    method: 'POST',
    headers: request.headers,
    body: request.body,
    signal,
    // A redirect would resend the body (and, same-origin, the key) elsewhere.
    // 'error' rather than 'manual': with any other mode undici clones the
    // request and tees its body stream on every call, 5-10% of the
    // gateway's CPU per request. The refusal is turned back into a response below.
    redirect: 'error',
  };
  // Watched even without a connect timeout, for the status of a refused redirect.
  const { result, state, watch } = watchConnectPhase(() => fetch(request.url, init), request.onConnected);
  let body: FetchBody | undefined;
  const response = result.then(
    (answer) => {
      // Backpressure on Node 20 (./undici-socket-reads.ts); the socket is known once the headers went out.
      boundUndiciSocketReads(watch.socket);
      if (answer.body === null) return { status: answer.status, headers: answer.headers, body: EMPTY_BODY };
      body = new FetchBody(answer.body.getReader());
      // Aborted while the headers were on their way.
      if (signal.aborted) body.cancel();
      return { status: answer.status, headers: answer.headers, body };
    },
    (error: unknown) => {
      /* fetch rejects a redirect status with a bare "fetch failed"; the status
       * comes from the diagnostics channel. It becomes a response with that
       * status and no body: the exchange answers the same 502 as for any
       * unexpected status. What differs from node:http: fetch does not hand
       * over the body, so an error message in it is not quoted; and where the
       * status cannot be observed (a Node without those channels) the refusal
       * reads as unreachable, still a 502. */
      const status = watch.responseStatus;
      if (signal.aborted || status === undefined || !REDIRECT_STATUSES.has(status)) throw error;
      return { status, headers: (noHeaders ??= new Headers()), body: EMPTY_BODY };
    },
  );
  const abort = (reason: Error): void => {
    if (signal.aborted) return;
    controller.abort(reason);
    // fetch's own abort wiring is lost once undici's internal Request object
    // is garbage collected (nodejs/undici#4627, with redirect: 'error'; not
    // fixed in Node 20's undici), and a read would then wait for the upstream
    // however long it streams. Cancelling the body aborts the fetch through
    // its stream instead.
    body?.cancel();
  };
  return { response, connect: state === ConnectState.Unobserved ? ConnectObservation.Unobserved : ConnectObservation.Observed, abort };
}

/** A fetch body's reader behind the transport's body interface. */
class FetchBody implements UpstreamBody {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  #open = true;

  constructor(reader: ReadableStreamDefaultReader<Uint8Array>) {
    this.#reader = reader;
  }

  async read(): Promise<Uint8Array | undefined> {
    const { done, value } = await this.#reader.read();
    if (!done) return value;
    this.#open = false;
    return undefined;
  }

  cancel(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#reader.cancel().catch(() => undefined);
  }
}
