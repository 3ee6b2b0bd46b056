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

/** 400: continuing or storing would take a conversation past responses.store's bounds; nothing was stored. */
export class ConversationTooLongError extends ApiError {
  override name = 'ConversationTooLongError';
  constructor(message: string, param: string | null) {
    super('conversation_too_long', message, { param });
  }
}

/** 503: responses.store.maxTotalBytes is held by live records, expired ones already removed. */
export class ResponseStoreFullError extends ApiError {
  override name = 'ResponseStoreFullError';
  constructor() {
    super('response_store_full');
  }
}

/** A put naming an id the store already holds: ids are random, so this is a bug, never a client's doing. */
export class DuplicateResponseIdError extends Error {
  override name = 'DuplicateResponseIdError';
  readonly code = 'duplicate_response_id';
  constructor(id: string) {
    super(`The response store already holds ${id}; nothing was stored.`);
  }
}
