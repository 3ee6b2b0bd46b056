// One HTTP exchange with an upstream, for every HTTP provider: ONE deadline
// timer (on the provider's scheduler, so a test moves it by exact amounts)
// re-armed to the earliest pending deadline of connect, first-byte, idle
// (only while body bytes are awaited) and total; on expiry it aborts the
// transport directly with the abort function send() handed back. The
// caller's signal gets one listener (this object). The settings are checked
// once in ./exchange-settings.ts; the bounded reads in ./bounded-reads.ts;
// what a failure means for the client is decided in ./exchange-failure.ts.
// A whole answer is exchangeCompletion(); a stream is ./upstream-stream.ts,
// which extends this class.

import type { ChatCompletion } from '../chat/types.ts';
import { readBodyBounded, readBodyBytesBounded, readErrorDetail } from './bounded-reads.ts';
import { Abort, abortError, explainExchangeFailure, Phase } from './exchange-failure.ts';
import type { ExchangeSettings, UpstreamCredential } from './exchange-settings.ts';
import type { ExchangeCall, HttpProvider, UpstreamCall } from './provider.ts';
import type { Buffer } from 'node:buffer';
import type { ApiError } from '../errors/api-error.ts';
import type { Timer } from '../time/scheduler.ts';
import { ConnectObservation, type UpstreamResponse } from './transport.ts';
import { ClientAbortError, upstreamHttpError } from './upstream-errors.ts';

export { endpointUrl, exchangeSettings, upstreamCredential, upstreamHeaders, type ExchangeOptions, type ExchangeSettings, type UpstreamKey } from './exchange-settings.ts';

/** What the transport's request ends with when the exchange aborts it: the
 * exchange's own state says why, so one shared error per kind does. */
const ABORTED = new Error('The upstream exchange was aborted.');
ABORTED.name = 'AbortError';

const NONE = Number.POSITIVE_INFINITY;

/**
 * One upstream exchange: remembers which of the caller's signal or its own
 * deadlines aborted it, so that the error the transport then throws can be
 * told apart into 499-ish, 504 or 502.
 */
export class Exchange<C extends ExchangeCall = UpstreamCall> {
  protected readonly call: C;
  protected readonly settings: ExchangeSettings;
  protected readonly streaming: boolean;
  protected abortedBy: Abort = Abort.None;
  protected phase: Phase = Phase.Connecting;
  /** The whole body was read: aborting could not free anything. */
  protected finished = false;
  /** True only while a body chunk is awaited: a consumer that is slow to take
   * the next chunk (backpressure from the client) is not the upstream's fault. */
  protected awaitingBytes = false;
  private connected = false;
  /** The upstream's non-2xx status (a refused redirect's too), for the failure cause. */
  private failedStatus: number | undefined;
  private abortTransport: ((reason: Error) => void) | undefined;
  private listening = false;
  // Deadlines on the scheduler's monotonic clock; NONE when not pending.
  private connectAt = NONE;
  private firstByteAt = NONE;
  private idleAt = NONE;
  private totalAt = NONE;
  private timer: Timer | undefined;
  /** When the timer fires (NONE: not armed) and the delay it was set with (for refresh()). */
  private timerAt = NONE;
  private timerDelay = 0;
  private readonly onTimer = (): void => this.expire();
  private readonly onConnected = (): void => {
    this.connected = true;
    if (this.connectAt !== NONE) {
      this.connectAt = NONE;
      this.rearm();
    }
  };

  constructor(call: C, settings: ExchangeSettings, streaming: boolean) {
    this.call = call;
    this.settings = settings;
    this.streaming = streaming;
    const { signal } = call;
    if (signal.aborted) {
      this.abortedBy = Abort.Client;
      return;
    }
    signal.addEventListener('abort', this, { once: true });
    this.listening = true;
    const now = settings.scheduler.monotonic();
    this.totalAt = now + settings.timeoutMs;
    this.firstByteAt = now + settings.firstByteTimeoutMs;
    this.rearm();
  }

