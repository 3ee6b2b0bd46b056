// Writes server-sent events to a node:http response: OpenAI-style `data:`
// events, or (for Anthropic's Messages streams) events framed by the caller
// with an `event:` field.
// Spec: https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
//
// Never `id:`, `retry:` or comments: openai-python dispatches a spurious empty
// event after a comment once a stream carries `id:` or `retry:` fields
// (../../../shared/CLIENTS.md), so this writer has no way to send them.

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
  /** Whole events already framed by the caller (`event: x\ndata: y\n\n`, see
   * frame()); written, joined and held back exactly as data() is. */
  frames(text: string): Promise<void>;
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
/**
 * What data() returns when the caller may go on at once: one shared, resolved
 * promise, so that a caller writing many events can tell it apart and skip
 * the await (and its turn of the microtask queue).
 */
export const WRITTEN: Promise<void> = Promise.resolve();
const RESOLVED = WRITTEN;

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
  return new SseResponseWriter(res);
}

/** Where the response's listeners find their writer: they are shared by every
 * response, so the writer cannot be in a closure. */
const WRITER: unique symbol = Symbol('sseWriter');
interface WrittenResponse extends ServerResponse {
  [WRITER]?: SseResponseWriter;
}

/** A promise's settling functions, handed out by captureSettlers: an executor
 * made once instead of one per promise (Promise.withResolvers is Node 22+). */
let capturedResolve: () => void = () => {};
let capturedReject: (error: unknown) => void = () => {};
function captureSettlers(resolve: () => void, reject: (error: unknown) => void): void {
  capturedResolve = resolve;
  capturedReject = reject;
}

interface DrainWaiter {
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * The writer's state lives in fields and its steps on the prototype; the
 * response's listeners and the end-of-turn callbacks are static, so a stream
 * makes this object and one function: the write callback, bound once.
 * One writer per response.
 */
export class SseResponseWriter implements SseWriter {
  private readonly res: WrittenResponse;
  private state: State = State.Idle;
  /** start() succeeded; separate from `state`, which may turn Gone first. */
  private started = false;
  private failure: SseWriteError | undefined = undefined;
  /** An event was written: the headers travel with it. */
  private wrote = false;
  /** Events of this event-loop turn not yet handed to the socket. */
  private pending = '';
  private flushScheduled = false;
  /** The socket holdSocket() corked this turn; uncorked at the end of the turn. */
  private heldSocket: Socket | null = null;
  /** Callers held in waitForDrain(), told when the socket drains, the stream
   * fails or ends. Made on first use: most streams never wait for 'drain'. */
  private drainWaiters: DrainWaiter[] | null = null;
  /** The callback of every res.write(), bound to this writer on the first write. */
  private writeCallback: ((error: Error | null | undefined) => void) | null = null;

  constructor(res: ServerResponse) {
    const watched = res as WrittenResponse;
    if (watched[WRITER] !== undefined) throw new Error('This response already has an SSE writer.');
    watched[WRITER] = this;
    this.res = watched;
    res.on('close', SseResponseWriter.onResponseClose);
    res.on('error', SseResponseWriter.onResponseError);
    // Created after the client already left ('close' has fired): say so now.
    if (res.destroyed && !res.writableFinished) {
      this.markGone(new SseWriteError('sse_client_gone', 'The client closed the connection.'));
    }
  }

  private static onResponseClose(this: WrittenResponse): void {
    // The 'error' listener stays: a write after the end is reported through
    // 'error' too, and an unheard 'error' would crash the process.
    this.off('close', SseResponseWriter.onResponseClose);
    const writer = this[WRITER];
    // 'close' also follows a normal end(); only an early one means the client left.
    if (writer === undefined || writer.state === State.Ended || this.writableFinished) return;
    writer.markGone(new SseWriteError('sse_client_gone', 'The client closed the connection.'));
  }

  private static onResponseError(this: WrittenResponse, error: unknown): void {
    this[WRITER]?.markGone(new SseWriteError('sse_write_failed', 'Writing the event stream failed.', error));
  }

  private static onResponseDrain(this: WrittenResponse): void {
    this[WRITER]?.settleDrainWaiters(undefined);
  }

  private static flushHeadersUnlessWritten(writer: SseResponseWriter): void {
    if (writer.state === State.Streaming && !writer.wrote) writer.res.flushHeaders();
  }

  private static flushAtEndOfTurn(writer: SseResponseWriter): void {
    writer.flushAtEndOfTurn();
  }

  private markGone(error: SseWriteError): void {
    // After end() nothing can go wrong any more: the stream is over.
    if (this.failure !== undefined || this.state === State.Ended) return;
    this.failure = error;
    this.state = State.Gone;
    this.settleDrainWaiters(error);
  }

  /** Resolves every waiting caller, or rejects them with `error`. */
  private settleDrainWaiters(error: SseWriteError | undefined): void {
    const waiters = this.drainWaiters;
    if (waiters === null) return;
    this.drainWaiters = null;
    this.res.off('drain', SseResponseWriter.onResponseDrain);
    for (const waiter of waiters) {
      if (error === undefined) waiter.resolve();
      else waiter.reject(error);
    }
  }

