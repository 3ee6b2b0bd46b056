// The adapter for Anthropic's Messages API: POST {baseUrl}/messages over the
// provider's transport, the request and the answer translated to and from OpenAI's
// shapes by ./anthropic-translate.ts. This file only wires the pieces: headers,
// the exchange (./upstream-exchange.ts, shared with the OpenAI-compatible
// adapter) and the stream loop.
// API: https://docs.anthropic.com/en/api/messages

import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from '../chat/types.ts';
import { InvalidRequestError } from '../errors/api-error.ts';
import type { EventStreamEvent } from '../sse/event-stream-parser.ts';
import { type AnthropicRequest, createAnthropicStreamTranslator, fromAnthropicResponse, toAnthropicRequest } from './anthropic-translate.ts';
import type { ChatProvider, UpstreamCall } from '../upstream/provider.ts';
import type { Scheduler } from '../time/scheduler.ts';
import type { UpstreamTransport } from '../upstream/transport.ts';
import { ANTHROPIC_BASE_URL, ANTHROPIC_VERSION } from '../config/provider-defaults.ts';
import { endpointUrl, exchangeSettings, openExchange, parseJson, upstreamHeaders } from '../upstream/upstream-exchange.ts';


export interface AnthropicOptions {
  /** Default `https://api.anthropic.com/v1`; a trailing slash is allowed. */
  baseUrl?: string;
  /** Sent as `x-api-key`; never logged or echoed. */
  apiKey?: string;
  /** Extra request headers (e.g. `anthropic-beta`); content-type, accept and
   * x-request-id are ours, x-api-key is apiKey's when that is set. */
  headers?: Record<string, string>;
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


export function createAnthropicProvider(options: AnthropicOptions = {}): ChatProvider {
  const settings = exchangeSettings(messagesUrl(options.baseUrl ?? ANTHROPIC_BASE_URL), baseHeadersOf(options), options);
  // The dispatcher asks refusal() before the call and the call needs the same
  // translation: each request is translated once. Keyed by the request object,
  // which the dispatcher hands to both, and forgotten with it.
  const translations = new WeakMap<ChatRequest, AnthropicRequest | InvalidRequestError>();
  const translate = (request: ChatRequest): AnthropicRequest | InvalidRequestError => {
    let translated = translations.get(request);
    if (translated === undefined) {
      translated = translateOrRefuse(request);
      translations.set(request, translated);
    }
    return translated;
  };
  /** The body for one exchange; a request Anthropic cannot express is the client's 400, before any I/O. */
  const bodyOf = (request: ChatRequest, stream: boolean): AnthropicRequest => {
    const translated = translate(request);
    if (translated instanceof InvalidRequestError) throw translated;
    return stream ? { ...translated, stream: true } : translated;
  };

  async function complete(call: UpstreamCall): Promise<ChatCompletion> {
    const body = bodyOf(call.request, false);
    const exchange = openExchange(call, settings, false);
    try {
      const response = await exchange.send(JSON.stringify(body));
      const text = await exchange.readBody(response);
      return fromAnthropicResponse(parseJson(text));
    } catch (error) {
      throw exchange.explain(error);
    } finally {
      exchange.close();
    }
  }

  async function* stream(call: UpstreamCall): AsyncGenerator<ChatCompletionChunk, void, undefined> {
    const body = bodyOf(call.request, true);
    const exchange = openExchange(call, settings, true);
    try {
      const response = await exchange.send(JSON.stringify(body));
      const translator = createAnthropicStreamTranslator();
      // The idle clock runs only while bytes are awaited (pings and keep-alive
      // comments count), never while the consumer holds a chunk: a slow
      // client is backpressure, not a stall.
      const events = exchange.readEvents(response);
      try {
        // message_stop: the message is complete, whatever follows.
        while (!events.ended && !translator.done) {
          const ready = await events.next();
          for (let i = 0; i < ready.length && !translator.done; i++) {
            for (const chunk of translator.push(ready[i] as EventStreamEvent)) yield chunk;
          }
        }
      } finally {
        await events.close();
      }
      for (const chunk of translator.end()) yield chunk;
    } catch (error) {
      throw exchange.explain(error);
    } finally {
      exchange.close();
    }
  }

  function refusal(request: ChatRequest): InvalidRequestError | null {
    const translated = translate(request);
    return translated instanceof InvalidRequestError ? translated : null;
  }

  return { complete, stream, refusal };
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
