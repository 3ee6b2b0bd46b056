// The node:http shell: limits, request id, routing, the one error boundary
// and the access log. Handlers know nothing about sockets beyond `res`.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError, internalErrorBody, MethodNotAllowedError, RouteNotFoundError } from '../errors.ts';
import type { ServerLimits } from '../config/config.ts';
import type { LogFields, Logger } from '../log/logger.ts';
import { ClientGoneError } from './json-body.ts';
import { generateRequestId, REQUEST_ID_HEADER, requestIdFromHeader } from './request-id.ts';
import type { Router } from './router.ts';
import { sendError } from './respond.ts';

export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  path: string;
  /** Extra access-log fields a handler adds (alias, key id, ...). Never secrets or text. */
  log: LogFields;
  /** Set by a handler that stopped reading the body early: the connection is closed after the answer. */
  bodyAbandoned: boolean;
}

export type RouteHandler = (ctx: RequestContext) => Promise<void>;

export interface HttpServerOptions {
  router: Router<RouteHandler>;
  limits: ServerLimits;
  logger: Logger;
}

export function createHttpServer(options: HttpServerOptions): http.Server {
  const { router, limits, logger } = options;
  const server = http.createServer({
    maxHeaderSize: limits.maxHeaderBytes,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // node checks the header and request timeouts on this interval (30 s by
    // default), so a slow client could otherwise hold a socket far longer.
    connectionsCheckingInterval: Math.min(1000, Math.ceil(limits.headersTimeoutMs / 2)),
  });

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    void handleRequest(req, res, router, logger);
  });

  // Malformed HTTP, oversize headers, header timeouts: node answers these
  // before any handler runs. Answer in the envelope, then close.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || (err.code === 'ECONNRESET' && socket.destroyed)) {
      socket.destroy();
      return;
    }
    const [status, reason, message] =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', `Request headers exceed the limit of ${limits.maxHeaderBytes} bytes.`]
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'Request Timeout', 'The request was not received in time.']
          : [400, 'Bad Request', 'The request is not valid HTTP.'];
    const body = JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code: null } });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `${REQUEST_ID_HEADER}: ${generateRequestId()}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}

async function handleRequest(req: IncomingMessage, res: ServerResponse, router: Router<RouteHandler>, logger: Logger): Promise<void> {
  const started = process.hrtime.bigint();
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const method = req.method ?? 'GET';
  const ctx: RequestContext = { req, res, requestId: '', path, log: {}, bodyAbandoned: false };

  res.on('close', () => {
    const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
    logger.info('request', {
      requestId: ctx.requestId,
      method,
      path: path.length > 200 ? `${path.slice(0, 200)}...` : path,
      status: res.statusCode,
      durationMs: Math.round(durationMs * 1000) / 1000,
      completed: res.writableFinished,
      ...ctx.log,
    });
  });

  try {
    try {
      ctx.requestId = requestIdFromHeader(req.headers[REQUEST_ID_HEADER]);
    } catch (err) {
      ctx.requestId = generateRequestId();
      throw err;
    } finally {
      res.setHeader(REQUEST_ID_HEADER, ctx.requestId);
    }
    const route = router.match(method, path);
    if (route.kind === 'not_found') throw new RouteNotFoundError(method, path.length > 200 ? `${path.slice(0, 200)}...` : path);
    if (route.kind === 'method_not_allowed') throw new MethodNotAllowedError(method, path, route.allow);
    await route.handler(ctx);
  } catch (err) {
    renderError(ctx, err, logger);
  }
}

/** The error boundary: known errors render themselves; anything else is a generic 500. */
function renderError(ctx: RequestContext, err: unknown, logger: Logger): void {
  const { req, res } = ctx;
  // The client left while its body was arriving: nothing went wrong here and
  // there is no one to answer.
  // (The request line, written when the response closed, says completed: false.)
  if (err instanceof ClientGoneError) {
    res.destroy();
    return;
  }
  if (!(err instanceof ApiError)) {
    logger.error('unexpected error', {
      requestId: ctx.requestId,
      error: err instanceof Error ? err.name : typeof err,
      // Frames only: the first stack line repeats the message, which may quote request data.
      stack: err instanceof Error && err.stack !== undefined ? stackFrames(err.stack) : undefined,
    });
  }
  if (res.headersSent) {
    // A streaming handler renders its own mid-stream errors; reaching here
    // means the response cannot be repaired, only ended.
    res.destroy();
    return;
  }
  ctx.log['error'] = err instanceof ApiError ? (err.code ?? err.type) : 'internal_error';
  // A body we stopped reading must not be parsed as the next request.
  const closeAfter = ctx.bodyAbandoned || !req.complete;
  if (err instanceof ApiError) sendError(res, err.status, err.toBody(), err.headers, closeAfter);
  else sendError(res, 500, internalErrorBody(), {}, closeAfter);
}

function stackFrames(stack: string): string {
  return stack
    .split('\n')
    .filter((line) => line.startsWith('    at '))
    .slice(0, 8)
    .map((line) => line.trim())
    .join(' | ');
}
