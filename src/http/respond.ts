// Writing JSON answers. Bodies are serialised once and sent with an exact
// Content-Length.
import type { ServerResponse } from 'node:http';
import type { ErrorBody } from '../errors.ts';

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
 * TCP reset.
 */
export function sendError(res: ServerResponse, status: number, body: ErrorBody, headers: Record<string, string>, closeAfter: boolean): void {
  if (closeAfter) {
    res.shouldKeepAlive = false;
    const socket = res.socket;
    if (socket !== null) lingerAfterFinish(res, socket);
  }
  sendJson(res, status, body, closeAfter ? { ...headers, connection: 'close' } : headers);
}

const LINGER_MS = 2000;
const LINGER_BYTES = 8 * 1024 * 1024;

function lingerAfterFinish(res: ServerResponse, socket: NonNullable<ServerResponse['socket']>): void {
  // node ends the socket after a `connection: close` answer; keep reading
  // (and dropping) what the client is still sending for a short while.
  let dropped = 0;
  const drop = (chunk: Buffer): void => {
    dropped += chunk.length;
    if (dropped > LINGER_BYTES) socket.destroy();
  };
  res.once('finish', () => {
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    socket.on('data', drop);
    socket.resume();
  });
}
