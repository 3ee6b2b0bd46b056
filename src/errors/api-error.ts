// Every error a client can see, as data with a stable code from the catalogue
// (./errors/catalogue.ts), which fixes its HTTP status and OpenAI `type`.
// ./errors/render.ts turns one into the envelope
// {"error":{"message","type","param","code"}}; anything else becomes the
// generic 500 with no internals.
import { catalogueEntry, type ErrorCode, type ErrorType, type InvalidRequestCode, type UpstreamErrorCode } from './catalogue.ts';

export type { ErrorCode, ErrorType } from './catalogue.ts';

export interface ErrorBody {
  error: { message: string; type: ErrorType; param: string | null; code: string | null };
}

interface ApiErrorOptions {
  param?: string | null;
  headers?: Record<string, string>;
  cause?: unknown;
  /** The catalogue entry's `alsoType`, where one answer keeps an older type. */
  type?: ErrorType;
}

/** Base of every error that is meant to reach a client as an HTTP answer. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: ErrorType;
  readonly param: string | null;
  readonly headers: Record<string, string>;

  /** `message` may be left out where the catalogue has the code's one sentence. */
  constructor(code: ErrorCode, message?: string, options: ApiErrorOptions = {}) {
    const entry = catalogueEntry(code);
    super(message ?? entry.message ?? `${entry.type} (${code}).`, options.cause === undefined ? undefined : { cause: options.cause });
    if (options.type !== undefined && options.type !== entry.type && options.type !== entry.alsoType) {
      throw new TypeError(`error code ${code} is not of type ${options.type}`);
    }
    this.code = code;
    this.status = entry.status;
    this.type = options.type ?? entry.type;
    this.param = options.param ?? null;
    this.headers = options.headers ?? {};
  }

  /** The envelope's `code`: the catalogue code, or null where the catalogue says so. */
  get envelopeCode(): string | null {
    return catalogueEntry(this.code).envelopeNull === true ? null : this.code;
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.envelopeCode } };
  }
}

/** 400: the request breaks the contract. `param` is the path, e.g. `messages[3].tool_call_id`. */
export class InvalidRequestError extends ApiError {
  override name = 'InvalidRequestError';
  constructor(message: string, param: string | null, code: InvalidRequestCode, options: Omit<ApiErrorOptions, 'param' | 'type'> = {}) {
    super(code, message, { ...options, param });
  }
}

/**
 * 400: an upstream judged the client's request invalid and said why; its own
 * words, param and code are relayed (the client can act on them). The
 * catalogue code, for logs and retries, is `upstream_rejected_request`.
 */
export class UpstreamRejectionError extends InvalidRequestError {
  override name = 'UpstreamRejectionError';
  /** The upstream's own code, as relayed; null when it sent none. */
  readonly upstreamCode: string | null;
  constructor(message: string, param: string | null, upstreamCode: string | null) {
    super(message, param, 'upstream_rejected_request');
    this.upstreamCode = upstreamCode;
  }

  override get envelopeCode(): string | null {
    return this.upstreamCode;
  }
}

/** 401: missing, malformed, unknown or revoked API key. */
export class AuthenticationError extends ApiError {
  override name = 'AuthenticationError';
  constructor(message: string) {
    super('invalid_api_key', message, { headers: { 'www-authenticate': 'Bearer realm="portcullis"' } });
  }
}

/** Characters of an unknown path quoted in its 404 (the path is the client's, of any length). */
const QUOTED_PATH_MAX = 200;

/** 404 for an unknown route. */
export class RouteNotFoundError extends ApiError {
  override name = 'RouteNotFoundError';
  constructor(method: string, path: string) {
    const quoted = path.length > QUOTED_PATH_MAX ? `${path.slice(0, QUOTED_PATH_MAX)}...` : path;
    super('unknown_url', `Unknown request URL: ${method} ${quoted}.`);
  }
}

/** 405 with the methods the path does accept. */
export class MethodNotAllowedError extends ApiError {
  override name = 'MethodNotAllowedError';
  constructor(method: string, path: string, allow: readonly string[]) {
    super('method_not_allowed', `Method ${method} is not allowed on ${path}; allowed: ${allow.join(', ')}.`, {
      headers: { allow: allow.join(', ') },
    });
  }
}

/** 404: the request names a model alias the gateway does not serve. */
export class ModelNotFoundError extends ApiError {
  override name = 'ModelNotFoundError';
  /** `usable`: the model names the caller may use, named in the message when given. */
  constructor(model: string, usable?: readonly string[]) {
    const hint = usable === undefined ? '' : usable.length === 0 ? ' This API key may use no model.' : ` Models this API key may use: ${usable.join(', ')}.`;
    super('model_not_found', `The model '${model}' does not exist or you do not have access to it.${hint}`, { param: 'model' });
  }
}

/** 413: the body crossed the size limit; answered without reading the rest. */
export class PayloadTooLargeError extends ApiError {
  override name = 'PayloadTooLargeError';
  constructor(limitBytes: number) {
    super('request_too_large', `Request body exceeds the limit of ${limitBytes} bytes.`);
  }
}

/** 415: the body is not declared as JSON. */
export class UnsupportedMediaTypeError extends ApiError {
  override name = 'UnsupportedMediaTypeError';
  constructor(contentType: string | undefined) {
    super(
      'unsupported_media_type',
      contentType === undefined
        ? 'Missing Content-Type header; expected application/json.'
        : `Unsupported Content-Type '${contentType.slice(0, 100)}'; expected application/json.`,
    );
  }
}

/** 502/503/504: the upstream provider failed; never blames the client. */
export class UpstreamError extends ApiError {
  override name = 'UpstreamError';
  constructor(code: UpstreamErrorCode, message?: string, options: Omit<ApiErrorOptions, 'type'> = {}) {
    super(code, message, options);
  }
}
