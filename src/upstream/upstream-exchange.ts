// One HTTP exchange with an upstream, shared by the provider adapters
// (../providers/openai-compatible.ts, ../providers/anthropic.ts): the connect,
// first-byte, idle and total timers (on the provider's scheduler, so a test
// moves them by exact amounts) and the abort wiring, over whichever
// transport the provider uses (./transport.ts). The settings are checked once
// in ./exchange-settings.ts; the bounded reads of the body and its events are
// in ./bounded-reads.ts; what a failure means for the client is decided in
// ./exchange-failure.ts and ./upstream-errors.ts. What differs per provider
// (endpoint, headers, request body, translating the answer) stays in each adapter.

import { readBodyBounded, readErrorDetail, readEventStream, type EventReads } from './bounded-reads.ts';
import { Abort, abortError, explainExchangeFailure, Phase } from './exchange-failure.ts';
import type { ExchangeSettings } from './exchange-settings.ts';
import type { UpstreamCall } from './provider.ts';
import type { Timer } from '../time/scheduler.ts';
import { ConnectObservation, type UpstreamBody, type UpstreamResponse } from './transport.ts';
import { badUpstreamResponseError, ClientAbortError, upstreamHttpError } from './upstream-errors.ts';

export { endpointUrl, exchangeSettings, upstreamHeaders, type ExchangeOptions, type ExchangeSettings } from './exchange-settings.ts';

type ExchangeCall = Pick<UpstreamCall, 'requestId' | 'signal' | 'traceHeaders'>;

export interface Exchange {
  /** POSTs the JSON `body`; resolves with a 2xx response, throws the mapped error otherwise. */
  send(body: string): Promise<UpstreamResponse>;
  /** The whole 2xx body of a non-streaming answer, bounded by maxResponseBytes. */
  readBody(response: UpstreamResponse): Promise<string>;
  /** The events of a streaming answer; the idle clock runs while they are awaited. */
  readEvents(response: UpstreamResponse): EventReads;
  /** The error to throw for anything that went wrong during the exchange. */
  explain(error: unknown): unknown;
  /** Clears timers and listeners and aborts the request if still running. Idempotent. */
  close(): void;
}

/**
 * One upstream exchange: a controller that the caller's signal and the
 * connect, first-byte, idle and total timers can all abort, remembering which
 * did, so that the error the transport then throws can be told apart into
 * 499-ish, 504 or 502.
 */
export function openExchange(call: ExchangeCall, settings: ExchangeSettings, streaming: boolean): Exchange {
  const controller = new AbortController();
  let abort: Abort = Abort.None;
  let phase: Phase = Phase.Connecting;
  let connected = false;
  const { scheduler } = settings;
  let connectTimer: Timer | undefined;
  let firstByteTimer: Timer | undefined;
  let idleTimer: Timer | undefined;
  let totalTimer: Timer | undefined;
  /** True only while a body chunk is awaited: a consumer that is slow to
   * take the next chunk (backpressure from the client) is not the upstream's fault. */
  let awaitingBytes = false;
  /** The whole body was read: aborting would only cost (a DOMException and
   * signal listeners per request) and could not free anything. */
  let finished = false;
  /** The upstream's non-2xx status (a refused redirect's too), for the failure cause. */
  let failedStatus: number | undefined;

  const abortFor = (why: Abort): void => {
    if (abort !== Abort.None) return;
    abort = why;
    controller.abort();
  };
  const onCallerAbort = (): void => abortFor(Abort.Client);

  if (call.signal.aborted) abort = Abort.Client;
  else {
    call.signal.addEventListener('abort', onCallerAbort, { once: true });
    totalTimer = scheduler.setTimeout(() => abortFor(Abort.TotalTimeout), settings.timeoutMs);
    firstByteTimer = scheduler.setTimeout(() => abortFor(Abort.FirstByteTimeout), settings.firstByteTimeoutMs);
  }

  const onConnected = (): void => {
    connected = true;
    scheduler.clearTimer(connectTimer);
  };

  async function send(body: string): Promise<UpstreamResponse> {
    if (abort === Abort.Client) throw new ClientAbortError(call.signal.reason);
    const headers: Record<string, string> = {
      ...settings.baseHeaders,
      // telemetry: after the configured headers, so this attempt's trace context wins.
      ...call.traceHeaders,
      'content-type': 'application/json',
      accept: streaming ? 'text/event-stream' : 'application/json',
      'x-request-id': call.requestId,
    };
    const sent = settings.transport.send({ url: settings.endpoint, headers, body, signal: controller.signal, onConnected });
    // The connect timer runs while the connection is being set up, when that
    // phase can be observed; otherwise the first-byte timer bounds it.
    const connectTimeoutMs = settings.connectTimeoutMs;
    if (connectTimeoutMs !== undefined && sent.connect === ConnectObservation.Observed && !connected && abort === Abort.None) {
      connectTimer = scheduler.setTimeout(() => abortFor(Abort.ConnectTimeout), connectTimeoutMs);
    }
    const response = await sent.response;
    phase = Phase.Reading;
    scheduler.clearTimer(connectTimer);
    scheduler.clearTimer(firstByteTimer);
    if (response.status >= 200 && response.status <= 299) return response;

    // A 3xx too: redirects are never followed (the body, and the key, would go elsewhere).
    failedStatus = response.status;
    const detail = await readErrorDetail(response);
    if (abort !== Abort.None) throw abortError({ abort, settings, callerReason: call.signal.reason });
    // Anthropic's 529 (overloaded) falls in the 5xx branch: a 502 that says so.
    throw upstreamHttpError(response.status, detail, response.headers.get('retry-after'), response.headers.get('retry-after-ms'));
  }

  const onIdle = (): void => {
    if (awaitingBytes) abortFor(Abort.IdleTimeout);
  };

  /** The body's next chunk, or undefined at its end; aborts the exchange when
   * the upstream sends nothing for idleTimeoutMs while the chunk is awaited. */
  async function readBytes(body: UpstreamBody): Promise<Uint8Array | undefined> {
    awaitingBytes = true;
    // One timer per exchange, re-armed per read (refresh() restarts it even after it fired).
    if (idleTimer === undefined) idleTimer = scheduler.setTimeout(onIdle, settings.idleTimeoutMs);
    else idleTimer.refresh();
    try {
      const chunk = await body.read();
      if (chunk !== undefined) return chunk;
      finished = true;
      scheduler.clearTimer(idleTimer);
      return undefined;
    } finally {
      awaitingBytes = false;
    }
  }

  /** The client's error for `error`, with what went wrong on the wire noted
   * beside it for the log and /readyz. */
  function explain(error: unknown): unknown {
    return explainExchangeFailure(error, { abort, phase, failedStatus, streaming, settings, callerReason: call.signal.reason });
  }

  function close(): void {
    scheduler.clearTimer(connectTimer);
    scheduler.clearTimer(firstByteTimer);
    scheduler.clearTimer(idleTimer);
    scheduler.clearTimer(totalTimer);
    call.signal.removeEventListener('abort', onCallerAbort);
    // Once the body was read to its end there is nothing to free; otherwise
    // the abort frees the socket (a consumer that stopped early, or an error mid-body).
    if (!finished) abortFor(Abort.Closed);
  }

  async function readBody(response: UpstreamResponse): Promise<string> {
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
