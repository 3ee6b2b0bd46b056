// The gateway's errors as a Messages client reads them: Anthropic's envelope
// `{"type":"error","error":{"type","message"},"request_id"}` with Anthropic's
// status codes and error types (https://docs.claude.com/en/api/errors):
//   400 invalid_request_error   401 authentication_error   403 permission_error
//   404 not_found_error         413 request_too_large      429 rate_limit_error
//   500 api_error               504 timeout_error          529 overloaded_error
// The gateway's own codes keep their meaning and are mapped by status: every
// other 4xx is an invalid_request_error with its status; 502 (an upstream's
// failure) is an api_error with 502; 503 (the gateway or every upstream is
// overloaded, unavailable or shutting down) is 529 overloaded_error, which
// Anthropic's SDKs and Claude Code retry and report as "overloaded".
// The catalogue code stays the access line's `error`. Anthropic's envelope
// has no `param`: a path the OpenAI envelope would carry there starts the
// message instead, as Anthropic's own messages do ("messages.0.content: ...").
import { ApiError } from '../errors/api-error.ts';
import type { RenderedError } from '../errors/render.ts';
import type { AnthropicErrorType } from './message-types.ts';

/** The response header Anthropic's SDKs read the request id from (`_request_id`); the gateway's x-request-id value. */
export const ANTHROPIC_REQUEST_ID_HEADER = 'request-id';

/** Anthropic's status for overloaded; its SDKs retry it. */
export const OVERLOADED_STATUS = 529;

const INTERNAL = new ApiError('internal_error');

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: AnthropicErrorType; message: string };
  request_id: string;
}

/** The status and type an ApiError answers a Messages client with. */
export function anthropicErrorOf(error: ApiError): { status: number; type: AnthropicErrorType } {
  const status = error.status;
  switch (status) {
    case 401:
      return { status, type: 'authentication_error' };
    case 403:
      return { status, type: 'permission_error' };
    case 404:
      return { status, type: 'not_found_error' };
    case 413:
      return { status, type: 'request_too_large' };
    case 429:
      return { status, type: 'rate_limit_error' };
    case 503:
      return { status: OVERLOADED_STATUS, type: 'overloaded_error' };
    case 504:
      return { status, type: 'timeout_error' };
  }
  if (status >= 400 && status < 500) return { status, type: 'invalid_request_error' };
  return { status, type: 'api_error' };
}

/** The message, with the OpenAI envelope's `param` in front when the message does not name it already. */
export function anthropicMessageOf(error: ApiError): string {
  const param = error.param;
  if (param === null || error.message.includes(param)) return error.message;
  return `${param}: ${error.message}`;
}

export function anthropicErrorBody(error: unknown, requestId: string): AnthropicErrorBody {
  const known = error instanceof ApiError ? error : INTERNAL;
  return { type: 'error', error: { type: anthropicErrorOf(known).type, message: anthropicMessageOf(known) }, request_id: requestId };
}

/** The whole answer for `error` (anything that is not an ApiError is the generic 500). */
export function renderAnthropicError(error: unknown, requestId: string): RenderedError {
  const known = error instanceof ApiError ? error : INTERNAL;
  const { status } = anthropicErrorOf(known);
  return { status, headers: known.headers, body: JSON.stringify(anthropicErrorBody(known, requestId)), code: known.code };
}
