// The codec for upstreams that speak OpenAI's chat-completions API (OpenAI,
// Azure OpenAI, vLLM, llama.cpp, Ollama, LiteLLM, ...): POST
// {baseUrl}/chat/completions over the provider's transport (built-in fetch by
// default, or node:http), a query in baseUrl (Azure's api-version) kept after
// the path. Pure: the exchange itself (deadline, abort, bounded reads, the
// read loop) is ../upstream/upstream-exchange.ts and ../upstream/upstream-stream.ts,
// shared with every HTTP provider; this file owns the headers, the request
// body and the decoding. In Responses passthrough mode a Responses client's
// request goes to {baseUrl}/responses as its own body instead
// (./openai-responses-passthrough.ts); in translate mode (the default) it
// goes to /chat/completions as the gateway's translation, like any chat request.

import { normalizeChunk, normalizeCompletion } from '../chat/completion-response.ts';
import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from '../chat/types.ts';
import type { EventStreamEvent } from '../sse/event-stream-parser.ts';
import { ProviderKind, type HttpProvider, type ProviderCodec, type StreamDecoder } from '../upstream/provider.ts';
import type { Scheduler } from '../time/scheduler.ts';
import type { UpstreamTransport } from '../upstream/transport.ts';
import { upstreamStreamError, upstreamStreamTruncatedError } from '../upstream/upstream-errors.ts';
import { endpointUrl, exchangeSettings, upstreamCredential, upstreamHeaders, type UpstreamKey } from '../upstream/exchange-settings.ts';
import { parseUpstreamJson } from './upstream-json.ts';
import { untranslatableRefusal } from './untranslatable-refusal.ts';
import { translationNotes } from '../chat/door-origin.ts';
import { responsesOrigin } from '../chat/responses-origin.ts';
import type { InvalidRequestError } from '../errors/api-error.ts';
import { decodeResponsesPassthrough, ResponsesPassthrough, ResponsesPassthroughStreamDecoder } from './openai-responses-passthrough.ts';
import { ResponsesMode } from '../config/provider-defaults.ts';


export interface OpenAICompatibleOptions {
  /** e.g. `https://api.openai.com/v1`; a trailing slash is allowed, and a
   * query (`?api-version=2024-10-21`) is kept after `/chat/completions`. */
  baseUrl: string;
  /** Sent as `authorization: Bearer <apiKey>`, or alone under apiKeyHeader; never logged or echoed. A function is asked on every exchange. */
  apiKey?: UpstreamKey;
  /** The header the key goes in: `authorization` (default, with `Bearer `) or
   * another name, e.g. Azure OpenAI's `api-key`, which gets the key alone. */
  apiKeyHeader?: string;
  /** Extra request headers; content-type, accept and x-request-id are ours. */
  headers?: Record<string, string>;
  /** What a Responses client's request becomes at this upstream: its own body
   * to {baseUrl}/responses ("passthrough"), or the gateway's chat translation
   * to /chat/completions ("translate", the default: every chat-completions
   * server takes it). */
  responses?: ResponsesMode;
  /** Top-level fields outside the documented Responses request that a
   * Responses client's body may carry through in passthrough mode, unchecked. Default none. */
  responsesPassthrough?: readonly string[];
  /** The upstream-run Responses tools a client may use here (passthrough); default DEFAULT_RESPONSES_HOSTED_TOOLS. */
  responsesHostedTools?: readonly string[];
  /** Whole exchange, headers to last byte. Default 600000 (10 minutes). */
  timeoutMs?: number;
  /** From sending the request to the response headers. Default 60000. */
  firstByteTimeoutMs?: number;
  /** Connection setup: DNS, TCP, TLS, or waiting for a pooled connection,
   * until the request headers are written. Default: fetch's own (10 s).
   * fetch: observed through undici's diagnostics channels (../upstream/connect-phase.ts);
   * where those cannot be observed, setup stays bounded by firstByteTimeoutMs.
   * node: from the socket's own events (../upstream/node-transport.ts). */
  connectTimeoutMs?: number;
  /** A stream that sends no byte (not even a keep-alive comment) for this
   * long while the gateway waits for one, after the headers. Default 60000. */
  idleTimeoutMs?: number;
  /** Non-stream response body limit (decoded bytes). Default 16 MiB. */
  maxResponseBytes?: number;
  /** Largest single event of a stream. Default 1 MiB. */
  maxEventBytes?: number;
  /** How requests reach the upstream (../upstream/transport.ts); default the built-in fetch. */
  transport?: UpstreamTransport;
  /** What the exchange's timers run on (../time/scheduler.ts); default the system's. */
  scheduler?: Scheduler;
}

const DONE = '[DONE]';