  start(headers: Record<string, string> = {}): void {
    if (this.started) throw new SseWriteError('sse_ended', 'start() was already called.');
    // Lower-case keys so a caller's `Content-Type` cannot sit beside ours.
    const merged: Record<string, string> = {};
    for (const name of Object.keys(headers)) merged[name.toLowerCase()] = headers[name] as string;
    Object.assign(merged, EVENT_STREAM_HEADERS);
    // Throws (headers already sent, invalid value) before any state changes,
    // so the caller's error boundary still owns the response.
    this.res.writeHead(200, merged);
    this.started = true;
    if (this.state === State.Gone) return;
    this.state = State.Streaming;
    // The headers go out with the first event in one write when it follows in
    // the same turn (the gateway starts only once the first chunk is in hand);
    // otherwise they are flushed at the end of the turn, so the client sees the
    // 200 before the first event.
    setImmediate(SseResponseWriter.flushHeadersUnlessWritten, this);
  }

  data(payload: string): Promise<void> {
    return this.write(frame('data: ', payload));
  }

  frames(text: string): Promise<void> {
    return this.write(text);
  }

  private write(chunk: string): Promise<void> {
    if (!this.started) {
      return Promise.reject(new SseWriteError('sse_not_started', 'start() must be called before writing events.'));
    }
    if (this.state === State.Ended) return Promise.reject(new SseWriteError('sse_ended', 'The event stream has ended.'));
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const res = this.res;
    if (res.destroyed) {
      this.markGone(new SseWriteError('sse_client_gone', 'The client closed the connection.'));
      return Promise.reject(this.failure);
    }

    this.wrote = true;
    // Someone else ended the response: the write is bound to fail, and this
    // call must be the one that reports it, so it goes to the socket now.
    if (res.writableEnded) {
      this.holdSocket();
      this.flushPending();
      return res.write(chunk, this.onWritten()) ? RESOLVED : this.waitForDrain();
    }
    // The events of one event-loop turn (an upstream read often holds many)
    // are joined and handed to res.write() once, at the end of the turn (or at
    // end()): one HTTP chunk and one socket write per turn instead of one per
    // event, and no promise per event. The pending text is bounded: past
    // MAX_PENDING_CHARS it is written at once, under holdSocket().
    this.pending += chunk;
    if (this.pending.length >= MAX_PENDING_CHARS) {
      this.holdSocket();
      return this.flushPending() ? RESOLVED : this.waitForDrain();
    }
    this.scheduleFlush();
    // An earlier write filled the socket buffer: hold the caller until it drains.
    return res.writableNeedDrain ? this.waitForDrain() : RESOLVED;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(SseResponseWriter.flushAtEndOfTurn, this);
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
  private holdSocket(): void {
    if (this.heldSocket !== null) return;
    const socket = this.res.socket;
    if (socket === null || socket.destroyed) return;
    socket.cork();
    this.heldSocket = socket;
    this.scheduleFlush();
  }

  /** Hands the pending text to the socket; false when its buffer is full. */
  private flushPending(): boolean {
    if (this.pending === '') return !this.res.writableNeedDrain;
    const text = this.pending;
    this.pending = '';
    return this.res.write(text, this.onWritten());
  }

  private flushAtEndOfTurn(): void {
    this.flushScheduled = false;
    // The client left: the text has nowhere to go. After end() nothing is
    // pending: end() sent it.
    if (this.res.destroyed || this.state !== State.Streaming) this.pending = '';
    else this.flushPending();
    const socket = this.heldSocket;
    this.heldSocket = null;
    socket?.uncork();
  }

  /** Resolves on 'drain'; rejects when the client goes or a write fails first. */
  private waitForDrain(): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const promise = new Promise<void>(captureSettlers);
    const waiter: DrainWaiter = { resolve: capturedResolve, reject: capturedReject };
    if (this.drainWaiters === null) {
      this.drainWaiters = [];
      this.res.on('drain', SseResponseWriter.onResponseDrain);
    }
    this.drainWaiters.push(waiter);
    return promise;
  }

  /**
   * The callback of every res.write(). It reports a failed write even when the
   * data() call that queued the text already resolved: the failure is kept and
   * the next call rejects with it, so no write error is lost. A write that
   * failed because the connection is gone (EPIPE, ECONNRESET, a destroyed
   * stream) is the client leaving. Node calls it without a `this`, so it is
   * bound, once per writer.
   */
  private onWritten(): (error: Error | null | undefined) => void {
    return (this.writeCallback ??= SseResponseWriter.written.bind(this));
  }

  private static written(this: SseResponseWriter, error: Error | null | undefined): void {
    if (error === undefined || error === null) return;
    this.markGone(
      CONNECTION_GONE_CODES.has((error as NodeJS.ErrnoException).code ?? '')
        ? new SseWriteError('sse_client_gone', 'The client closed the connection.', error)
        : new SseWriteError('sse_write_failed', 'Writing the event stream failed.', error),
    );
  }

  end(): void {
    const previous = this.state;
    if (previous === State.Ended) return;
    this.state = State.Ended;
    // A caller still waiting for 'drain' learns the stream ended: no 'drain'
    // follows end(), and on Node 20 the queued writes' callbacks never run
    // when the socket is then destroyed. The error is made only for such a
    // caller: an Error (its stack) per cleanly ended stream was a measurable
    // part of a stream's CPU. A later data() rejects with its own (write()).
    if (this.failure === undefined && this.drainWaiters !== null) {
      this.failure = new SseWriteError('sse_ended', 'The event stream has ended.');
      this.settleDrainWaiters(this.failure);
    }
    const res = this.res;
    // Before start() nothing was sent: the caller's error boundary still owns
    // the response.
    if (!this.started || res.destroyed) return;
    // After a failed write the connection cannot carry a well-formed end.
    if (previous === State.Gone) res.destroy();
    else {
      // The last events and the end of the response in one write; the socket
      // is held so that a write earlier in this tick stays its own chunk.
      this.holdSocket();
      const text = this.pending;
      this.pending = '';
      if (text === '') res.end();
      else res.end(text);
    }
  }
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
