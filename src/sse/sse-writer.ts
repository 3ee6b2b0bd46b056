// Writes OpenAI-style server-sent events to a node:http response.
// Spec: https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
//
// Only `data:` fields are ever written, never `id:`, `retry:` or comments:
// openai-python dispatches a spurious empty event after a comment once a stream
// carries `id:` or `retry:` fields (../../../shared/CLIENTS.md), so this writer
// has no way to send them.

import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface SseWriter {
  /** Sends status 200 and the event-stream headers at once. `headers` are added
   * first; the four event-stream headers always win. Call exactly once. */
  start(headers?: Record<string, string>): void;
  /** One event whose data is `payload`; every line of the payload becomes its
   * own `data:` line. The events of one event-loop turn leave in one write at
   * its end (or at end()). Resolves at once while the socket takes more, or
   * after 'drain' when its buffer is full. Rejects with SseWriteError when the
   * client has gone or the write fails. */
  data(payload: string): Promise<void>;
  /** Ends the response; harmless when already ended or the client has gone.
   * Before start() it does nothing (the caller still owns the response). */
  end(): void;
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
// Node 22 and later fail the callbacks of writes still queued when the socket is
// destroyed with ECANCELED; Node 20 does not call them.
const CONNECTION_GONE_CODES: ReadonlySet<string> = new Set(['EPIPE', 'ECONNRESET', 'ERR_STREAM_DESTROYED', 'ECONNABORTED', 'ECANCELED']);

/** Pending event text past which it goes to the socket without waiting for
 * the end of the turn (UTF-16 units; a socket buffer's worth). */
const MAX_PENDING_CHARS = 16 * 1024;
const RESOLVED: Promise<void> = Promise.resolve();

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
  /** An event was written: the headers travel with it. */
  let wrote = false;
  /** Events of this event-loop turn not yet handed to the socket. */
  let pending = '';
  let flushScheduled = false;
  /** The socket holdSocket() corked this turn; uncorked at the end of the turn. */
  let heldSocket: Socket | null = null;
  /** Callers held in waitForDrain(), told when the stream fails or ends. A
   * plain set, made on first use: most streams never wait for 'drain', and an
   * AbortController per stream costs a signal and an event target for nothing. */
  let drainWaiters: Set<() => void> | null = null;

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
    // After end() nothing can go wrong any more: the stream is over.
    if (failure !== undefined || state === State.Ended) return;
    failure = error;
    state = State.Gone;
    wakeDrainWaiters();
  }

  function wakeDrainWaiters(): void {
    const waiters = drainWaiters;
    if (waiters === null) return;
    drainWaiters = null;
    for (const wake of waiters) wake();
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
    // Someone else ended the response: the write is bound to fail, and this
    // call must be the one that reports it, so it goes to the socket now.
    if (res.writableEnded) {
      holdSocket();
      flushPending();
      return res.write(chunk, onWritten) ? RESOLVED : waitForDrain();
    }
    // The events of one event-loop turn (an upstream read often holds many)
    // are joined and handed to res.write() once, at the end of the turn (or at
    // end()): one HTTP chunk and one socket write per turn instead of one per
    // event, and no promise per event. The pending text is bounded: past
    // MAX_PENDING_CHARS it is written at once, under holdSocket().
    pending += chunk;
    if (pending.length >= MAX_PENDING_CHARS) {
      holdSocket();
      return flushPending() ? RESOLVED : waitForDrain();
    }
    scheduleFlush();
    // An earlier write filled the socket buffer: hold the caller until it drains.
    return res.writableNeedDrain ? waitForDrain() : RESOLVED;
  }

  function scheduleFlush(): void {
    if (flushScheduled) return;
    flushScheduled = true;
    setImmediate(flushAtEndOfTurn);
  }

  /**
   * Corks the socket (never the response) until the end of the turn, for a
   * write made outside the end-of-turn flush. The response is not corked: on
   * Node 22 and 24 a corked ServerResponse keeps chunks in a buffer of its own
   * that end() overtakes and whose full state never emits 'drain'. The socket
   * is: Node 26 joins the writes of one tick into one HTTP chunk unless the
   * socket is corked, so this keeps the same chunks, and the same bytes, on
   * every Node line.
   */
  function holdSocket(): void {
    if (heldSocket !== null) return;
    const socket = res.socket;
    if (socket === null || socket.destroyed) return;
    socket.cork();
    heldSocket = socket;
    scheduleFlush();
  }

  /** Hands the pending text to the socket; false when its buffer is full. */
  function flushPending(): boolean {
    if (pending === '') return !res.writableNeedDrain;
    const text = pending;
    pending = '';
    return res.write(text, onWritten);
  }

  function flushAtEndOfTurn(): void {
    flushScheduled = false;
    // The client left: the text has nowhere to go. After end() nothing is
    // pending: end() sent it.
    if (res.destroyed || state !== State.Streaming) pending = '';
    else flushPending();
    const socket = heldSocket;
    heldSocket = null;
    socket?.uncork();
  }

  /** Resolves on 'drain'; rejects when the client goes or a write fails first. */
  function waitForDrain(): Promise<void> {
    if (failure !== undefined) return Promise.reject(failure);
    return new Promise<void>((resolve, reject) => {
      const settle = (error: SseWriteError | undefined): void => {
        res.off('drain', onDrain);
        drainWaiters?.delete(onGone);
        if (error === undefined) resolve();
        else reject(error);
      };
      const onDrain = (): void => settle(undefined);
      const onGone = (): void => settle(failure);
      res.on('drain', onDrain);
      (drainWaiters ??= new Set()).add(onGone);
    });
  }

  /**
   * The callback of every res.write(). It reports a failed write even when the
   * data() call that queued the text already resolved: the failure is kept and
   * the next call rejects with it, so no write error is lost. A write that
   * failed because the connection is gone (EPIPE, ECONNRESET, a destroyed
   * stream) is the client leaving.
   */
  function onWritten(error: Error | null | undefined): void {
    if (error === undefined || error === null) return;
    markGone(
      CONNECTION_GONE_CODES.has((error as NodeJS.ErrnoException).code ?? '')
        ? new SseWriteError('sse_client_gone', 'The client closed the connection.', error)
        : new SseWriteError('sse_write_failed', 'Writing the event stream failed.', error),
    );
  }

  function end(): void {
    const previous = state;
    if (previous === State.Ended) return;
    state = State.Ended;
    // A caller still waiting for 'drain' learns the stream ended: no 'drain'
    // follows end(), and on Node 20 the queued writes' callbacks never run
    // when the socket is then destroyed. The error is made only for such a
    // caller: an Error (its stack) per cleanly ended stream was a measurable
    // part of a stream's CPU. A later data() rejects with its own (write()).
    if (failure === undefined && drainWaiters !== null) {
      failure = new SseWriteError('sse_ended', 'The event stream has ended.');
      wakeDrainWaiters();
    }
    // Before start() nothing was sent: the caller's error boundary still owns
    // the response.
    if (!started || res.destroyed) return;
    // After a failed write the connection cannot carry a well-formed end.
    if (previous === State.Gone) res.destroy();
    else {
      // The last events and the end of the response in one write; the socket
      // is held so that a write earlier in this tick stays its own chunk.
      holdSocket();
      const text = pending;
      pending = '';
      if (text === '') res.end();
      else res.end(text);
    }
  }

  return {
    start,
    data,
    end,
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
