// One HTTP exchange with the Anthropic Messages API over built-in fetch: the
// timers (first byte, idle gap between stream events, total), the abort wiring
// and bounded reads. What a failure means for the client is decided in
// ./upstream-errors.ts, shared with the OpenAI-compatible adapter.
//
// Adapted from the exchange in ./openai-compatible.ts (not exported there); the
// two can become one shared module. One difference is deliberate: the idle
// clock here runs between stream events (Anthropic pings every few seconds),
// not between bytes, so an upstream trickling one endless event is caught too.

import { ApiError } from '../errors.ts';
import { EventStreamError } from '../sse/event-stream-parser.ts';
import { ConnectState, watchConnectPhase } from '../upstream/connect-phase.ts';
import {
  badUpstreamResponseError,
  ClientAbortError,
  isNetworkTimeout,
  upstreamConnectTimeoutError,
  readUpstreamErrorDetail,
  type UpstreamErrorDetail,
  upstreamConnectionLostError,
  upstreamHttpError,
  upstreamStalledError,
  upstreamStreamStalledError,
  upstreamStreamTruncatedError,
  upstreamTimeoutError,
  upstreamUnreachableError,
} from './upstream-errors.ts';

export interface ExchangeSettings {
  endpoint: string;
  /** Every header but x-request-id and accept, which are per call. */
  baseHeaders: Headers;
  timeoutMs: number;
  firstByteTimeoutMs: number;
  idleTimeoutMs: number;
  /** Bound on connection setup (see ../upstream/connect-phase.ts); undefined: undici's own 10 s. */
  connectTimeoutMs?: number | undefined;
}

export interface ExchangeCall {
  requestId: string;
  signal: AbortSignal;
}

export interface Exchange {
  /** POSTs `body`; resolves with a 2xx response, throws the mapped error otherwise. */
  send(body: string): Promise<Response>;
  /** Starts the idle clock: call before waiting for the next stream event. */
  awaitingEvent(): void;
  /** Stops the idle clock: an event (or a keep-alive comment) arrived. */
  eventArrived(): void;
  /** The error to throw for anything that went wrong during the exchange. */
  explain(error: unknown): unknown;
  /** Clears timers and listeners and aborts the fetch if still running. Idempotent. */
  close(): void;
}

/** An error body is read only for its message; more than this is not worth it. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;
/** setTimeout's largest delay; beyond it Node fires at once. */
export const MAX_TIMER_MS = 2_147_483_647;

/** Why our own controller aborted the fetch. */
const Abort = {
  None: 'none',
  Client: 'client',
  ConnectTimeout: 'connect_timeout',
  FirstByteTimeout: 'first_byte_timeout',
  IdleTimeout: 'idle_timeout',
  TotalTimeout: 'total_timeout',
  Closed: 'closed',
} as const;
type Abort = (typeof Abort)[keyof typeof Abort];

const Phase = {
  /** Until the response headers arrive. */
  Connecting: 'connecting',
  /** Reading the body. */
  Reading: 'reading',
} as const;
type Phase = (typeof Phase)[keyof typeof Phase];

/** `${baseUrl}/messages`, with or without a trailing slash on baseUrl; a query
 * stays after the path. Throws TypeError for a URL that cannot work. */
export function messagesUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError('The upstream baseUrl is not a valid URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError('The upstream baseUrl must use http or https.');
  }
  if (url.hash !== '') throw new TypeError('The upstream baseUrl must not have a fragment.');
  // fetch refuses such URLs on every call; refuse them once, at startup.
  if (url.username !== '' || url.password !== '') {
    throw new TypeError('The upstream baseUrl must not contain credentials; use apiKey or headers.');
  }
  let path = url.pathname;
  while (path.endsWith('/')) path = path.slice(0, -1);
  url.pathname = `${path}/messages`;
  return url.toString();
}

export function positiveInteger(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0 || value > MAX_TIMER_MS) {
    throw new RangeError(`${name} must be a positive integer of at most ${MAX_TIMER_MS}.`);
  }
  return value;
}

/**
 * One exchange: a controller that the caller's signal and the three timers can
 * all abort, remembering which did, so that an AbortError from fetch can be
 * told apart into a client abort, a 504 or a 502.
 */
