// Writing JSON answers. Bodies are serialised once and sent with an exact
// Content-Length.
import type { ServerResponse } from 'node:http';
import type { RenderedError } from '../errors/render.ts';
import { systemScheduler, type Scheduler } from '../time/scheduler.ts';

const JSON_TYPE = 'application/json';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * An error in OpenAI's envelope. With `closeAfter` the connection is closed
 * once the answer is out: the client's unread body must never be parsed as a
 * next request. The socket is half-closed first and the rest of the body is
 * discarded for a bounded time, so the client reads the answer instead of a
 * TCP reset. `scheduler` times that discarding.
 */
export function sendError(res: ServerResponse, error: RenderedError, closeAfter: boolean, scheduler: Scheduler = systemScheduler): void {
  if (closeAfter) {
    res.shouldKeepAlive = false;
    const socket = res.socket;
    if (socket !== null) lingerAfterFinish(res, socket, scheduler);
  }
  const headers = closeAfter ? { ...error.headers, connection: 'close' } : error.headers;
  res.writeHead(error.status, { ...headers, 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(error.body) });
  res.end(error.body);
}

export const LINGER_MS = 2000;

/**
 * A lingering close. After a `connection: close` answer node calls
 * socket.destroySoon(), which destroys the socket once our FIN is out; if the
 * client is still sending, the unread bytes make the kernel answer with a TCP
 * reset, and the client may see EPIPE/ECONNRESET before it has read the answer.
 * Here the socket is only half-closed: node's request dump keeps reading and
 * dropping the client's bytes (never parsing them), the client reads the
 * answer and closes, and a timer bounds how long that may take.
 */
function lingerAfterFinish(res: ServerResponse, socket: NonNullable<ServerResponse['socket']>, scheduler: Scheduler): void {
  socket.destroySoon = function halfClose(this: typeof socket): void {
    if (this.writable) this.end();
  };
  res.once('finish', () => {
    const timer = scheduler.setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => scheduler.clearTimer(timer));
  });
}

/**
 * A large JSON answer written piece by piece (`pieces` made as they are
 * written: the whole text never exists at once), each write waiting for the
 * socket to take the last when its buffer is full. Chunked: no Content-Length.
 * Resolves once written, or as soon as the client is gone (a client that stops
 * reading is ended by the shell's write-stall limit).
 */
export async function sendJsonPieces(res: ServerResponse, status: number, pieces: Iterable<string>, headers: Record<string, string> = {}): Promise<void> {
  res.writeHead(status, { ...headers, 'content-type': JSON_TYPE });
  for (const piece of pieces) {
    if (res.destroyed) return;
    if (!res.write(piece)) await drainedOrClosed(res);
  }
  if (!res.destroyed) res.end();
}

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
