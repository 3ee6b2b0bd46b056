// What an upstream failure means for the client, as plain functions over data:
// an HTTP status and the upstream's error body in, an ApiError out. The policy:
// a request the upstream judged invalid is the client's to fix (400, with the
// upstream's own words); anything about the gateway's credentials, model mapping
// or the upstream's health is the gateway's problem (502/504), and its message
// never names the upstream URL, the key or more of the body than the upstream's
// own error message.

import { ApiError, InvalidRequestError, UpstreamError, UpstreamRejectionError } from '../errors/api-error.ts';
import { FailureKind, noteFailureCause } from './failure-cause.ts';
import { retryAfterForClient, retryAfterMsForClient } from './retry-after.ts';

/** Longest upstream error message passed on to a client. */
export const MAX_UPSTREAM_MESSAGE_CHARS = 500;

/** The parts of an upstream error body worth passing on. */
export interface UpstreamErrorDetail {
  message: string;
  param: string | null;
  code: string | null;
}

/** What the upstream itself said about when to come back, before it was
 * normalised for the client: null where it sent no such header. */
interface UpstreamRetryHint {
  retryAfter: string | null;
  retryAfterMs: string | null;
}

/** 429 passed on with a `retry-after` the client can obey. */
export class UpstreamRateLimitError extends ApiError {
  override name = 'UpstreamRateLimitError';
  /** The upstream's own headers, for the dispatcher's retry decision: the
   * `retry-after` a client sees is '1' when the upstream sent none, and a
   * retry should then follow the backoff, not that stand-in. */
  readonly upstreamHint: UpstreamRetryHint;
  constructor(retryAfter: string, retryAfterMs: string | null, upstreamHint?: UpstreamRetryHint) {
    const headers: Record<string, string> = { 'retry-after': retryAfter };
    if (retryAfterMs !== null) headers['retry-after-ms'] = retryAfterMs;
    super('rate_limit_exceeded', 'The upstream provider is rate limiting requests; retry after a pause.', { headers });
    this.upstreamHint = upstreamHint ?? { retryAfter, retryAfterMs };
  }
}

/** The caller aborted the upstream call through `call.signal` (the client left
 * or a gateway deadline passed); `cause` is the signal's reason. Not an ApiError:
 * there is usually nobody left to answer. */
export class ClientAbortError extends Error {
  override name = 'AbortError';
  readonly code = 'client_aborted';
  constructor(reason: unknown) {
    super('The upstream call was aborted by the caller.', { cause: reason });
  }
}

/** True for the error a provider throws when `call.signal` aborted the call. */
export function isClientAbort(error: unknown): error is ClientAbortError {
  return error instanceof ClientAbortError;
}

/**
 * Reads the error out of an upstream's JSON error body. Accepts the shapes
 * OpenAI-compatible servers use: `{"error":{"message",...}}` (OpenAI, llama.cpp),
 * `{"error":"text"}` (Ollama), top-level `{"message",...}` (vLLM) and
 * `{"detail":"text"}` (FastAPI servers). `param` and `code` are kept only when
 * they are strings (vLLM sends a numeric code).
 */
export function readUpstreamErrorDetail(body: unknown): UpstreamErrorDetail | undefined {
  if (!isRecord(body)) return undefined;
  const error = body['error'];
  if (typeof error === 'string') return detail(error, null, null);
  if (isRecord(error)) {
    if (typeof error['message'] === 'string') return detail(error['message'], error['param'], error['code']);
    return undefined;
  }
  if (typeof body['message'] === 'string') return detail(body['message'], body['param'], body['code']);
  if (typeof body['detail'] === 'string') return detail(body['detail'], null, null);
  return undefined;
}

function detail(message: string, param: unknown, code: unknown): UpstreamErrorDetail | undefined {
  const trimmed = truncateMessage(message.trim());
  if (trimmed.length === 0) return undefined;
  return {
    message: trimmed,
    param: typeof param === 'string' && param.length > 0 ? truncateMessage(param) : null,
    code: typeof code === 'string' && code.length > 0 ? truncateMessage(code) : null,
  };
}

/** At most MAX_UPSTREAM_MESSAGE_CHARS, cut on a code point boundary. */
export function truncateMessage(text: string): string {
  if (text.length <= MAX_UPSTREAM_MESSAGE_CHARS) return text;
  let end = MAX_UPSTREAM_MESSAGE_CHARS - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return text.slice(0, end) + '…';
}

