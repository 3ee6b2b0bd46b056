// What node's HTTP parser refuses: bytes that are not HTTP, headers over
// limits.maxHeaderBytes, headers or a body slower than limits.headersTimeoutMs
// / requestTimeoutMs. node hands them to the shell's 'clientError' listener
// (src/http/server.ts); here they are answered in the envelope, the
// connection is closed, and the answer gets its access-log line like any other
// (the line's writer is here too, shared with the shell's own requests).
import http from 'node:http';
import type { Socket } from 'node:net';
import { ApiError } from '../errors/api-error.ts';
import { renderError } from '../errors/render.ts';
import type { Scheduler } from '../time/scheduler.ts';
import { generateRequestId, REQUEST_ID_HEADER } from './request-id.ts';
import { HttpParseAbort, type RequestContext } from './request-context.ts';
import type { AccessFields } from '../log/access-line.ts';
import { sendError } from './respond.ts';

/**
 * How long a connection answered here may stay open for the client to read the
 * answer. Without a bound a client that never closes its side holds it (and a
 * place under limits.maxConnections) for good: node keeps a half-closed socket.
 */
export const CLOSE_GRACE_MS = 2000;

/** What node's HTTP parser refused (`code` is node's error code). */
export function httpParseError(code: string | undefined, maxHeaderBytes: number): ApiError {
  if (code === 'HPE_HEADER_OVERFLOW') return new ApiError('http_headers_too_large', `Request headers exceed the limit of ${maxHeaderBytes} bytes.`);
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new ApiError('http_request_timeout');
  return new ApiError('http_malformed');
}

/**
 * Answers `error` on `socket` and closes it. When a handler has the request
 * (its body was still arriving), the answer goes through that request's
 * response, so its own access-log line carries the status; the handler is
 * stopped with HttpParseAbort. Otherwise no request ever existed: the line
 * has a fresh request id (also sent in the answer) and null method and path.
 */
export function answerClientError(
  socket: Socket,
  error: ApiError,
  open: RequestContext | undefined,
  logAccess: (fields: AccessFields) => void,
  /** The listener's own headers (the admin listener's security headers), as raw header lines. */
  rawHeaders: string,
  /** Times the grace the client gets to read the answer. */
  scheduler: Scheduler,
): void {
  // Already answered (node reports the end of a socket it is closing as one more error), or gone.
  if (!socket.writable || socket.destroyed) {
    socket.destroy();
    return;
  }
  const rendered = renderError(error);
  if (open !== undefined) {
    const ctx = open;
    if (ctx.res.headersSent) {
      // An answer is under way: an error cannot be written into it, only the connection cut.
      socket.destroy();
      return;
    }
    ctx.error = rendered.code;
    sendError(ctx.res, rendered, true, scheduler);
    ctx.abort(new HttpParseAbort());
    return;
  }
  const requestId = generateRequestId();
  // Read now: a closed socket may no longer know its peer.
  const client = socket.remoteAddress ?? null;
  const { status, body, code } = rendered;
  const grace = scheduler.setTimeout(() => socket.destroy(), CLOSE_GRACE_MS);
  grace.unref();
  socket.once('close', () => {
    scheduler.clearTimer(grace);
    logAccess({ requestId, client, status, completed: socket.writableFinished, error: code });
  });
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `${REQUEST_ID_HEADER}: ${requestId}\r\n${rawHeaders}connection: close\r\n\r\n${body}`,
  );
}
