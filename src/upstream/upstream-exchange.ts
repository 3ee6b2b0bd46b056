// One HTTP exchange with an upstream over built-in fetch, shared by the
// provider adapters (../providers/openai-compatible.ts, ../providers/anthropic.ts): the connect,
// first-byte, idle and total timers and the abort wiring; the bounded reads of
// the body and its events are in ./bounded-reads.ts. What a failure means for the client is decided in
// ./upstream-errors.ts. What differs per provider (endpoint, headers, request
// body, translating the answer) stays in each adapter.

import { ApiError } from '../errors/api-error.ts';
import { EventStreamError } from '../sse/event-stream-parser.ts';
import { readBodyBounded, readErrorDetail, readEventStream, type EventReads } from './bounded-reads.ts';
import { ConnectState, watchConnectPhase, type FetchWatch } from './connect-phase.ts';
import { classifyNetworkError, failureCauseOf, FailureKind, noteFailureCause, TimeoutPhase, upstreamAddress, type FailureCause } from './failure-cause.ts';
import type { UpstreamCall } from './provider.ts';
import {
  badUpstreamResponseError,
  ClientAbortError,
  isClientAbort,
  isNetworkTimeout,
  upstreamConnectionLostError,
  upstreamConnectTimeoutError,
  upstreamHttpError,
  upstreamStalledError,
  upstreamStreamStalledError,
  upstreamStreamTruncatedError,
  upstreamTimeoutError,
  upstreamUnreachableError,
} from './upstream-errors.ts';

// The defaults are the provider table's (../config/provider-defaults.ts).
import { DEFAULT_FIRST_BYTE_TIMEOUT_MS, DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT_MS } from '../config/provider-defaults.ts';
/** setTimeout's largest delay; beyond it Node fires at once. */
const MAX_TIMER_MS = 2_147_483_647;
/** The statuses fetch's redirect: 'error' refuses (Fetch standard, "redirect status"). */
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** The timing and size options both adapters accept, with the same meaning and defaults. */
interface ExchangeOptions {
  timeoutMs?: number | undefined;
  firstByteTimeoutMs?: number | undefined;
  idleTimeoutMs?: number | undefined;
  connectTimeoutMs?: number | undefined;
  maxResponseBytes?: number | undefined;
  maxEventBytes?: number | undefined;
}

interface ExchangeSettings {
  endpoint: string;
  /** Every header but content-type, accept and x-request-id, which are ours. */
  baseHeaders: Headers;
  timeoutMs: number;
  firstByteTimeoutMs: number;
  idleTimeoutMs: number;
  /** Bound on connection setup (see ./connect-phase.ts); undefined: undici's own 10 s. */
  connectTimeoutMs: number | undefined;
  /** Non-stream response body limit (decoded bytes). */
  maxResponseBytes: number;
  /** Largest single event of a stream. */
  maxEventBytes: number;
}

type ExchangeCall = Pick<UpstreamCall, 'requestId' | 'signal'>;

export interface Exchange {
  /** POSTs the JSON `body`; resolves with a 2xx response, throws the mapped error otherwise. */
  send(body: string): Promise<Response>;
  /** The whole 2xx body of a non-streaming answer, bounded by maxResponseBytes. */
  readBody(response: Response): Promise<string>;
  /** The events of a streaming answer; the idle clock runs while they are awaited. */
  readEvents(response: Response): EventReads;
  /** The error to throw for anything that went wrong during the exchange. */
  explain(error: unknown): unknown;
  /** Clears timers and listeners and aborts the fetch if still running. Idempotent. */
  close(): void;
}

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

/** The clock behind each of our own timeout aborts, for the operator's failure cause. */
const TIMEOUT_PHASE: Partial<Record<Abort, TimeoutPhase>> = {
  [Abort.ConnectTimeout]: TimeoutPhase.Connect,
  [Abort.FirstByteTimeout]: TimeoutPhase.FirstByte,
  [Abort.IdleTimeout]: TimeoutPhase.Idle,
  [Abort.TotalTimeout]: TimeoutPhase.Total,
};

const Phase = {
  /** Until the response headers arrive. */
  Connecting: 'connecting',
  /** Reading the body. */
  Reading: 'reading',
} as const;
type Phase = (typeof Phase)[keyof typeof Phase];

/** `${baseUrl}/${resource}`, with or without a trailing slash on baseUrl; a
 * query (e.g. an api-version) stays after the path. Throws TypeError for a URL
 * that cannot work. */
export function endpointUrl(baseUrl: string, resource: string): string {
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
  url.pathname = `${path}/${resource}`;
  return url.toString();
}

function positiveInteger(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0 || value > MAX_TIMER_MS) {
    throw new RangeError(`${name} must be a positive integer of at most ${MAX_TIMER_MS}.`);
  }
  return value;
}

