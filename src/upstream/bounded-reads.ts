// Reading an upstream's answer within bounds: the whole body of a non-stream
// answer (at most maxResponseBytes, counted after content decoding), an error
// body (only for its message), and the check that a streamed answer is an
// event stream (its events are read by ./upstream-stream.ts). Used by
// ./upstream-exchange.ts, which owns the deadline and the abort, over either
// transport's response (./transport.ts).

import { Buffer } from 'node:buffer';
import { ApiError } from '../errors/api-error.ts';
import type { UpstreamBody, UpstreamResponse } from './transport.ts';
import {
  badUpstreamResponseError,
  readUpstreamErrorDetail,
  type UpstreamErrorDetail,
} from './upstream-errors.ts';

/** An error body is read only for its message; more than this is not worth it. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** The 2xx body as text, refusing more than `limit` bytes (counted after
 * fetch's content decoding, so a compressed bomb is caught too; the node
 * transport asks for no content coding). */
export async function readBodyBounded(response: UpstreamResponse, limit: number): Promise<string> {
  refuseDeclaredPast(response, limit);
  const text = await readChunks(response.body, limit);
  if (text === undefined) throw tooLargeError(limit);
  return text;
}

/** The 2xx body as bytes, within `limit` as readBodyBounded: for an answer
 * whose text the caller decodes itself (an embeddings answer, tens of MB of
 * ASCII, needs no UTF-8 decoding chunk by chunk). */
export async function readBodyBytesBounded(response: UpstreamResponse, limit: number, tooLarge: (limit: number) => ApiError = tooLargeError): Promise<Buffer> {
  refuseDeclaredPast(response, limit, tooLarge);
  const body = response.body;
  const parts: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const value = await body.read();
    if (value === undefined) break;
    total += value.byteLength;
    if (total > limit) {
      body.cancel();
      throw tooLarge(limit);
    }
    parts.push(value);
  }
  return Buffer.concat(parts, total);
}

/** A body whose declared length is past `limit` is not read at all. */
function refuseDeclaredPast(response: UpstreamResponse, limit: number, tooLarge: (limit: number) => ApiError = tooLargeError): void {
  const declared = response.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) {
    response.body.cancel();
    throw tooLarge(limit);
  }
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
      body.cancel();
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
export function eventStreamBody(response: UpstreamResponse): UpstreamBody {
  const contentType = response.headers.get('content-type');
  if (contentType !== null) {
    const semicolon = contentType.indexOf(';');
    const mediaType = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
    if (mediaType !== 'text/event-stream') {
      response.body.cancel();
      throw badUpstreamResponseError('The upstream provider did not answer with an event stream.');
    }
  }
  return response.body;
}
