// Errors of the state backend that reach clients.
import { ApiError } from '../errors/api-error.ts';

/**
 * 503: the shared state store (Redis) cannot be reached and state.onUnavailable is
 * "refuse", so the gateway will not admit a request it cannot count. The message
 * names no address or internal detail; `cause` keeps the Redis error for logs.
 */
export class StateUnavailableError extends ApiError {
  override name = 'StateUnavailableError';
  /** What was being done: 'admit', 'budgetUsed'. */
  readonly operation: string;
  constructor(operation: string, cause?: unknown) {
    super('state_unavailable', undefined, {
      // Reconnects are attempted within about two seconds (the client's backoff cap).
      headers: { 'retry-after': '2' },
      cause,
    });
    this.operation = operation;
  }
}