  /** The caller's signal aborted (an EventListener object: no closure per exchange). */
  handleEvent(): void {
    this.abortFor(Abort.Client);
  }

  /** POSTs `body`; resolves with a 2xx response, throws the unmapped failure
   * otherwise (see explain). `requestHeaders`: the codec's for this request
   * (ProviderCodec.requestHeaders), over the provider's fixed ones; `url`:
   * the codec's endpoint for it (ProviderCodec.endpoint), else the provider's. */
  protected async send(body: string, requestHeaders: Readonly<Record<string, string>> | undefined, url: string = this.settings.endpoint): Promise<UpstreamResponse> {
    if (this.abortedBy === Abort.Client) throw new ClientAbortError(this.call.signal.reason);
    const { settings, call } = this;
    const headers: Record<string, string> = {
      ...settings.baseHeaders,
      ...(settings.credential === undefined ? undefined : credentialHeader(settings.credential)),
      ...requestHeaders,
      // telemetry: after the configured headers, so this attempt's trace context wins.
      ...call.traceHeaders,
      'content-type': 'application/json',
      accept: this.streaming ? 'text/event-stream' : 'application/json',
      'x-request-id': call.requestId,
    };
    const sent = settings.transport.send({ url, headers, body, onConnected: this.onConnected });
    this.abortTransport = sent.abort;
    // The connect deadline runs while the connection is being set up, when that
    // phase can be observed; otherwise the first-byte deadline bounds it.
    const connectTimeoutMs = settings.connectTimeoutMs;
    if (connectTimeoutMs !== undefined && sent.connect === ConnectObservation.Observed && !this.connected && this.abortedBy === Abort.None) {
      this.connectAt = settings.scheduler.monotonic() + connectTimeoutMs;
      this.rearm();
    }
    const response = await sent.response;
    this.phase = Phase.Reading;
    this.connectAt = NONE;
    this.firstByteAt = NONE;
    // A stream's first read re-arms at once (its idle deadline comes first).
    if (!this.streaming) this.rearm();
    if (response.status >= 200 && response.status <= 299) return response;

    // A 3xx too: redirects are never followed (the body, and the key, would go elsewhere).
    this.failedStatus = response.status;
    const detail = await readErrorDetail(response);
    if (this.abortedBy !== Abort.None) throw abortError({ abort: this.abortedBy, settings, callerReason: call.signal.reason });
    // Anthropic's 529 (overloaded) falls in the 5xx branch: a 502 that says so.
    throw upstreamHttpError(response.status, detail, response.headers.get('retry-after'), response.headers.get('retry-after-ms'));
  }

  /** The whole 2xx body of a non-streaming answer, bounded by maxResponseBytes. */
  protected async readBody(response: UpstreamResponse): Promise<string> {
    const text = await readBodyBounded(response, this.settings.maxResponseBytes);
    this.finished = true;
    return text;
  }

  /** The whole 2xx body as bytes, bounded by maxResponseBytes. */
  protected async readBytes(response: UpstreamResponse, tooLarge?: (limit: number) => ApiError): Promise<Buffer> {
    const bytes = await readBodyBytesBounded(response, this.settings.maxResponseBytes, tooLarge);
    this.finished = true;
    return bytes;
  }

  /** A body chunk is about to be awaited: the idle deadline starts again. */
  protected awaitBytes(): void {
    this.awaitingBytes = true;
    this.idleAt = this.settings.scheduler.monotonic() + this.settings.idleTimeoutMs;
    this.rearm();
  }

  /** The awaited chunk came (or the read failed). The timer stays as it is:
   * when it fires with nothing due it re-arms for what is pending then. */
  protected bytesCame(): void {
    this.awaitingBytes = false;
  }

  /** The client's error for `error`, with what went wrong on the wire noted
   * beside it for the log and /readyz. */
  protected explain(error: unknown): unknown {
    return explainExchangeFailure(error, {
      abort: this.abortedBy,
      phase: this.phase,
      failedStatus: this.failedStatus,
      streaming: this.streaming,
      settings: this.settings,
      callerReason: this.call.signal.reason,
    });
  }

