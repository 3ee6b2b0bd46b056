// Errors of the state backend that reach clients.
import { ApiError } from '../errors/api-error.ts';

/**
 * 503: the shared state store (Redis) cannot be reached and state.onUnavailable is
 * "refuse", so the gateway will not admit a request it cannot count. The message
 * names no address or internal detail; `cause` keeps the Redis error for logs.
 */
export class StateUnavailableError extends ApiError {
  override name = 'StateUnavailableError';
  /** What was being done: 'admit', 'budgetUsed', 'lookup'. */
  readonly operation: string;
  /** `retryAfterSeconds` defaults to 2: reconnects are attempted within about two seconds (the client's backoff cap). */
  constructor(operation: string, cause?: unknown, options: { message?: string; retryAfterSeconds?: number } = {}) {
    super('state_unavailable', options.message, {
      headers: { 'retry-after': String(options.retryAfterSeconds ?? 2) },
      cause,
    });
    this.operation = operation;
  }
}
