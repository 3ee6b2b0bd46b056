// Errors of the Redis client, as data with stable codes. None of them is meant
// to reach an API client as is: the state backend built on this client decides
// what a gateway answers when Redis is away (refuse, or fall back to local
// limits), so these extend Error, not ApiError.

/**
 * An error reply from the server (`-ERR ...`, `-NOSCRIPT ...`). `code` is the
 * first word, by Redis convention the error kind: ERR, WRONGTYPE, NOSCRIPT,
 * WRONGPASS, NOAUTH, BUSY, LOADING, READONLY. A top-level error reply rejects
 * the command's promise with this value; one nested in an array reply (an EXEC
 * or a Lua table) stays a value inside the array.
 */
export class RedisReplyError extends Error {
  override name = 'RedisReplyError';
  readonly code: string;
  constructor(message: string) {
    super(message);
    const space = message.indexOf(' ');
    this.code = space === -1 ? message : message.slice(0, space);
  }
}

type RedisProtocolErrorCode =
  | 'redis_protocol_error'
  | 'redis_reply_too_large'
  | 'redis_reply_too_deep'
  | 'redis_decoder_failed';

/**
 * The bytes from the server are not RESP2 or cross a limit. The decoder stays
 * failed and the client drops the connection: after a framing error no later
 * reply can be paired with its command.
 */
export class RedisProtocolError extends Error {
  override name = 'RedisProtocolError';
  readonly code: RedisProtocolErrorCode;
  /** Offset in the connection's byte stream where the problem was seen. */
  readonly offset: number;
  constructor(code: RedisProtocolErrorCode, message: string, offset: number) {
    super(`${message} (at byte ${offset})`);
    this.code = code;
    this.offset = offset;
  }
}

/** Why a command could not get an answer from Redis. */
export type RedisUnavailableReason =
  /** No ready connection (reconnecting, or the first connect failed). */
  | 'not_connected'
  /** The command was sent, then the connection died: it may have run. */
  | 'connection_lost'
  /** No reply within commandTimeoutMs; the connection was dropped. */
  | 'command_timeout'
  /** More than maxQueued commands waiting for a reply. */
  | 'queue_full'
  /** close() was called. */
  | 'closed';

/**
 * Redis could not answer this command. One class for every cause so that a
 * caller applies one policy (refuse, or allow with local limits); `reason`
 * says which cause for logs and metrics. Never retried by the client: a
 * command lost in flight may have run.
 */
export class RedisUnavailableError extends Error {
  override name = 'RedisUnavailableError';
  readonly code = 'redis_unavailable';
  readonly reason: RedisUnavailableReason;
  constructor(reason: RedisUnavailableReason, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.reason = reason;
  }
}

/** A `redis://` URL that cannot be used; the message says what to change. */
export class RedisUrlError extends Error {
  override name = 'RedisUrlError';
  readonly code = 'redis_url_invalid';
}
