// Tells when the connection under one fetch() call is ready, which built-in
// fetch does not. Why this is needed: a connect timeout must be short (a
// black-holed host should cost a second or two before the next target is
// tried) while the time to the first response byte of a model may be long; one
// AbortSignal timer cannot tell the two apart, and fetch's `dispatcher` option
// (an undici Agent with `connect.timeout`) needs the undici package, because
// Node does not expose the Agent class of its bundled copy.
//
// How: Node's fetch is undici, and undici publishes its progress on
// diagnostics channels, a public Node API (node:diagnostics_channel), with the
// channel names documented by undici (docs/api/DiagnosticsChannel.md) and
// used by APM agents (OpenTelemetry, Sentry, New Relic) to trace Node's global
// fetch:
//   undici:request:create     { request }           the request is created
//   undici:client:sendHeaders { request, socket }   its headers go out on a
//                                                    connected (and for https,
//                                                    TLS-established) socket
//   undici:request:headers    { request, response }  the response headers came
//                                                    (response.statusCode)
// The same `request` object travels through both. The request is created
// synchronously inside the fetch() call (undici 6 and 7: fetch -> fetching ->
// mainFetch -> ... -> dispatcher.dispatch, no await in between), so the one
// created while our fetch() runs is ours; no AsyncLocalStorage is needed.
//
// Fail-safe: if a future Node dispatched asynchronously, or renamed the
// channels, no create event would be seen during the call, `watched` would be
// false, and the caller arms no connect timer: connection setup stays bounded
// by its first-byte timer and by undici's own connect timeout (10 s).
//
// The response status is recorded for one reason: the provider fetches with
// `redirect: 'error'` (any other mode makes undici clone the request and tee
// its body stream, a measurable share of the gateway's CPU per request), and
// fetch's rejection of a redirect does not say which status it refused.

import { subscribe } from 'node:diagnostics_channel';

const REQUEST_CREATE = 'undici:request:create';
const CLIENT_SEND_HEADERS = 'undici:client:sendHeaders';
const REQUEST_HEADERS = 'undici:request:headers';

export const ConnectState = {
  /** The request went out on a pooled connection during the fetch() call. */
  Connected: 'connected',
  /** Watched: `onConnected` runs once the request headers are written. */
  Connecting: 'connecting',
  /** No diagnostics event seen: the connect phase cannot be observed. */
  Unobserved: 'unobserved',
} as const;
export type ConnectState = (typeof ConnectState)[keyof typeof ConnectState];

/** What was seen of one fetch() call; fields fill in as undici reports. */
export interface FetchWatch {
  /** The status of the response headers undici received, once they came. */
  readonly responseStatus: number | undefined;
  /** The socket the request went out on, once its headers were written. */
  readonly socket: object | undefined;
}

interface Watch extends FetchWatch {
  onConnected(): void;
  connected: boolean;
  seen: boolean;
  responseStatus: number | undefined;
  socket: object | undefined;
}

let subscribed = false;
/** The watch of the fetch() call running right now; undefined otherwise. */
let dispatching: Watch | undefined;
const watches = new WeakMap<object, Watch>();

// Subscribers must never throw: diagnostics_channel would rethrow on the next tick.
function onRequestCreate(message: unknown): void {
  const watch = dispatching;
  if (watch === undefined) return;
  const request = requestOf(message);
  if (request === undefined) return;
  // Only the first request of the call (fetch makes one; redirects are refused).
  dispatching = undefined;
  watch.seen = true;
  watches.set(request, watch);
}

function onSendHeaders(message: unknown): void {
  const request = requestOf(message);
  if (request === undefined) return;
  const watch = watches.get(request);
  if (watch === undefined || watch.connected) return;
  const socket = (message as { socket?: unknown }).socket;
  if (typeof socket === 'object' && socket !== null) watch.socket = socket;
  watch.connected = true;
  watch.onConnected();
}

function onResponseHeaders(message: unknown): void {
  const request = requestOf(message);
  if (request === undefined) return;
  const watch = watches.get(request);
  if (watch === undefined) return;
  // The last event of interest; a request that never gets this far leaves its
  // entry to be collected with the request.
  watches.delete(request);
  const response = (message as { response?: { statusCode?: unknown } }).response;
  const status = response?.statusCode;
  if (typeof status === 'number') watch.responseStatus = status;
}

function requestOf(message: unknown): object | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const request = (message as { request?: unknown }).request;
  return typeof request === 'object' && request !== null ? request : undefined;
}

/**
 * Runs `start`, which must call fetch() synchronously (and nothing else that
 * makes HTTP requests), and reports what can be known about its connection.
 * `onConnected` runs at most once, when the request headers are written;
 * for a pooled connection that may be during this call (state Connected).
 * `watch` reports later events of the same call.
 */
export function watchConnectPhase<T>(start: () => T, onConnected: () => void): { result: T; state: ConnectState; watch: FetchWatch } {
  if (!subscribed) {
    // Subscribed once for the life of the process; with no fetch() being
    // watched the handlers return at the first check.
    subscribe(REQUEST_CREATE, onRequestCreate);
    subscribe(CLIENT_SEND_HEADERS, onSendHeaders);
    subscribe(REQUEST_HEADERS, onResponseHeaders);
    subscribed = true;
  }
  const watch: Watch = { onConnected, connected: false, seen: false, responseStatus: undefined, socket: undefined };
  dispatching = watch;
  let result: T;
  try {
    result = start();
  } finally {
    dispatching = undefined;
  }
  const state = watch.connected ? ConnectState.Connected : watch.seen ? ConnectState.Connecting : ConnectState.Unobserved;
  return { result, state, watch };
}
