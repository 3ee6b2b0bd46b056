// Writes OpenAI-style server-sent events to a node:http response.
// Spec: https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
//
// Only `data:` fields and comments are ever written: openai-python dispatches a
// spurious empty event after a comment once a stream carries `id:` or `retry:`
// fields (../../../shared/CLIENTS.md), so this writer has no way to send them.

import type { ServerResponse } from 'node:http';

export interface SseWriter {
  /** Sends status 200 and the event-stream headers at once. `headers` are added
   * first; the four event-stream headers always win. Call exactly once. */
  start(headers?: Record<string, string>): void;
  /** One event whose data is `payload`; every line of the payload becomes its
   * own `data:` line. Resolves when the bytes are handed to the socket, or after
   * 'drain' when the socket buffer was full. Rejects with SseWriteError when the
   * client has gone or the write fails. */
  data(payload: string): Promise<void>;
  /** A comment line per payload line (`: text`) and a blank line; a keep-alive. */
  comment(text: string): Promise<void>;
  /** Ends the response; harmless when already ended or the client has gone.
   * Before start() it does nothing (the caller still owns the response). */
  end(): void;
  /** Aborted when the client disconnects before end(); pass it to upstream work. */
  readonly signal: AbortSignal;
}

export type SseWriteErrorCode = 'sse_client_gone' | 'sse_write_failed' | 'sse_not_started' | 'sse_ended';

/** The event could not be delivered. `code` says why; `cause` keeps the socket error. */
export class SseWriteError extends Error {
  override name = 'SseWriteError';
  readonly code: SseWriteErrorCode;
  constructor(code: SseWriteErrorCode, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
  }
}

/** Write errors that mean the peer is gone rather than a misuse of the response. */
const CONNECTION_GONE_CODES: ReadonlySet<string> = new Set(['EPIPE', 'ECONNRESET', 'ERR_STREAM_DESTROYED', 'ECONNABORTED']);

const LF = 0x0a;
const CR = 0x0d;

const State = {
  Idle: 'idle',
  Streaming: 'streaming',
  Ended: 'ended',
  /** The connection closed before end(), or a write failed. */
  Gone: 'gone',
} as const;
type State = (typeof State)[keyof typeof State];

const EVENT_STREAM_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  // nginx buffers proxied responses unless told otherwise; events would stall.
  'x-accel-buffering': 'no',
};

