// The one place an error becomes what a client reads: the JSON answer, the
// SSE error frame and the HTTP shell's boundary all render through here. A
// known error renders itself; anything else is the generic 500 with no
// internals (the caller logs it).
import { ApiError, type ErrorBody } from './api-error.ts';
import type { ErrorCode } from './catalogue.ts';

export interface RenderedError {
  status: number;
  /** Headers the error carries (Retry-After, Allow, WWW-Authenticate, ...); not Content-Type. */
  headers: Record<string, string>;
  /** The envelope, serialised. */
  body: string;
  /** The catalogue code, for the access log. */
  code: ErrorCode;
}

/** The generic 500: the only thing a client learns about an unexpected failure. */
const INTERNAL_ERROR = new ApiError('internal_error');

export function renderError(error: unknown): RenderedError {
  const known = error instanceof ApiError ? error : INTERNAL_ERROR;
  return { status: known.status, headers: known.headers, body: JSON.stringify(errorBody(known)), code: known.code };
}

/** The envelope as data; anything that is not an ApiError is the generic 500's. */
export function errorBody(error: unknown): ErrorBody {
  return (error instanceof ApiError ? error : INTERNAL_ERROR).toBody();
}
