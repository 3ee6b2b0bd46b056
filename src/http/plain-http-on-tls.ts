// A TLS listener's answer to a client that speaks plain HTTP to it
// (`http://` for an `https://` URL): a 400 in plain HTTP that says to use
// https://, as nginx answers, instead of a handshake failure the client shows
// as "connection reset" or "wrong version number". Every TLS connection opens
// with a handshake record, whose first byte is 0x16; anything else is not TLS.
// The first byte is read before node's TLS layer sees the connection and handed
// back to it (a TLS socket takes over what its raw socket already buffered).
// Until that byte arrives, the connection gets the handshake's own time limit.
import type { Server, Socket } from 'node:net';
import { ApiError } from '../errors/api-error.ts';
import { renderError } from '../errors/render.ts';
import type { Logger } from '../log/logger.ts';
import type { Scheduler } from '../time/scheduler.ts';

/** TLS record content type 22: handshake (RFC 8446 section 5.1). */
const TLS_HANDSHAKE_RECORD = 0x16;
/** How long the client gets to read the answer before the socket is closed. */
export const PLAIN_HTTP_LINGER_MS = 1000;

export interface PlainHttpHintOptions {
  logger: Logger;
  /** The listener's name in the log line ("api", "admin"). */
  name: string;
  /** A connection that sends no byte for this long is closed, as the handshake timeout would. */
  firstByteTimeoutMs: number;
  scheduler: Scheduler;
  /** Header lines (`name: value\r\n`) every answer of this listener carries. */
  rawHeaders: string;
}

/** The answer's bytes, the same for every such connection. */
export function plainHttpAnswer(rawHeaders: string): Buffer {
  const { status, body } = renderError(new ApiError('plain_http_on_tls_port'));
  return Buffer.from(
    `HTTP/1.1 ${status} Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `${rawHeaders}connection: close\r\n\r\n${body}`,
  );
}

/**
 * Puts the check in front of the TLS server's 'connection' listeners (node's
 * own, which starts the handshake): call it right after creating the server,
 * before anything else wraps those listeners.
 */
export function answerPlainHttpOnTls(server: Server, options: PlainHttpHintOptions): void {
  const serve = server.listeners('connection') as Array<(this: Server, socket: Socket) => void>;
  server.removeAllListeners('connection');
  const answer = plainHttpAnswer(options.rawHeaders);
  const { scheduler, logger } = options;
  server.on('connection', (socket: Socket) => {
    // A client gone before its first byte is nothing to report.
    const ignore = (): void => {};
    socket.on('error', ignore);
    const timer = scheduler.setTimeout(() => socket.destroy(), options.firstByteTimeoutMs);
    const settle = (): void => {
      scheduler.clearTimer(timer);
      socket.removeListener('data', onFirst);
      socket.removeListener('close', settle);
    };
    const onFirst = (chunk: Buffer): void => {
      settle();
      socket.pause();
      if (chunk[0] === TLS_HANDSHAKE_RECORD) {
        socket.removeListener('error', ignore);
        socket.unshift(chunk);
        for (const listener of serve) listener.call(server, socket);
        return;
      }
      logger.info('plain HTTP on a TLS port', { listener: options.name, remoteAddress: socket.remoteAddress ?? null });
      refuse(socket, answer, scheduler);
    };
    socket.on('data', onFirst);
    socket.once('close', settle);
  });
}

function refuse(socket: Socket, answer: Buffer, scheduler: Scheduler): void {
  const timer = scheduler.setTimeout(() => socket.destroy(), PLAIN_HTTP_LINGER_MS);
  timer.unref();
  socket.once('close', () => scheduler.clearTimer(timer));
  // A half close, then the rest of the request is read and dropped: closing
  // with it unread would make the kernel send a reset, and the client could
  // lose the answer before reading it.
  socket.once('end', () => socket.destroy());
  socket.end(answer);
  socket.resume();
}
