// The adapter for upstreams that speak OpenAI's chat-completions API (OpenAI,
// Azure OpenAI, vLLM, llama.cpp, Ollama, LiteLLM, ...): POST
// {baseUrl}/chat/completions over the provider's transport (built-in fetch by
// default, or node:http), a query in baseUrl (Azure's api-version) kept after the path. The exchange itself (timers, abort wiring, bounded reads) is
// ./upstream-exchange.ts, shared with the Anthropic adapter; this file owns the
// headers, the request body and the stream loop.

import { normalizeChunk, normalizeCompletion } from '../chat/completion-response.ts';
import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from '../chat/types.ts';
import type { EventStreamEvent } from '../sse/event-stream-parser.ts';
import type { ChatProvider, UpstreamCall } from '../upstream/provider.ts';
import type { Scheduler } from '../time/scheduler.ts';
import type { UpstreamTransport } from '../upstream/transport.ts';
import { upstreamStreamError, upstreamStreamTruncatedError } from '../upstream/upstream-errors.ts';
import { endpointUrl, exchangeSettings, openExchange, parseJson, upstreamHeaders } from '../upstream/upstream-exchange.ts';


export interface OpenAICompatibleOptions {
  /** e.g. `https://api.openai.com/v1`; a trailing slash is allowed, and a
   * query (`?api-version=2024-10-21`) is kept after `/chat/completions`. */
  baseUrl: string;
  /** Sent as `authorization: Bearer <apiKey>`, or alone under apiKeyHeader; never logged or echoed. */
  apiKey?: string;
  /** The header the key goes in: `authorization` (default, with `Bearer `) or
   * another name, e.g. Azure OpenAI's `api-key`, which gets the key alone. */
  apiKeyHeader?: string;
  /** Extra request headers; content-type, accept and x-request-id are ours. */
  headers?: Record<string, string>;
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

export function createOpenAICompatibleProvider(options: OpenAICompatibleOptions): ChatProvider {
  const settings = exchangeSettings(
    chatCompletionsUrl(options.baseUrl),
    upstreamHeaders(options.headers, options.apiKey, ...keyHeaderOf(options.apiKeyHeader)),
    options,
  );

  async function complete(call: UpstreamCall): Promise<ChatCompletion> {
    const exchange = openExchange(call, settings, false);
    try {
      const response = await exchange.send(JSON.stringify(call.request));
      const text = await exchange.readBody(response);
      const raw = parseJson(text);
      return normalizeCompletion(raw);
    } catch (error) {
      throw exchange.explain(error);
    } finally {
      exchange.close();
    }
  }

  async function* stream(call: UpstreamCall): AsyncGenerator<ChatCompletionChunk, void, undefined> {
    const exchange = openExchange(call, settings, true);
    try {
      // Usage always travels upstream; the gateway drops the usage chunk when
      // the client did not ask for it.
      const request: ChatRequest = { ...call.request, stream: true, stream_options: { include_usage: true } };
      const response = await exchange.send(JSON.stringify(request));
      const events = exchange.readEvents(response);
      let done = false;
      try {
        while (!events.ended) {
          const ready = await events.next();
          for (let i = 0; i < ready.length; i++) {
            const event = ready[i] as EventStreamEvent;
            // After [DONE] the body is read to its end (upstreams close it right
            // away; the idle and total timers bound one that does not), so the
            // connection goes back to the pool instead of being torn down.
            if (done) continue;
            if (event.data === DONE) {
              done = true;
              continue;
            }
            const raw = parseJson(event.data);
            if (isErrorFrame(raw)) throw upstreamStreamError(raw['error']);
            if (event.event === 'error') throw upstreamStreamError(raw);
            if (isEmptyFrame(raw)) continue;
            yield normalizeChunk(raw);
          }
        }
      } finally {
        // Leaving early (or on an error) frees the connection.
        await events.close();
      }
      if (!done) throw upstreamStreamTruncatedError();
    } catch (error) {
      throw exchange.explain(error);
    } finally {
      exchange.close();
    }
  }

  return { complete, stream };
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
