// A request's lifetime as handlers see it: the context the HTTP shell makes
// for each request (its id, access-log record, abort and close hooks), the
// reasons it aborts with, and the shutdown's answers. The shell that drives it is ./server.ts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../errors/api-error.ts';
import { ERROR_CATALOGUE } from '../errors/catalogue.ts';
import type { RenderedError } from '../errors/render.ts';
import type { LogFields } from '../log/logger.ts';
import type { AbortListener, AbortSource } from '../time/abort-source.ts';

/** A door's own error envelope, and the header its clients read the request id from. */
export interface ErrorShape {
  render(error: unknown, requestId: string): RenderedError;
  /** Carries the request id beside x-request-id (Anthropic's SDKs read `request-id`). */
  requestIdHeader?: string;
}

/** The event an abort listener is given. */
const ABORT_EVENT = Object.freeze({ type: 'abort' });

/**
 * One request's lifetime, made by the shell and passed down, never rebuilt:
 * its id, its access-log record, its abort (the client leaving or a shutdown's
 * deadline), and what runs when it closes. A class, so that a request makes
 * one object and no functions: its methods live on the prototype. It is its
 * own abort source (../time/abort-source.ts), so a request makes no
 * AbortController.
 */
export class RequestContext implements AbortSource {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  requestId = '';
  /** The path routed on (a host's base path taken off); handlers read their parameters from it. */
  readonly path: string;
  /**
   * The path as the client sent it, without the query (a host's base path and a
   * framework's mount, Express's req.originalUrl, included): what the access
   * line and the error messages name. `path` unless the request core sets it.
   */
  clientPath: string;
  /**
   * The client's address: the socket's peer, or behind a trusted proxy the
   * address X-Forwarded-For names (./client-address.ts). Throttles and logs
   * that key on a client use this, never the socket.
   */
  readonly clientAddress: string;
  /** Extra access-log fields a handler adds (alias, key id, ...). Never secrets or text. */
  log: LogFields = {};
  /** Set by a handler that stopped reading the body early: the connection is closed after the answer. */
  bodyAbandoned = false;
  /**
   * Set by a handler with upstream work or a stream of its own: called once when
   * a shutdown's drain deadline passes with this request still open. It stops
   * the upstream work and ends a stream it started with an error frame; a
   * response with no bytes sent yet is answered 503 by the shell afterwards.
   */
  onShutdown: (() => void) | null = null;
  /**
   * How an error is answered on this request: set by a handler whose door has
   * its own error shape (Anthropic's Messages); null: OpenAI's envelope
   * (../errors/render.ts).
   */
  renderError: ((error: unknown, requestId: string) => RenderedError) | null = null;
  /** The error code the request was answered with (the access line's `error`): set by the shell's error boundary, or by a stream's error frame. */
  error: string | null = null;
  /** Why it was aborted (always an Error); undefined while it was not. */
  #reason: Error | undefined = undefined;
  #listeners: AbortListener[] | null = null;
  #closeHooks: Array<() => void> | null = null;

  constructor(req: IncomingMessage, res: ServerResponse, path: string, clientAddress: string) {
    this.req = req;
    this.res = res;
    this.path = path;
    this.clientPath = path;
    this.clientAddress = clientAddress;
  }

  /** True once the request was ended from outside (see reason). */
  get aborted(): boolean {
    return this.#reason !== undefined;
  }

  /**
   * Why, once aborted: the client closed the connection before the answer was
   * handed to the socket (ClientGoneAbort), or a shutdown's drain deadline
   * ended the request (ShutdownAbort). undefined while not aborted.
   */
  get reason(): unknown {
    return this.#reason;
  }

  /** The request's abort, to pass to upstream work and waits: the context itself. */
  get signal(): AbortSource {
    return this;
  }

  /** As AbortSignal's: `listener` is told once, when the request is aborted; never after. */
  addEventListener(type: 'abort', listener: AbortListener): void {
    if (type !== 'abort' || this.#reason !== undefined) return;
    (this.#listeners ??= []).push(listener);
  }

  removeEventListener(type: 'abort', listener: AbortListener): void {
    const listeners = this.#listeners;
    if (type !== 'abort' || listeners === null) return;
    const at = listeners.indexOf(listener);
    if (at !== -1) listeners.splice(at, 1);
  }

  /** Runs `fn` when the response closes, however it ends, before the access-log line is written. */
  onClose(fn: () => void): void {
    (this.#closeHooks ??= []).push(fn);
  }

  /** The shell's alone: ends the request's work with `reason`, once. */
  abort(reason: Error): void {
    if (this.#reason !== undefined) return;
    this.#reason = reason;
    const listeners = this.#listeners;
    if (listeners === null) return;
    this.#listeners = null;
    for (let i = 0; i < listeners.length; i++) {
      const listener = listeners[i] as AbortListener;
      try {
        if (typeof listener === 'function') listener.call(this, ABORT_EVENT);
        else listener.handleEvent(ABORT_EVENT);
      } catch (err) {
        // As an AbortSignal's listener would: the others still run, the error is not swallowed.
        process.nextTick(() => {
          throw err;
        });
      }
    }
  }

  /** The shell's alone, at the response's close: runs the close hooks; a throwing hook is reported and the rest still run. */
  runCloseHooks(onFailure: (error: unknown) => void): void {
    const hooks = this.#closeHooks;
    if (hooks === null) return;
    this.#closeHooks = null;
    for (let i = 0; i < hooks.length; i++) {
      try {
        (hooks[i] as () => void)();
      } catch (err) {
        onFailure(err);
      }
    }
  }
}

export type RouteHandler = (ctx: RequestContext) => Promise<void>;

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
