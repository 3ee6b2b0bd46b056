// The adapter for Anthropic's Messages API: POST {baseUrl}/messages with
// built-in fetch, the request and the answer translated to and from OpenAI's
// shapes by ./anthropic-translate.ts. This file only wires the pieces: headers,
// the exchange (./anthropic-exchange.ts) and the stream loop.
// API: https://docs.anthropic.com/en/api/messages

import type { ChatCompletion, ChatCompletionChunk } from '../chat/types.ts';
import { readEventStream } from '../sse/event-stream-reader.ts';
import {
  eventStreamBody,
  type ExchangeSettings,
  messagesUrl,
  openExchange,
  parseJson,
  positiveInteger,
  readBodyBounded,
} from './anthropic-exchange.ts';
import { createAnthropicStreamTranslator, fromAnthropicResponse, toAnthropicRequest } from './anthropic-translate.ts';
import type { ChatProvider, UpstreamCall } from './provider.ts';

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
  /** Longest gap between two stream events (Anthropic's pings count). Default 60000. */
  idleTimeoutMs?: number;
  /** Bound on connection setup; unset: undici's own 10 s. */
  connectTimeoutMs?: number;
  /** Non-stream response body limit (decoded bytes). Default 16 MiB. */
  maxResponseBytes?: number;
  /** Largest single event of a stream. Default 1 MiB. */
  maxEventBytes?: number;
}

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';
export const ANTHROPIC_VERSION = '2023-06-01';
export const DEFAULT_TIMEOUT_MS = 600_000;
export const DEFAULT_FIRST_BYTE_TIMEOUT_MS = 60_000;
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
export const DEFAULT_MAX_EVENT_BYTES = 1024 * 1024;

export function createAnthropicProvider(options: AnthropicOptions = {}): ChatProvider {
  const maxResponseBytes = positiveInteger(options.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES, 'maxResponseBytes');
  const maxEventBytes = positiveInteger(options.maxEventBytes, DEFAULT_MAX_EVENT_BYTES, 'maxEventBytes');
  const settings: ExchangeSettings = {
    endpoint: messagesUrl(options.baseUrl ?? ANTHROPIC_BASE_URL),
    baseHeaders: baseHeadersOf(options),
    timeoutMs: positiveInteger(options.timeoutMs, DEFAULT_TIMEOUT_MS, 'timeoutMs'),
    firstByteTimeoutMs: positiveInteger(options.firstByteTimeoutMs, DEFAULT_FIRST_BYTE_TIMEOUT_MS, 'firstByteTimeoutMs'),
    idleTimeoutMs: positiveInteger(options.idleTimeoutMs, DEFAULT_IDLE_TIMEOUT_MS, 'idleTimeoutMs'),
    connectTimeoutMs: options.connectTimeoutMs === undefined ? undefined : positiveInteger(options.connectTimeoutMs, 0, 'connectTimeoutMs'),
  };

  async function complete(call: UpstreamCall): Promise<ChatCompletion> {
    // A request Anthropic cannot express is the client's 400, before any I/O.
    const body = toAnthropicRequest({ ...call.request, stream: false });
    const exchange = openExchange(call, settings, false);
    try {
      const response = await exchange.send(JSON.stringify(body));
      return fromAnthropicResponse(parseJson(await readBodyBounded(response, maxResponseBytes)));
    } catch (error) {
      throw exchange.explain(error);
    } finally {
      exchange.close();
    }
  }

  async function* stream(call: UpstreamCall): AsyncGenerator<ChatCompletionChunk, void, undefined> {
    const body = toAnthropicRequest({ ...call.request, stream: true });
    const exchange = openExchange(call, settings, true);
    try {
      const response = await exchange.send(JSON.stringify(body));
      const translator = createAnthropicStreamTranslator();
      const events = readEventStream(eventStreamBody(response), {
        maxEventBytes,
        // A keep-alive comment proves the upstream alive as much as a ping.
        onComment: () => exchange.awaitingEvent(),
      });
      // The idle clock runs only while waiting on the upstream, never while
      // the consumer holds a chunk (a slow client is backpressure, not a stall).
      exchange.awaitingEvent();
      for await (const event of events) {
        exchange.eventArrived();
        for (const chunk of translator.push(event)) yield chunk;
        // message_stop: the message is complete, whatever follows.
        if (translator.done) break;
        exchange.awaitingEvent();
      }
      for (const chunk of translator.end()) yield chunk;
    } catch (error) {
      throw exchange.explain(error);
    } finally {
      exchange.close();
    }
  }

  return { complete, stream };
}

function baseHeadersOf(options: AnthropicOptions): Headers {
  let headers: Headers;
  try {
    headers = new Headers(options.headers ?? {});
  } catch {
    // fetch's own message would quote the value, which may be a secret.
    throw new TypeError('The upstream headers contain an invalid header name or value.');
  }
  if (options.apiKey !== undefined && options.apiKey !== '') {
    try {
      headers.set('x-api-key', options.apiKey);
    } catch {
      throw new TypeError('The upstream apiKey contains characters not allowed in a header.');
    }
  }
  try {
    if (options.version !== undefined) headers.set('anthropic-version', options.version);
    else if (!headers.has('anthropic-version')) headers.set('anthropic-version', ANTHROPIC_VERSION);
  } catch {
    throw new TypeError('The anthropic-version contains characters not allowed in a header.');
  }
  headers.set('content-type', 'application/json');
  return headers;
}
