// A request's lifetime as handlers see it: the context the HTTP shell makes
// for each request (its id, access-log record, abort signal and close hooks),
// the reasons that signal aborts with, the access-log line's shape, and the
// shutdown's answers. The shell that drives it is ./server.ts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../errors/api-error.ts';
import { ERROR_CATALOGUE } from '../errors/catalogue.ts';
import type { LogFields } from '../log/logger.ts';

/**
 * One request's lifetime, made by the shell and passed down, never rebuilt:
 * its id, its access-log record, its abort signal (the client leaving or a
 * shutdown's deadline), and what runs when it closes.
 */
export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  path: string;
  /**
   * The client's address: the socket's peer, or behind a trusted proxy the
   * address X-Forwarded-For names (./client-address.ts). Throttles and logs
   * that key on a client use this, never the socket.
   */
  readonly clientAddress: string;
  /** Extra access-log fields a handler adds (alias, key id, ...). Never secrets or text. */
  log: LogFields;
  /**
   * Aborted, once, when the client closes the connection before the answer
   * was handed to the socket (reason: ClientGoneAbort), or when a shutdown's
   * drain deadline ends the request (reason: ShutdownAbort). Pass it to
   * upstream work.
   */
  readonly signal: AbortSignal;
  /** Runs `fn` when the response closes, however it ends, before the access-log line is written. */
  onClose(fn: () => void): void;
  /** Set by a handler that stopped reading the body early: the connection is closed after the answer. */
  bodyAbandoned: boolean;
  /**
   * Set by a handler with upstream work or a stream of its own: called once when
   * a shutdown's drain deadline passes with this request still open. It stops
   * the upstream work and ends a stream it started with an error frame; a
   * response with no bytes sent yet is answered 503 by the shell afterwards.
   */
  onShutdown: (() => void) | null;
}

export type RouteHandler = (ctx: RequestContext) => Promise<void>;

/**
 * One access-log line: every field always present (null when not known), so a
 * log shipper sees one shape. Handlers add to it through `ctx.log`.
 */
export interface AccessLine extends LogFields {
  requestId: string;
  /** null (with path and totalMs) for an answer to bytes that never became a request: node's parser refused them (400, 408, 431). */
  method: string | null;
  path: string | null;
  /** The client's address (ctx.clientAddress); for bytes that never became a request, the connection's peer. */
  client: string | null;
  /** null when the client left before any answer was written. */
  status: number | null;
  keyId: string | null;
  alias: string | null;
  /** The upstream target that answered, `provider/model`. */
  target: string | null;
  /** Why the alias was chosen (service-auto rules); the alias name when asked for directly. */
  route: string | null;
  stream: boolean | null;
  /** As the upstream reported them. */
  promptTokens: number | null;
  completionTokens: number | null;
  /** What the request was charged, on what basis (usage, reservation, prompt, partial, none), and its cost in nanos and in currency units. */
  charge: string | null;
  chargedTokens: number | null;
  costNanos: number | null;
  cost: number | null;
  /** Time to the status line and headers (the first bytes of the answer). */
  ttfbMs: number | null;
  totalMs: number | null;
  /** The whole answer was handed to the socket. */
  completed: boolean;
  /** The error code of a failed request. */
  error: string | null;
}

/** Message of the 503 answered during a shutdown. */
export const SHUTDOWN_REQUEST_MESSAGE = ERROR_CATALOGUE.server_shutting_down.message;
/** Message of the error frame that ends a stream cut by a shutdown. */
export const SHUTDOWN_STREAM_MESSAGE = 'The gateway is shutting down; the stream was ended before completion.';

/** 503 while the gateway shuts down; the client may retry elsewhere or later. */
export class ShuttingDownError extends ApiError {
  override name = 'ShuttingDownError';
  constructor(message: string = SHUTDOWN_REQUEST_MESSAGE) {
    super('server_shutting_down', message);
  }
}

/** The abort reason when the client closed the connection before the answer was complete. */
export class ClientGoneAbort extends Error {
  override name = 'ClientGoneAbort';
  constructor() {
    super('the client closed the connection');
  }
}

/** The access-log `outcome` of a response ended because its client stopped reading. */
export const CLIENT_WRITE_STALLED = 'client_write_stalled';

/** The abort reason when the client took no bytes for limits.writeStallTimeoutMs
 * while the answer waited: the gateway closed the connection. A client gone, too. */
export class ClientWriteStalledAbort extends ClientGoneAbort {
  override name = 'ClientWriteStalledAbort';
  constructor() {
    super();
    this.message = 'the client took no bytes for limits.writeStallTimeoutMs';
  }
}

/**
 * The abort reason when node's HTTP parser refused the rest of the request
 * while a handler waited for it (the body too slow for limits.requestTimeoutMs,
 * malformed chunking): the shell answered 408 or 400 itself.
 */
export class HttpParseAbort extends Error {
  override name = 'HttpParseAbort';
  constructor() {
    super('the rest of the request was refused by the HTTP parser');
  }
}

/** The abort reason when a shutdown's drain deadline ended the request. */
export class ShutdownAbort extends Error {
  override name = 'ShutdownAbort';
  constructor() {
    super('the gateway is shutting down');
  }
}
