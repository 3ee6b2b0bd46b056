// The codec for Anthropic's Messages API: POST {baseUrl}/messages over the
// provider's transport, the request and the answer translated to and from OpenAI's
// shapes by ./anthropic-translate.ts. Pure: this file wires the headers and the
// translation; the exchange and its read loop (../upstream/upstream-exchange.ts,
// ../upstream/upstream-stream.ts) are shared with every HTTP provider.
// API: https://docs.anthropic.com/en/api/messages

import type { ChatCompletion, ChatRequest } from '../chat/types.ts';
import { InvalidRequestError } from '../errors/api-error.ts';
import { type AnthropicRequest, createAnthropicStreamTranslator, fromAnthropicResponse, toAnthropicRequest } from './anthropic-translate.ts';
import { ProviderKind, type HttpProvider, type ProviderCodec, type StreamDecoder } from '../upstream/provider.ts';
import type { Scheduler } from '../time/scheduler.ts';
import type { UpstreamTransport } from '../upstream/transport.ts';
import { ANTHROPIC_BASE_URL, ANTHROPIC_VERSION } from '../config/provider-defaults.ts';
import { endpointUrl, exchangeSettings, upstreamCredential, upstreamHeaders, type UpstreamKey } from '../upstream/exchange-settings.ts';
import { parseUpstreamJson } from './upstream-json.ts';
import { translationNotes } from '../chat/door-origin.ts';
import { messagesOrigin } from '../chat/messages-origin.ts';
import { decodePassthrough, MessagesPassthrough, PassthroughStreamDecoder, passthroughPolicy } from './anthropic-passthrough.ts';
import { untranslatableRefusal } from './untranslatable-refusal.ts';


export interface AnthropicOptions {
  /** Default `https://api.anthropic.com/v1`; a trailing slash is allowed. */
  baseUrl?: string;
  /** Sent as `x-api-key`; never logged or echoed. A function is asked on every exchange. */
  apiKey?: UpstreamKey;
  /** Extra request headers (e.g. `anthropic-beta`); content-type, accept and
   * x-request-id are ours, x-api-key is apiKey's when that is set. A
   * configured anthropic-beta is sent with every request, a Messages
   * client's allowed values after it. */
  headers?: Record<string, string>;
  /** Top-level fields outside the documented Messages request that a
   * Messages client's body may carry through, unchecked. Default none. */
  messagesPassthrough?: readonly string[];
  /** The anthropic-beta values a Messages client may send through; ["*"]:
   * any. Default DEFAULT_ANTHROPIC_BETAS (../config/provider-defaults.ts). */
  anthropicBetas?: readonly string[];
  /** The `anthropic-version` header. Default '2023-06-01' (unless `headers` has one). */
  version?: string;
  /** Whole exchange, headers to last byte. Default 600000 (10 minutes). */
  timeoutMs?: number;
  /** From sending the request to the response headers. Default 60000. */
  firstByteTimeoutMs?: number;
  /** A stream that sends no byte (Anthropic's pings count) for this long
   * while the gateway waits for one, after the headers. Default 60000. */
  idleTimeoutMs?: number;
  /** Bound on connection setup; unset: undici's own 10 s. */
  connectTimeoutMs?: number;
  /** Non-stream response body limit (decoded bytes). Default 16 MiB. */
  maxResponseBytes?: number;
  /** Largest single event of a stream. Default 1 MiB. */
  maxEventBytes?: number;
  /** How requests reach the upstream (../upstream/transport.ts); default the built-in fetch. */
  transport?: UpstreamTransport;
  /** What the exchange's timers run on (../time/scheduler.ts); default the system's. */
  scheduler?: Scheduler;
}


export function createAnthropicProvider(options: AnthropicOptions = {}): HttpProvider {
  const settings = exchangeSettings(messagesUrl(options.baseUrl ?? ANTHROPIC_BASE_URL), baseHeadersOf(options), options, upstreamCredential(options.apiKey, 'x-api-key', ''));
  const policy = passthroughPolicy(options.messagesPassthrough, options.anthropicBetas, settings.baseHeaders['anthropic-beta']);
  const codec = new AnthropicCodec(new MessagesPassthrough(policy));
  return {
    kind: ProviderKind.Http,
    codec,
    settings,
    refusal: (request) => codec.refusal(request),
    requestNotes: (request) => codec.requestNotes(request),
  };
}