/** The settings of every exchange with one upstream, checked once, at startup. */
export function exchangeSettings(endpoint: string, baseHeaders: Headers, options: ExchangeOptions): ExchangeSettings {
  return {
    endpoint,
    baseHeaders,
    timeoutMs: positiveInteger(options.timeoutMs, DEFAULT_TIMEOUT_MS, 'timeoutMs'),
    firstByteTimeoutMs: positiveInteger(options.firstByteTimeoutMs, DEFAULT_FIRST_BYTE_TIMEOUT_MS, 'firstByteTimeoutMs'),
    idleTimeoutMs: positiveInteger(options.idleTimeoutMs, DEFAULT_IDLE_TIMEOUT_MS, 'idleTimeoutMs'),
    connectTimeoutMs:
      options.connectTimeoutMs === undefined ? undefined : positiveInteger(options.connectTimeoutMs, 0, 'connectTimeoutMs'),
    maxResponseBytes: positiveInteger(options.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES, 'maxResponseBytes'),
    maxEventBytes: positiveInteger(options.maxEventBytes, DEFAULT_MAX_EVENT_BYTES, 'maxEventBytes'),
  };
}

/** The configured extra headers, plus the API key under `keyHeader` (with
 * `keyPrefix`) when one is set. Built once so that an invalid value fails at
 * startup, not per call; the errors never quote a value, which may be a secret. */
export function upstreamHeaders(
  extra: Record<string, string> | undefined,
  apiKey: string | undefined,
  keyHeader: string,
  keyPrefix: string,
): Headers {
  let headers: Headers;
  try {
    headers = new Headers(extra ?? {});
  } catch {
    throw new TypeError('The upstream headers contain an invalid header name or value.');
  }
  // The key goes in this one header only (Azure's api-key is never also a Bearer).
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(keyHeader)) throw new TypeError('The upstream apiKeyHeader is not a valid header name.');
  if (apiKey !== undefined && apiKey !== '') {
    try {
      headers.set(keyHeader, `${keyPrefix}${apiKey}`);
    } catch {
      throw new TypeError('The upstream apiKey contains characters not allowed in a header.');
    }
  }
  return headers;
}

/**
 * One upstream exchange: a controller that the caller's signal and the
 * connect, first-byte, idle and total timers can all abort, remembering which
 * did, so that an AbortError from fetch can be told apart into 499-ish, 504 or 502.
 */
