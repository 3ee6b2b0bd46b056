// Reading an upstream's answer within bounds: the whole body of a non-stream
// answer (at most maxResponseBytes, counted after content decoding), the
// events of a stream (at most maxEventBytes each, read through the exchange's
// idle clock) and an error body (only for its message). Used by
// ./upstream-exchange.ts, which owns the timers and the abort wiring, over
// either transport's response (./transport.ts).

import { ApiError } from '../errors/api-error.ts';
import { createEventStreamParser, type EventStreamEvent } from '../sse/event-stream-parser.ts';
import type { UpstreamBody, UpstreamResponse } from './transport.ts';
import {
  badUpstreamResponseError,
  readUpstreamErrorDetail,
  type UpstreamErrorDetail,
} from './upstream-errors.ts';

/** An error body is read only for its message; more than this is not worth it. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** The events of a streaming answer, read through the exchange's idle clock. */
export interface EventReads {
  /** Reads one body chunk and returns the events it completed (possibly none;
   * the array is reused by the next call). At the body's end it returns the
   * last ones, and `ended` turns true. Throws EventStreamError for an event
   * larger than maxEventBytes, and whatever the body throws. */
  next(): Promise<readonly EventStreamEvent[]>;
  readonly ended: boolean;
  /** Cancels the body unless it was read to its end (a consumer that left
   * early, or an error), and releases it. */
  close(): Promise<void>;
}

/**
 * Byte reads and event parsing as plain async calls, not a generator stacked
 * under the adapter's own: one generator step per event instead of two, each
 * costing promises and turns.
 */
export function readEventStream(
  response: UpstreamResponse,
  readBytes: (body: UpstreamBody) => Promise<Uint8Array | undefined>,
  maxEventBytes: number,
): EventReads {
  const body = eventStreamBody(response);
  const ready: EventStreamEvent[] = [];
  const parser = createEventStreamParser({ onEvent: (event) => void ready.push(event) }, { maxEventBytes });
  // Not fatal: invalid UTF-8 becomes U+FFFD, as the spec's decode requires.
  const decoder = new TextDecoder('utf-8');
  let ended = false;

  async function next(): Promise<readonly EventStreamEvent[]> {
    // Cleared, not shifted: a burst is handed over as one array.
    ready.length = 0;
    if (ended) return ready;
    const bytes = await readBytes(body);
    if (bytes === undefined) {
      ended = true;
      // An event not closed by a blank line is discarded (the spec).
      parser.feed(decoder.decode());
      parser.end();
    } else {
      parser.feed(decoder.decode(bytes, { stream: true }));
    }
    return ready;
  }

  async function close(): Promise<void> {
    // cancel() never rejects: the reason for leaving is already known.
    if (!ended) await body.cancel();
  }

  return {
    next,
    get ended() {
      return ended;
    },
    close,
  };
}

/** The 2xx body as text, refusing more than `limit` bytes (counted after
 * fetch's content decoding, so a compressed bomb is caught too; the node
 * transport asks for no content coding). */
export async function readBodyBounded(response: UpstreamResponse, limit: number): Promise<string> {
  const declared = response.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) {
    await response.body.cancel();
    throw tooLargeError(limit);
  }
  const text = await readChunks(response.body, limit);
  if (text === undefined) throw tooLargeError(limit);
  return text;
}

function tooLargeError(limit: number): ApiError {
  return badUpstreamResponseError(`The upstream response exceeds the gateway's limit of ${limit} bytes.`);
}

/** The body decoded as UTF-8, or undefined when it crosses `limit` (the rest is
 * cancelled, not read). */
async function readChunks(body: UpstreamBody, limit: number): Promise<string | undefined> {
  const decoder = new TextDecoder('utf-8');
  const parts: string[] = [];
  let total = 0;
  for (;;) {
    const value = await body.read();
    if (value === undefined) break;
    total += value.byteLength;
    if (total > limit) {
      await body.cancel();
      return undefined;
    }
    parts.push(decoder.decode(value, { stream: true }));
  }
  parts.push(decoder.decode());
  return parts.join('');
}

/** The upstream's own error message, if its body has one; never throws.
 * Anthropic's `{"type":"error","error":{"type","message"}}` is read like OpenAI's. */
export async function readErrorDetail(response: UpstreamResponse): Promise<UpstreamErrorDetail | undefined> {
  try {
    const text = await readChunks(response.body, MAX_ERROR_BODY_BYTES);
    if (text === undefined || text.length === 0) return undefined;
    return readUpstreamErrorDetail(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/** The body of a streaming answer; anything but an event stream is refused
 * rather than guessed at (a missing content-type is given the benefit). */
function eventStreamBody(response: UpstreamResponse): UpstreamBody {
  const contentType = response.headers.get('content-type');
  if (contentType !== null) {
    const semicolon = contentType.indexOf(';');
    const mediaType = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
    if (mediaType !== 'text/event-stream') {
      void response.body.cancel();
      throw badUpstreamResponseError('The upstream provider did not answer with an event stream.');
    }
  }
  return response.body;
}