  /** Clears the timer and the listener and aborts the request if still running. Idempotent. */
  protected settle(): void {
    this.settings.scheduler.clearTimer(this.timer);
    this.timer = undefined;
    this.timerAt = NONE;
    if (this.listening) {
      this.listening = false;
      this.call.signal.removeEventListener('abort', this);
    }
    // Once the body was read to its end there is nothing to free; otherwise
    // the abort frees the socket (a consumer that stopped early, or an error mid-body).
    if (!this.finished) this.abortFor(Abort.Closed);
  }

  private abortFor(why: Abort): void {
    if (this.abortedBy !== Abort.None) return;
    this.abortedBy = why;
    this.abortTransport?.(ABORTED);
  }

  /** The earliest pending deadline. */
  private nextDeadline(): number {
    let at = this.totalAt;
    if (this.firstByteAt < at) at = this.firstByteAt;
    if (this.connectAt < at) at = this.connectAt;
    if (this.awaitingBytes && this.idleAt < at) at = this.idleAt;
    return at;
  }

  /** Points the one timer at the earliest pending deadline. */
  private rearm(): void {
    if (this.abortedBy !== Abort.None) return;
    const at = this.nextDeadline();
    if (at === this.timerAt) return;
    const { scheduler } = this.settings;
    // Whole milliseconds, as the deadlines were given: a fresh deadline's
    // delay is exactly its setting (timers of equal delay fire in the order
    // they were set, as a proxy tunnel's own connect timer and ours do).
    const delay = Math.round(at - scheduler.monotonic());
    this.timerAt = at;
    // The idle deadline moves by the same delay on every read: refresh() is
    // cheaper than a new timer.
    if (this.timer !== undefined && delay === this.timerDelay) {
      this.timer.refresh();
      return;
    }
    scheduler.clearTimer(this.timer);
    this.timerDelay = delay;
    this.timer = scheduler.setTimeout(this.onTimer, delay);
  }

  /** The timer fired: abort for the deadline that passed (ties go to the
   * deadline set first: total, first-byte, connect, idle), or re-arm. */
  private expire(): void {
    this.timerAt = NONE;
    const now = this.settings.scheduler.monotonic();
    if (this.totalAt <= now) this.abortFor(Abort.TotalTimeout);
    else if (this.firstByteAt <= now) this.abortFor(Abort.FirstByteTimeout);
    else if (this.connectAt <= now) this.abortFor(Abort.ConnectTimeout);
    else if (this.awaitingBytes && this.idleAt <= now) this.abortFor(Abort.IdleTimeout);
    else this.rearm();
  }
}

/** The key header of this exchange: asked now, so a rotated key is used at once. */
function credentialHeader(credential: UpstreamCredential): Record<string, string> | undefined {
  const key = credential.key();
  return key === undefined ? undefined : { [credential.header]: `${credential.prefix}${key}` };
}

/** A non-streaming exchange: send, read the whole body, decode. */
class CompletionExchange extends Exchange {
  async run(provider: HttpProvider, body: string): Promise<ChatCompletion> {
    const { codec } = provider;
    const { request } = this.call;
    try {
      const response = await this.send(body, codec.requestHeaders?.(request), codec.endpoint?.(request));
      return codec.decode(await this.readBody(response), request);
    } catch (error) {
      throw this.explain(error);
    } finally {
      this.settle();
    }
  }
}

/** A whole answer from `provider`'s upstream, normalised. Throws the client's
 * ApiError, or a ClientAbortError when the caller's signal aborted. */
export function exchangeCompletion(provider: HttpProvider, call: UpstreamCall): Promise<ChatCompletion> {
  let body: string;
  try {
    body = provider.codec.encode(call.request, false);
  } catch (error) {
    // A request the codec cannot express is the client's 400, before any I/O.
    return Promise.reject(error);
  }
  return new CompletionExchange(call, provider.settings, false).run(provider, body);
}