export function openExchange(call: ExchangeCall, settings: ExchangeSettings, streaming: boolean): Exchange {
  const controller = new AbortController();
  let abort: Abort = Abort.None;
  let phase: Phase = Phase.Connecting;
  let connectTimer: NodeJS.Timeout | undefined;
  let firstByteTimer: NodeJS.Timeout | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  let totalTimer: NodeJS.Timeout | undefined;

  const abortFor = (why: Abort): void => {
    if (abort !== Abort.None) return;
    abort = why;
    controller.abort();
  };
  const onCallerAbort = (): void => abortFor(Abort.Client);
  const onIdle = (): void => abortFor(Abort.IdleTimeout);

  if (call.signal.aborted) abort = Abort.Client;
  else {
    call.signal.addEventListener('abort', onCallerAbort, { once: true });
    totalTimer = setTimeout(() => abortFor(Abort.TotalTimeout), settings.timeoutMs);
    firstByteTimer = setTimeout(() => abortFor(Abort.FirstByteTimeout), settings.firstByteTimeoutMs);
  }

  async function send(body: string): Promise<Response> {
    if (abort === Abort.Client) throw new ClientAbortError(call.signal.reason);
    const headers = new Headers(settings.baseHeaders);
    headers.set('accept', streaming ? 'text/event-stream' : 'application/json');
    headers.set('x-request-id', call.requestId);

    const init: RequestInit = {
      method: 'POST',
      headers,
      body,
      signal: controller.signal,
      // A redirect would resend the body (and, same-origin, the key) elsewhere.
      redirect: 'manual',
    };
    let pending: Promise<Response>;
    const connectTimeoutMs = settings.connectTimeoutMs;
    if (connectTimeoutMs === undefined) pending = fetch(settings.endpoint, init);
    else {
      // The same connect-phase watch as the OpenAI-compatible adapter.
      const { result, state } = watchConnectPhase(
        () => fetch(settings.endpoint, init),
        () => clearTimeout(connectTimer),
      );
      if (state === ConnectState.Connecting && abort === Abort.None) {
        connectTimer = setTimeout(() => abortFor(Abort.ConnectTimeout), connectTimeoutMs);
      }
      pending = result;
    }
    const response = await pending;
    phase = Phase.Reading;
    clearTimeout(connectTimer);
    clearTimeout(firstByteTimer);
    if (response.status >= 200 && response.status <= 299) return response;

    const detail = await readErrorDetail(response);
    if (abort !== Abort.None) throw abortError();
    // Anthropic's 529 (overloaded) falls in the 5xx branch: a 502 that says so.
    throw upstreamHttpError(response.status, detail, response.headers.get('retry-after'), response.headers.get('retry-after-ms'));
  }

  function awaitingEvent(): void {
    if (abort !== Abort.None) return;
    clearTimeout(idleTimer);
    idleTimer = setTimeout(onIdle, settings.idleTimeoutMs);
  }

  function eventArrived(): void {
    clearTimeout(idleTimer);
    idleTimer = undefined;
  }

  function abortError(): unknown {
    switch (abort) {
      case Abort.Client:
        return new ClientAbortError(call.signal.reason);
      case Abort.ConnectTimeout:
        return upstreamConnectTimeoutError(settings.connectTimeoutMs ?? 0);
      case Abort.FirstByteTimeout:
        return upstreamTimeoutError(settings.firstByteTimeoutMs, 'response headers');
      case Abort.IdleTimeout:
        return upstreamStreamStalledError(settings.idleTimeoutMs);
      case Abort.TotalTimeout:
        return upstreamTimeoutError(settings.timeoutMs, 'the whole response');
      default:
        return undefined;
    }
  }

  function explain(error: unknown): unknown {
    // Our own abort came first; whatever fetch or the body threw is its echo.
    const aborted = abortError();
    if (aborted !== undefined) return aborted;
    if (error instanceof ApiError) return error;
    // Node's fetch has its own clocks (undici: 300 s for headers and between
    // body chunks, 10 s to connect); running into one is still a timeout.
    if (isNetworkTimeout(error)) return upstreamStalledError(error);
    if (error instanceof EventStreamError) {
      return badUpstreamResponseError('The upstream provider sent a stream event larger than the gateway accepts.', error);
    }
    if (phase === Phase.Connecting) return upstreamUnreachableError(error);
    return streaming ? upstreamStreamTruncatedError(error) : upstreamConnectionLostError(error);
  }

  function close(): void {
    clearTimeout(connectTimer);
    clearTimeout(firstByteTimer);
    clearTimeout(idleTimer);
    clearTimeout(totalTimer);
    call.signal.removeEventListener('abort', onCallerAbort);
    // A no-op once the body was read to its end; otherwise it frees the socket
    // (a consumer that stopped early, or an error mid-body).
    abortFor(Abort.Closed);
  }

  return { send, awaitingEvent, eventArrived, explain, close };
}

/** The 2xx body as text, refusing more than `limit` bytes (counted after
 * fetch's content decoding, so a compressed bomb is caught too). */
export async function readBodyBounded(response: Response, limit: number): Promise<string> {
  const declared = response.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLargeError(limit);
  }
  const text = await readChunks(response, limit);
  if (text === undefined) throw tooLargeError(limit);
  return text;
}

function tooLargeError(limit: number): ApiError {
  return badUpstreamResponseError(`The upstream response exceeds the gateway's limit of ${limit} bytes.`);
}

/** The body decoded as UTF-8, or undefined when it crosses `limit` (the rest is
 * cancelled, not read). */
async function readChunks(response: Response, limit: number): Promise<string | undefined> {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder('utf-8');
  const parts: string[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limit) {
        await reader.cancel().catch(() => undefined);
        return undefined;
      }
      parts.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    reader.releaseLock();
  }
  parts.push(decoder.decode());
  return parts.join('');
}

/** The upstream's own error message, if its body has one; never throws.
 * Anthropic's `{"type":"error","error":{"type","message"}}` is read like OpenAI's. */
async function readErrorDetail(response: Response): Promise<UpstreamErrorDetail | undefined> {
  try {
    const text = await readChunks(response, MAX_ERROR_BODY_BYTES);
    if (text === undefined || text.length === 0) return undefined;
    return readUpstreamErrorDetail(JSON.parse(text));
  } catch {
    return undefined;
  }
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw badUpstreamResponseError('The upstream provider returned a response that is not valid JSON.', error);
  }
}

/** The body of a streaming answer; anything but an event stream is refused
 * rather than guessed at (a missing content-type is given the benefit). */
export function eventStreamBody(response: Response): ReadableStream<Uint8Array> {
  const contentType = response.headers.get('content-type');
  if (contentType !== null) {
    const semicolon = contentType.indexOf(';');
    const mediaType = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
    if (mediaType !== 'text/event-stream') {
      void response.body?.cancel().catch(() => undefined);
      throw badUpstreamResponseError('The upstream provider did not answer with an event stream.');
    }
  }
  if (response.body === null) throw upstreamStreamTruncatedError();
  return response.body;
}