export function createSseWriter(res: ServerResponse): SseWriter {
  let state: State = State.Idle;
  /** start() succeeded; separate from `state`, which may turn Gone first. */
  let started = false;
  let failure: SseWriteError | undefined = undefined;
  /** An event went to res.write(): the headers travel with it. */
  let wrote = false;
  let corked = false;
  const uncork = (): void => {
    corked = false;
    if (!res.destroyed) res.uncork();
  };
  const gone = new AbortController();

  function onClose(): void {
    // The 'error' listener stays: a write after the end is reported through
    // 'error' too, and an unheard 'error' would crash the process.
    res.off('close', onClose);
    // 'close' also follows a normal end(); only an early one means the client left.
    if (state === State.Ended || res.writableFinished) return;
    markGone(new SseWriteError('sse_client_gone', 'The client closed the connection.'));
  }

  function onError(error: unknown): void {
    markGone(new SseWriteError('sse_write_failed', 'Writing the event stream failed.', error));
  }

  function markGone(error: SseWriteError): void {
    if (failure !== undefined) return;
    failure = error;
    state = State.Gone;
    gone.abort(error);
  }

  res.on('close', onClose);
  res.on('error', onError);
  // Created after the client already left ('close' has fired): say so now.
  if (res.destroyed && !res.writableFinished) {
    markGone(new SseWriteError('sse_client_gone', 'The client closed the connection.'));
  }

  function start(headers: Record<string, string> = {}): void {
    if (started) throw new SseWriteError('sse_ended', 'start() was already called.');
    // Lower-case keys so a caller's `Content-Type` cannot sit beside ours.
    const merged: Record<string, string> = {};
    for (const name of Object.keys(headers)) merged[name.toLowerCase()] = headers[name] as string;
    Object.assign(merged, EVENT_STREAM_HEADERS);
    // Throws (headers already sent, invalid value) before any state changes,
    // so the caller's error boundary still owns the response.
    res.writeHead(200, merged);
    started = true;
    if (state === State.Gone) return;
    state = State.Streaming;
    // The headers go out with the first event in one write when it follows in
    // the same turn (the gateway starts only once the first chunk is in hand);
    // otherwise they are flushed at the end of the turn, so the client sees the
    // 200 before the first event.
    setImmediate(() => {
      if (state === State.Streaming && !wrote) res.flushHeaders();
    });
  }

  function data(payload: string): Promise<void> {
    return write(frame('data: ', payload));
  }

  function comment(text: string): Promise<void> {
    return write(frame(': ', text));
  }

  function write(chunk: string): Promise<void> {
    if (!started) {
      return Promise.reject(new SseWriteError('sse_not_started', 'start() must be called before writing events.'));
    }
    if (state === State.Ended) return Promise.reject(new SseWriteError('sse_ended', 'The event stream has ended.'));
    if (failure !== undefined) return Promise.reject(failure);
    if (res.destroyed) {
      markGone(new SseWriteError('sse_client_gone', 'The client closed the connection.'));
      return Promise.reject(failure);
    }

    wrote = true;
    return new Promise<void>((resolve, reject) => {
      let flushed = false;
      let settled = false;
      const settle = (error: SseWriteError | undefined): void => {
        if (settled) return;
        settled = true;
        res.off('drain', onDrain);
        gone.signal.removeEventListener('abort', onGone);
        if (error === undefined) resolve();
        else reject(error);
      };
      const onDrain = (): void => settle(undefined);
      const onGone = (): void => settle(failure);

      // The callback reports a failed write even when write() already returned
      // true and this promise resolved: the failure is kept and the next call
      // rejects with it, so no write error is lost.
      // Events written in one event-loop turn (an upstream read often holds
      // many) leave in one socket write: corked now, uncorked at the end of
      // the turn. end() uncorks at once.
      if (!corked) {
        corked = true;
        res.cork();
        setImmediate(uncork);
      }
      flushed = res.write(chunk, (error) => {
        if (error !== undefined && error !== null) {
          // A write that failed because the connection is gone (EPIPE,
          // ECONNRESET, a destroyed stream) is the client leaving.
          markGone(
            CONNECTION_GONE_CODES.has((error as NodeJS.ErrnoException).code ?? '')
              ? new SseWriteError('sse_client_gone', 'The client closed the connection.', error)
              : new SseWriteError('sse_write_failed', 'Writing the event stream failed.', error),
          );
          settle(failure);
        }
      });
      if (flushed) {
        settle(undefined);
        return;
      }
      if (failure !== undefined) {
        settle(failure);
        return;
      }
      res.on('drain', onDrain);
      gone.signal.addEventListener('abort', onGone);
    });
  }

  function end(): void {
    const previous = state;
    if (previous === State.Ended) return;
    state = State.Ended;
    // Before start() nothing was sent: the caller's error boundary still owns
    // the response.
    if (!started || res.destroyed) return;
    // After a failed write the connection cannot carry a well-formed end.
    if (previous === State.Gone) res.destroy();
    else res.end();
  }

  return {
    start,
    data,
    comment,
    end,
    signal: gone.signal,
  };
}

/**
 * `prefix` before every line of `text` and a blank line after: an event's data
 * may not contain a line terminator, so each CRLF, LF or CR starts a new field
 * line ("a single CR not followed by an LF" also ends a line for the parser).
 */
export function frame(prefix: string, text: string): string {
  // JSON.stringify never emits a raw line terminator: the usual case is one line.
  if (text.indexOf('\n') === -1 && text.indexOf('\r') === -1) return prefix + text + '\n\n';
  let out = '';
  let lineStart = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code !== LF && code !== CR) continue;
    out += prefix + text.slice(lineStart, i) + '\n';
    if (code === CR && i + 1 < length && text.charCodeAt(i + 1) === LF) i++;
    lineStart = i + 1;
  }
  return out + prefix + text.slice(lineStart) + '\n\n';
}