/** Anthropic's Messages API as a pure codec: a chat request translated by
 * ./anthropic-translate.ts, a Messages client's request passed through by
 * ./anthropic-passthrough.ts. */
class AnthropicCodec implements ProviderCodec {
  /** The dispatcher asks refusal() before the call and the call needs the same
   * translation: each request is translated once. Keyed by the request object,
   * which the dispatcher hands to both, and forgotten with it. */
  readonly #translations = new WeakMap<ChatRequest, AnthropicRequest | InvalidRequestError>();
  readonly #passthrough: MessagesPassthrough;

  constructor(passthrough: MessagesPassthrough) {
    this.#passthrough = passthrough;
  }

  encode(request: ChatRequest, stream: boolean): string {
    const origin = messagesOrigin(request);
    if (origin !== undefined) return this.#passthrough.encode(origin, request, stream);
    const translated = this.#translate(request);
    // A request Anthropic cannot express is the client's 400, before any I/O.
    if (translated instanceof InvalidRequestError) throw translated;
    return JSON.stringify(stream ? { ...translated, stream: true } : translated);
  }

  decode(text: string, request: ChatRequest): ChatCompletion {
    if (messagesOrigin(request) !== undefined) return decodePassthrough(text);
    return fromAnthropicResponse(parseUpstreamJson(text));
  }

  /** The stream translator (./anthropic-stream.ts) is the decoder: message_stop
   * completes the message, whatever follows. A Messages client's stream
   * also carries each event as it came. */
  streamDecoder(request: ChatRequest): StreamDecoder {
    if (messagesOrigin(request) !== undefined) return new PassthroughStreamDecoder();
    return createAnthropicStreamTranslator();
  }

  /** A Messages client's anthropic-version and allowed anthropic-beta values; nothing for a chat request. */
  requestHeaders(request: ChatRequest): Readonly<Record<string, string>> | undefined {
    const origin = messagesOrigin(request);
    return origin === undefined ? undefined : this.#passthrough.headers(origin);
  }

  requestNotes(request: ChatRequest): Readonly<Record<string, string>> | undefined {
    const origin = messagesOrigin(request);
    if (origin === undefined) return translationNotes(request);
    const dropped = this.#passthrough.dropped(origin);
    return dropped === undefined ? undefined : { betasDropped: dropped };
  }

  refusal(request: ChatRequest): InvalidRequestError | null {
    // A Messages client's request is never translated here: its own body goes.
    const origin = messagesOrigin(request);
    if (origin !== undefined) return this.#passthrough.refusal(origin, request);
    const translated = this.#translate(request);
    return translated instanceof InvalidRequestError ? translated : null;
  }

  #translate(request: ChatRequest): AnthropicRequest | InvalidRequestError {
    let translated = this.#translations.get(request);
    if (translated === undefined) {
      // A Responses client's request arrives as the translation: what that cannot say is refused first.
      translated = untranslatableRefusal(request) ?? translateOrRefuse(request);
      this.#translations.set(request, translated);
    }
    return translated;
  }
}

/** The translation without `stream` (each exchange sets its own), or the 400 that says why there is none. */
function translateOrRefuse(request: ChatRequest): AnthropicRequest | InvalidRequestError {
  try {
    return toAnthropicRequest({ ...request, stream: false });
  } catch (error) {
    if (error instanceof InvalidRequestError) return error;
    throw error;
  }
}

/** `${baseUrl}/messages`, with or without a trailing slash on baseUrl; a query
 * stays after the path. Throws TypeError for a URL that cannot work. */
export function messagesUrl(baseUrl: string): string {
  return endpointUrl(baseUrl, 'messages');
}

function baseHeadersOf(options: AnthropicOptions): Headers {
  const headers = upstreamHeaders(options.headers, options.apiKey, 'x-api-key', '');
  try {
    if (options.version !== undefined) headers.set('anthropic-version', options.version);
    else if (!headers.has('anthropic-version')) headers.set('anthropic-version', ANTHROPIC_VERSION);
  } catch {
    throw new TypeError('The anthropic-version contains characters not allowed in a header.');
  }
  return headers;
}