export function openExchange(call: ExchangeCall, settings: ExchangeSettings, streaming: boolean): Exchange {
  const controller = new AbortController();
  let abort: Abort = Abort.None;
  let phase: Phase = Phase.Connecting;
  let connectTimer: NodeJS.Timeout | undefined;
  let firstByteTimer: NodeJS.Timeout | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  let totalTimer: NodeJS.Timeout | undefined;
  /** True only while a body chunk is awaited: a consumer that is slow to
   * take the next chunk (backpressure from the client) is not the upstream's fault. */
  let awaitingBytes = false;
  /** The whole body was read: aborting would only cost (a DOMException and
   * signal listeners per request) and could not free anything. */
  let finished = false;
  /** The upstream's non-2xx status (a refused redirect's too), for the failure cause. */
  let failedStatus: number | undefined;

  /** The body reader being read. An abort cancels it too: fetch's own abort
   * wiring is lost once undici's internal Request object is garbage collected
   * (nodejs/undici#4627, with redirect: 'error'; not fixed in Node 20's undici),
   * and a read would then wait for the upstream however long it streams.
   * Cancelling the body aborts the fetch through its stream instead. */
  let activeReader: ReadableStreamDefaultReader<Uint8Array> | undefined;

  const abortFor = (why: Abort): void => {
    if (abort !== Abort.None) return;
    abort = why;
    controller.abort();
    if (activeReader !== undefined) void activeReader.cancel().catch(() => undefined);
  };
  const onCallerAbort = (): void => abortFor(Abort.Client);

  if (call.signal.aborted) abort = Abort.Client;
  else {
    call.signal.addEventListener('abort', onCallerAbort, { once: true });
    totalTimer = setTimeout(() => abortFor(Abort.TotalTimeout), settings.timeoutMs);
    firstByteTimer = setTimeout(() => abortFor(Abort.FirstByteTimeout), settings.firstByteTimeoutMs);
  }

  async function send(body: string): Promise<Response> {
    if (abort === Abort.Client) throw new ClientAbortError(call.signal.reason);
    const headers = new Headers(settings.baseHeaders);
    headers.set('content-type', 'application/json');
    headers.set('accept', streaming ? 'text/event-stream' : 'application/json');
    headers.set('x-request-id', call.requestId);

    const init: RequestInit = {
      method: 'POST',
      headers,
      body,
      signal: controller.signal,
      // A redirect would resend the body (and, same-origin, the key) elsewhere.
      // 'error' rather than 'manual': with any other mode undici clones the
      // request and tees its body stream on every call, 5-10% of the
      // gateway's CPU per request. The refusal is mapped back below.
      redirect: 'error',
    };
    const { result, watch } = fetchWithConnectTimer(init);
    let response: Response;
    try {
      response = await result;
    } catch (error) {
      throw refusedRedirect(watch) ?? error;
    }
    phase = Phase.Reading;
    clearTimeout(connectTimer);
    clearTimeout(firstByteTimer);
    if (response.status >= 200 && response.status <= 299) return response;

    failedStatus = response.status;
    const detail = await readErrorDetail(response);
    if (abort !== Abort.None) throw abortError();
    // Anthropic's 529 (overloaded) falls in the 5xx branch: a 502 that says so.
    throw upstreamHttpError(
      response.status,
      detail,
      response.headers.get('retry-after'),
      response.headers.get('retry-after-ms'),
    );
  }

  /** fetch(), with the connect timer armed while the connection is being set
   * up, when that phase can be observed (see ./connect-phase.ts).
   * Watched even without a connect timeout, for the status of a refused redirect. */
  function fetchWithConnectTimer(init: RequestInit): { result: Promise<Response>; watch: FetchWatch } {
    const connectTimeoutMs = settings.connectTimeoutMs;
    const { result, state, watch } = watchConnectPhase(
      () => fetch(settings.endpoint, init),
      () => clearTimeout(connectTimer),
    );
    if (connectTimeoutMs !== undefined && state === ConnectState.Connecting && abort === Abort.None) {
      connectTimer = setTimeout(() => abortFor(Abort.ConnectTimeout), connectTimeoutMs);
    }
    return { result, watch };
  }

  /**
   * fetch rejects a redirect status with a bare "fetch failed"; the status
   * comes from the diagnostics channel. The client sees the same 502 as for
   * any unexpected status. What differs from reading the response ourselves:
   * fetch does not hand over the body, so an error message in it is not
   * quoted; and where the status cannot be observed (a Node without those
   * channels) the refusal reads as unreachable, still a 502.
   */
  function refusedRedirect(watch: FetchWatch): ApiError | undefined {
    const status = watch.responseStatus;
    if (abort !== Abort.None || status === undefined || !REDIRECT_STATUSES.has(status)) return undefined;
    failedStatus = status;
    return upstreamHttpError(status, undefined, null, null);
  }

  const onIdle = (): void => {
    if (awaitingBytes) abortFor(Abort.IdleTimeout);
  };

  /** The body's next chunk, or undefined at its end; aborts the exchange when
   * the upstream sends nothing for idleTimeoutMs while the chunk is awaited. */
  async function readBytes(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<Uint8Array | undefined> {
    activeReader = reader;
    awaitingBytes = true;
    // One timer per exchange, re-armed per read (refresh() restarts it even after it fired).
    if (idleTimer === undefined) idleTimer = setTimeout(onIdle, settings.idleTimeoutMs);
    else idleTimer.refresh();
    try {
      const { done, value } = await reader.read();
      if (!done) return value;
      finished = true;
      clearTimeout(idleTimer);
      return undefined;
    } finally {
      awaitingBytes = false;
    }
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

  /** The client's error for `error`, with what went wrong on the wire noted
   * beside it (./failure-cause.ts) for the log and /readyz. */
  function explain(error: unknown): unknown {
    const explained = explainForClient(error);
    if (!isClientAbort(explained)) {
      noteFailureCause(explained, { ...wireCause(error, explained), address: upstreamAddress(settings.endpoint) });
    }
    return explained;
  }

  /** Most specific first: our own clock, the upstream's status, the socket's
   * code, then what the adapter that threw already knew (an error event). */
  function wireCause(error: unknown, explained: unknown): Pick<FailureCause, 'kind' | 'detail'> {
    const phase = TIMEOUT_PHASE[abort];
    if (phase !== undefined) return { kind: FailureKind.Timeout, detail: phase };
    if (failedStatus !== undefined) return { kind: FailureKind.Http, detail: String(failedStatus) };
    const network = classifyNetworkError(error);
    if (network !== undefined) return network;
    const known = failureCauseOf(explained);
    if (known.kind !== FailureKind.Other) return known;
    // Not JSON, an oversized event, a stream that ended without [DONE].
    if (explained instanceof ApiError && (explained.code === 'bad_upstream_response' || explained.code === 'upstream_stream_truncated')) {
      return { kind: FailureKind.BadResponse, detail: explained.code };
    }
    return known;
  }

  function explainForClient(error: unknown): unknown {
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
    // Once the body was read to its end there is nothing to free; otherwise
    // the abort frees the socket (a consumer that stopped early, or an error mid-body).
    if (!finished) abortFor(Abort.Closed);
  }

  async function readBody(response: Response): Promise<string> {
    const text = await readBodyBounded(response, settings.maxResponseBytes);
    finished = true;
    return text;
  }

  return {
    send,
    readBody,
    readEvents: (response) => readEventStream(response, readBytes, settings.maxEventBytes),
    explain,
    close,
  };
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw badUpstreamResponseError('The upstream provider returned a response that is not valid JSON.', error);
  }
}