/** The provider: the codec below and the settings of its exchanges, checked once. */
export function createOpenAICompatibleProvider(options: OpenAICompatibleOptions): HttpProvider {
  const keyHeader = keyHeaderOf(options.apiKeyHeader);
  const settings = exchangeSettings(
    chatCompletionsUrl(options.baseUrl),
    upstreamHeaders(options.headers, options.apiKey, ...keyHeader),
    options,
    upstreamCredential(options.apiKey, ...keyHeader),
  );
  if (options.responses !== ResponsesMode.Passthrough) {
    return { kind: ProviderKind.Http, codec: OPENAI_CODEC, settings, refusal: untranslatableRefusal, refusesOnlyDoorRequests: true, requestNotes: translationNotes };
  }
  const codec = new ResponsesPassthroughCodec(endpointUrl(options.baseUrl, 'responses'), new ResponsesPassthrough(options.responsesPassthrough, options.responsesHostedTools));
  // A Responses request goes through whole: no tool is left out of its offer.
  return { kind: ProviderKind.Http, codec, settings, refusal: (request) => codec.refusal(request), refusesOnlyDoorRequests: true };
}

/** An upstream that speaks Responses too: a Responses client's request goes
 * to its /responses as the client's own body (./openai-responses-passthrough.ts);
 * every other request is OPENAI_CODEC's, to /chat/completions. */
class ResponsesPassthroughCodec implements ProviderCodec {
  readonly #url: string;
  readonly #passthrough: ResponsesPassthrough;

  constructor(url: string, passthrough: ResponsesPassthrough) {
    this.#url = url;
    this.#passthrough = passthrough;
  }

  encode(request: ChatRequest, stream: boolean): string {
    const origin = responsesOrigin(request);
    return origin === undefined ? OPENAI_CODEC.encode(request, stream) : this.#passthrough.encode(origin, request, stream);
  }

  decode(text: string, request: ChatRequest): ChatCompletion {
    return responsesOrigin(request) === undefined ? OPENAI_CODEC.decode(text, request) : decodeResponsesPassthrough(text);
  }

  streamDecoder(request: ChatRequest): StreamDecoder {
    return responsesOrigin(request) === undefined ? new OpenAIStreamDecoder() : new ResponsesPassthroughStreamDecoder();
  }

  endpoint(request: ChatRequest): string | undefined {
    return responsesOrigin(request) === undefined ? undefined : this.#url;
  }

  /** A Responses request: the fields this provider does not let through; a
   * Messages request: what its translation cannot say; a chat request: null. */
  refusal(request: ChatRequest): InvalidRequestError | null {
    const origin = responsesOrigin(request);
    return origin === undefined ? untranslatableRefusal(request) : this.#passthrough.refusal(origin);
  }
}

/** OpenAI's chat-completions wire format: the gateway's own, so encoding is
 * JSON and decoding is normalisation. Stateless: one for every provider. */
export const OPENAI_CODEC: ProviderCodec = {
  encode(request: ChatRequest, stream: boolean): string {
    // Usage always travels upstream; the gateway drops the usage chunk when
    // the client did not ask for it.
    return JSON.stringify(stream ? { ...request, stream: true, stream_options: { include_usage: true } } : request);
  },
  decode(text: string): ChatCompletion {
    return normalizeCompletion(parseUpstreamJson(text));
  },
  streamDecoder(): StreamDecoder {
    return new OpenAIStreamDecoder();
  },
};

/** One stream's events to chunks: error frames and `event: error` are the
 * upstream's failure, Azure's empty opening frame is dropped, and the stream
 * must end with [DONE]. */
class OpenAIStreamDecoder implements StreamDecoder {
  #sawDone = false;

  /** Never true: after [DONE] the body is read to its end (upstreams close it
   * right away; the idle and total deadlines bound one that does not), so the
   * connection goes back to the pool instead of being torn down. */
  get done(): boolean {
    return false;
  }

  push(event: EventStreamEvent, out: ChatCompletionChunk[]): void {
    if (this.#sawDone) return;
    if (event.data === DONE) {
      this.#sawDone = true;
      return;
    }
    const raw = parseUpstreamJson(event.data);
    if (isErrorFrame(raw)) throw upstreamStreamError(raw['error']);
    if (event.event === 'error') throw upstreamStreamError(raw);
    if (isEmptyFrame(raw)) return;
    out.push(normalizeChunk(raw));
  }

  end(): void {
    if (!this.#sawDone) throw upstreamStreamTruncatedError();
  }
}

/** The header for the key and what precedes the key in it: Bearer only in Authorization. */
function keyHeaderOf(name: string | undefined): [string, string] {
  const header = (name ?? 'authorization').toLowerCase();
  return [header, header === 'authorization' ? 'Bearer ' : ''];
}

/** `${baseUrl}/chat/completions`, with or without a trailing slash on baseUrl; a query stays after the path. */
export function chatCompletionsUrl(baseUrl: string): string {
  return endpointUrl(baseUrl, 'chat/completions');
}

/**
 * A frame with no choices and no usage carries nothing for the client. Azure
 * OpenAI opens its streams with one (its prompt_filter_results, with an empty
 * id and model and `created: 0`); passed on, it would give the stream's chunks
 * that id and that date.
 */
function isEmptyFrame(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const frame = value as Record<string, unknown>;
  const choices = frame['choices'];
  return Array.isArray(choices) && choices.length === 0 && (frame['usage'] === undefined || frame['usage'] === null);
}

function isErrorFrame(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const error = (value as Record<string, unknown>)['error'];
  return error !== undefined && error !== null;
}