/** The upstream answered `status` (not 2xx). `retryAfter*` are its headers. */
export function upstreamHttpError(
  status: number,
  detail: UpstreamErrorDetail | undefined,
  retryAfter: string | null,
  retryAfterMs: string | null,
): ApiError {
  switch (status) {
    case 400:
    case 413:
    case 422:
      // The upstream judged the client's request (its content, its size for
      // this model): the client can act on the upstream's own words.
      if (detail !== undefined) return new UpstreamRejectionError(detail.message, detail.param, detail.code);
      return new InvalidRequestError(
        `The upstream provider rejected the request (HTTP ${status}) without saying why.`,
        null,
        'upstream_rejected_request',
      );
    case 401:
    case 403:
      return new UpstreamError(
        'upstream_auth_failed',
        `The upstream provider refused the gateway's credentials (HTTP ${status}). ` +
          'This is a gateway configuration problem, not a problem with your API key.',
      );
    case 404:
      // The gateway chose the upstream model and URL; a client cannot fix this.
      return new UpstreamError('upstream_not_found');
    case 408:
      return new UpstreamError('upstream_timeout', 'The upstream provider timed out (HTTP 408).');
    case 429:
      return new UpstreamRateLimitError(retryAfterForClient(retryAfter), retryAfterMsForClient(retryAfterMs), {
        retryAfter: boundedHeader(retryAfter),
        retryAfterMs: boundedHeader(retryAfterMs),
      });
    default:
      if (status >= 500 && status <= 599) {
        return new UpstreamError('upstream_error', withDetail(`The upstream provider failed (HTTP ${status})`, detail));
      }
      return new UpstreamError(
        'upstream_error',
        withDetail(`The upstream provider answered with an unexpected HTTP ${status}`, detail),
      );
  }
}

function withDetail(sentence: string, detail: UpstreamErrorDetail | undefined): string {
  return detail === undefined ? `${sentence}.` : `${sentence}: ${detail.message}`;
}

/** A header value kept for parsing later; a huge one is as good as none. */
function boundedHeader(value: string | null): string | null {
  return value !== null && value.length <= 64 ? value : null;
}

/** A `data: {"error":...}` frame inside a stream. */
export function upstreamStreamError(error: unknown): UpstreamError {
  const found = readUpstreamErrorDetail({ error });
  const failure = new UpstreamError('upstream_error', found === undefined ? 'The upstream provider reported an error during the stream.' : found.message);
  // The upstream's own code is not kept: it is free text from the upstream.
  noteFailureCause(failure, { kind: FailureKind.ErrorEvent, detail: 'stream', address: null });
  return failure;
}

export function upstreamTimeoutError(timeoutMs: number, what: 'response headers' | 'the whole response'): UpstreamError {
  return new UpstreamError('upstream_timeout', `The upstream provider did not deliver ${what} within ${timeoutMs} ms.`);
}

/** The connection (DNS, TCP, TLS, a free pooled socket) was not ready within
 * `timeoutMs`, so the request was never sent. */
export function upstreamConnectTimeoutError(timeoutMs: number): UpstreamError {
  return new UpstreamError('upstream_timeout', `The upstream provider did not accept a connection within ${timeoutMs} ms.`);
}

/** A stream that went quiet: no byte, not even a keep-alive comment. */
export function upstreamStreamStalledError(idleTimeoutMs: number): UpstreamError {
  return new UpstreamError('upstream_timeout', `The upstream stream stalled: no data for ${idleTimeoutMs} ms.`);
}

/** A network-level timeout inside fetch, not one of the provider's own timers. */
export function upstreamStalledError(cause: unknown): UpstreamError {
  return new UpstreamError('upstream_timeout', 'The upstream provider stopped responding.', { cause });
}

const NETWORK_TIMEOUT_CODES: ReadonlySet<string> = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'ETIMEDOUT',
]);

/** True when `error` or one of its causes (fetch wraps them in "fetch failed")
 * carries the code of a network timeout. Follows at most 4 causes. */
export function isNetworkTimeout(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_TIMEOUT_CODES.has(code)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

export function upstreamUnreachableError(cause: unknown): UpstreamError {
  return new UpstreamError('upstream_unreachable', undefined, { cause });
}

/** The TLS handshake failed: an unknown CA, a wrong name, a refused client certificate, a version. */
export function upstreamTlsFailedError(cause: unknown): UpstreamError {
  return new UpstreamError('upstream_tls_failed', undefined, { cause });
}

/** The egress proxy refused the tunnel, could not be reached, or closed without answering. */
export function upstreamProxyFailedError(cause: unknown): UpstreamError {
  return new UpstreamError('upstream_proxy_failed', undefined, { cause });
}

export function upstreamConnectionLostError(cause: unknown): UpstreamError {
  return new UpstreamError(
    'upstream_unreachable',
    'The connection to the upstream provider was lost while reading its response.',
    { cause },
  );
}

export function upstreamStreamTruncatedError(cause?: unknown): UpstreamError {
  return new UpstreamError('upstream_stream_truncated', undefined, cause === undefined ? {} : { cause });
}

export function badUpstreamResponseError(message: string, cause?: unknown): UpstreamError {
  return new UpstreamError('bad_upstream_response', message, cause === undefined ? {} : { cause });
}

/**
 * 502: the answer to a strict json_schema request breaks its schema. Named by
 * its class because the dispatcher treats it apart from other bad answers:
 * it falls back like one, but says nothing against the upstream's health.
 * The message is the checker's (a JSON path and what is wrong there, at most
 * a 64-character string of the answer quoted), bounded as an upstream's own.
 */
export class UpstreamSchemaMismatchError extends UpstreamError {
  override name = 'UpstreamSchemaMismatchError';
  /** The JSON path of the first value that breaks the schema (`$` for the whole answer). */
  readonly path: string;
  constructor(violation: { readonly path: string; readonly message: string }) {
    super('upstream_schema_mismatch', truncateMessage(`The upstream's answer does not match the response_format json_schema: ${violation.message}`));
    this.path = violation.path;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
