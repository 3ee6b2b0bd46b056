// Every error a client can see, as data with a stable code.
// Known errors render themselves into OpenAI's envelope
// {"error":{"message","type","param","code"}}; anything else reaching the
// HTTP error boundary becomes a generic 500 with no internals.

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'insufficient_quota'
  | 'server_error'
  | 'upstream_error';

export interface ErrorBody {
  error: { message: string; type: ErrorType; param: string | null; code: string | null };
}

export interface ApiErrorOptions {
  param?: string | null;
  code?: string | null;
  headers?: Record<string, string>;
  cause?: unknown;
}

/** Base of every error that is meant to reach a client as an HTTP answer. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  readonly type: ErrorType;
  readonly param: string | null;
  readonly code: string | null;
  readonly headers: Record<string, string>;

  constructor(status: number, type: ErrorType, message: string, options: ApiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
    this.type = type;
    this.param = options.param ?? null;
    this.code = options.code ?? null;
    this.headers = options.headers ?? {};
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** 400: the request breaks the contract. `param` is the path, e.g. `messages[3].tool_call_id`. */
export class InvalidRequestError extends ApiError {
  override name = 'InvalidRequestError';
  constructor(message: string, param: string | null, code: string | null, options: Omit<ApiErrorOptions, 'param' | 'code'> = {}) {
    super(400, 'invalid_request_error', message, { ...options, param, code });
  }
}

/** 401: missing, malformed, unknown or revoked API key. */
export class AuthenticationError extends ApiError {
  override name = 'AuthenticationError';
  constructor(message: string) {
    super(401, 'invalid_request_error', message, {
      code: 'invalid_api_key',
      headers: { 'www-authenticate': 'Bearer realm="portcullis"' },
    });
  }
}

/** 404 for an unknown route. */
export class RouteNotFoundError extends ApiError {
  override name = 'RouteNotFoundError';
  constructor(method: string, path: string) {
    super(404, 'invalid_request_error', `Unknown request URL: ${method} ${path}.`, { code: 'unknown_url' });
  }
}

/** 405 with the methods the path does accept. */
export class MethodNotAllowedError extends ApiError {
  override name = 'MethodNotAllowedError';
  constructor(method: string, path: string, allow: readonly string[]) {
    super(405, 'invalid_request_error', `Method ${method} is not allowed on ${path}; allowed: ${allow.join(', ')}.`, {
      code: 'method_not_allowed',
      headers: { allow: allow.join(', ') },
    });
  }
}

/** 404: the request names a model alias the gateway does not serve. */
export class ModelNotFoundError extends ApiError {
  override name = 'ModelNotFoundError';
  constructor(model: string) {
    super(404, 'invalid_request_error', `The model '${model}' does not exist or you do not have access to it.`, {
      param: 'model',
      code: 'model_not_found',
    });
  }
}

/** 413: the body crossed the size limit; answered without reading the rest. */
export class PayloadTooLargeError extends ApiError {
  override name = 'PayloadTooLargeError';
  constructor(limitBytes: number) {
    super(413, 'invalid_request_error', `Request body exceeds the limit of ${limitBytes} bytes.`, {
      code: 'request_too_large',
    });
  }
}

/** 415: the body is not declared as JSON. */
export class UnsupportedMediaTypeError extends ApiError {
  override name = 'UnsupportedMediaTypeError';
  constructor(contentType: string | undefined) {
    super(
      415,
      'invalid_request_error',
      contentType === undefined
        ? 'Missing Content-Type header; expected application/json.'
        : `Unsupported Content-Type '${contentType.slice(0, 100)}'; expected application/json.`,
      { code: 'unsupported_media_type' },
    );
  }
}

/** 502/504: the upstream provider failed; never blames the client. */
export class UpstreamError extends ApiError {
  override name = 'UpstreamError';
  constructor(status: 502 | 504 | 503, message: string, code: string, options: Omit<ApiErrorOptions, 'code'> = {}) {
    super(status, status === 502 ? 'upstream_error' : 'server_error', message, { ...options, code });
  }
}

/** The generic 500: the only thing a client learns about an unexpected failure. */
export function internalErrorBody(): ErrorBody {
  return {
    error: {
      message: 'The server had an error while processing your request.',
      type: 'server_error',
      param: null,
      code: 'internal_error',
    },
  };
}
