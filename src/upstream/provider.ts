// The seam between the gateway and an upstream: what a provider is. An HTTP
// provider is a pure codec (no I/O, no timers) plus the settings of its
// exchanges; the one exchange loop (./upstream-exchange.ts,
// ./upstream-stream.ts) does the I/O for every type. A local provider (the
// demo) has no upstream and answers by itself, in the same outward shape.
import type { AbortSource } from '../time/abort-source.ts';
import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from '../chat/types.ts';
import type { InvalidRequestError } from '../errors/api-error.ts';
import type { EventStreamEvent } from '../sse/event-stream-parser.ts';
import type { CircuitBreaker } from './circuit-breaker.ts';
import type { ExchangeSettings } from './exchange-settings.ts';

/** What every upstream exchange carries, whatever it asks. */
export interface ExchangeCall {
  /** The request id the client sees; sent upstream as `x-request-id`. */
  requestId: string;
  /** Aborted when the client leaves or a gateway deadline passes. */
  signal: AbortSource;
  /** telemetry: this attempt's `traceparent` (and `tracestate`), sent upstream. */
  traceHeaders?: Readonly<Record<string, string>> | undefined;
}

export interface UpstreamCall extends ExchangeCall {
  /** The validated request, already rewritten for the upstream: `model` is the
   * upstream model name, exactly one of max_tokens / max_completion_tokens is set. */
  request: ChatRequest;
}

/** Turns one streamed answer's events into normalised chunks; one per exchange. */
export interface StreamDecoder {
  /** Appends the chunks `event` produces to `out`. Throws ApiError (502) for an
   * error event or a malformed one. */
  push(event: EventStreamEvent, out: ChatCompletionChunk[]): void;
  /** The body ended: appends what is left to say to `out`; throws 502
   * `upstream_stream_truncated` when the answer never completed. */
  end(out: ChatCompletionChunk[]): void;
  /** True once the answer is complete and the rest of the body is not worth
   * reading (Anthropic's message_stop). A decoder that wants the body read
   * to its end (so the connection is pooled) keeps this false. */
  readonly done: boolean;
}

/** One provider type's wire format, pure. */
export interface ProviderCodec {
  /** The upstream body for `request` (already rewritten for the upstream).
   * Throws the client's 400 when the request cannot be expressed (see refusal). */
  encode(request: ChatRequest, stream: boolean): string;
  /** A whole 2xx answer's text, normalised (the gateway overwrites `model`);
   * `request` is the attempt's (as encoded). Throws ApiError. */
  decode(text: string, request: ChatRequest): ChatCompletion;
  /** A fresh decoder for one streamed answer to `request` (the attempt's, as encoded). */
  streamDecoder(request: ChatRequest): StreamDecoder;
  /** Headers this request needs beyond the provider's fixed ones (the
   * exchange merges them over those), or undefined for none. Only headers
   * the codec owns: never content-type, accept, x-request-id or the key.
   * Absent, or undefined for a plain chat request: the exchange adds nothing. */
  requestHeaders?(request: ChatRequest): Readonly<Record<string, string>> | undefined;
  /** Why `request` cannot be sent without changing its meaning: the 400
   * naming the parameter; null when it can. Pure, so a target that cannot
   * take a request is skipped before any upstream call. Absent: every valid request. */
  refusal?(request: ChatRequest): InvalidRequestError | null;
  /** The URL `request` goes to when it is not the provider's endpoint (a
   * Responses client's own request to an upstream that speaks Responses);
   * undefined: settings.endpoint. Absent: always settings.endpoint. */
  endpoint?(request: ChatRequest): string | undefined;
}

/** What a dispatcher reads from a stream: the chunks of one upstream read at a time. */
export interface UpstreamStream {
  /** The chunks decoded from one upstream read (possibly none), or null at the
   * clean end. Throws the client's ApiError (or a ClientAbortError). */
  next(): Promise<readonly ChatCompletionChunk[] | null>;
  /** Stops reading and frees the request; idempotent. */
  close(): void;
  /** The dispatcher chose this stream: `first` (what next() returned) is
   * handed out again by the next next(), and from then on the stream tells
   * `breaker` how it ended (success at the clean end, the failure when it
   * breaks, nothing when closed early). */
  commit(first: readonly ChatCompletionChunk[], breaker: CircuitBreaker): void;
}

export const ProviderKind = {
  /** An upstream over HTTP: a codec and exchange settings. */
  Http: 'http',
  /** No upstream: the provider answers by itself. */
  Local: 'local',
} as const;

export interface HttpProvider {
  readonly kind: typeof ProviderKind.Http;
  readonly codec: ProviderCodec;
  /** Endpoint, headers, deadlines, limits, transport and scheduler, fixed at config time. */
  readonly settings: ExchangeSettings;
  /** How the upstream counts a request's input tokens; absent: it cannot, and the gateway estimates. */
  readonly tokenCounter?: TokenCounter | undefined;
  /** The codec's refusal, made once with the provider. */
  refusal?(request: ChatRequest): InvalidRequestError | null;
  /** True when `refusal` only ever refuses requests that came through another
   * door than chat completions (Messages, Responses: ../chat/door-origin.ts):
   * a chat request never needs asking (routing skips it). */
  readonly refusesOnlyDoorRequests?: boolean;
  /** What the access line says about `request` at this provider, as its
   * fields (an Anthropic upstream: `betasDropped`, the client's
   * anthropic-beta values it did not pass; a provider that translates a
   * Responses request: `toolsLeftOut`); undefined when there is nothing to say. */
  requestNotes?(request: ChatRequest): Readonly<Record<string, string>> | undefined;
}

export interface LocalProvider {
  readonly kind: typeof ProviderKind.Local;
  /** Non-streaming completion, normalised. Throws ApiError, or the abort's reason. */
  complete(call: UpstreamCall): Promise<ChatCompletion>;
  /** A stream of normalised chunks; waits (if any) on the provider's scheduler. */
  open(call: UpstreamCall): UpstreamStream;
  refusal?(request: ChatRequest): InvalidRequestError | null;
  /** As HttpProvider's. */
  readonly refusesOnlyDoorRequests?: boolean;
  /** As HttpProvider's. */
  requestNotes?(request: ChatRequest): Readonly<Record<string, string>> | undefined;
}

export type ChatProvider = HttpProvider | LocalProvider;

/** What a token count is asked about: one Messages request, in both of its forms. */
export interface TokenCountInput {
  /** The client's validated Messages (or count_tokens) body; its `model` is the client's alias. */
  readonly body: Readonly<Record<string, unknown>>;
  /** The same request as the target's upstream request: `model` is the upstream's. */
  readonly request: ChatRequest;
}

/** An upstream's own token count (count_tokens): one or two JSON exchanges
 * with it, on the provider's transport, deadlines and scheduler. */
export interface TokenCounter {
  /** The config's name for the method: "anthropic", "vllm" or "llamacpp". */
  readonly method: string;
  /** The input tokens the upstream counted (a positive integer). Throws the
   * exchange's ApiError, a TokenCountAnswerError for an answer without a
   * count, or a ClientAbortError when the call's signal aborted. */
  count(input: TokenCountInput, call: UpstreamCall): Promise<number>;
}
