// The one stream pump, the end of the exchange loop: each upstream read's
// normalised chunks (../upstream/upstream-stream.ts: bytes, event parser,
// decoder), through the chunk relay (../chat/stream-relay.ts, the wire
// rules), out as server-sent events. With an answer guard on the request
// the relay's chunks pass the answer's egress guard (./answer-chunk-guard.ts)
// before they are written; without one the path is the relay's alone.
// Production drives it with the SSE writer on the response; tests drive the
// same function with a recording sink.
import { ChunkRelay, type RelayOptions } from '../chat/stream-relay.ts';
import type { ChatCompletionChunk, Usage } from '../chat/types.ts';
import { ApiError } from '../errors/api-error.ts';
import { renderError } from '../errors/render.ts';
import type { UpstreamStream } from '../upstream/provider.ts';
import { WRITTEN } from '../sse/sse-writer.ts';
import type { AnswerGuard } from '../guard/answer-guard.ts';
import { ChunkGuard } from './answer-chunk-guard.ts';

/** Where the events go: the SSE writer, or a test's recorder. */
export interface EventSink {
  /** One event; resolves when the sink takes more (backpressure). */
  data(payload: string): Promise<void>;
  end(): void;
}

/** What the pump needs from the request it serves. */
export interface PumpControl {
  /** Opens the sink: called once, at the first event (the status line goes with it). */
  open(): EventSink;
  /** A shutdown ended the response with its own frame: stop, writing nothing. */
  endedForShutdown(): boolean;
  /** The client is gone: nothing more can reach it. */
  clientGone(): boolean;
  /** A failure after the first event, as the access log's `error` field. */
  onStreamError(code: string, unexpected: unknown): void;
  /** Called once, when the upstream ends, with the usage it gave (if any), whether or not the client asked for it. */
  noteUsage?(usage: Usage): void;
  /** Given the relay at the start, so the caller can read what was generated and reported however the stream ends. */
  onRelay?(relay: Pick<ChunkRelay, 'usage' | 'generatedBytes'>): void;
  /** The answer's egress guard; null or absent: the answer goes out as the relay gives it. */
  readonly answerGuard?: AnswerGuard | null;
}

/**
 * Streams `source` under the relay's rules. Nothing is sent before the first
 * relayed chunk: an upstream that fails first throws here, and the caller's
 * error boundary answers in JSON (a retry or fallback may have happened before
 * it). After the first event a failure is a `data: {"error":...}` frame and
 * the end, never a clean `[DONE]`.
 *
 * One await per upstream read, and every chunk it yields is written without
 * waiting in between: the writer joins the events of a turn into one socket
 * write and holds the pump only when the socket needs draining.
 *
 * Resolves true when the upstream's stream ended and `[DONE]` was written,
 * false when the stream was cut (an error frame, the client gone, a shutdown).
 */
export async function pumpEventStream(source: UpstreamStream, options: RelayOptions, control: PumpControl): Promise<boolean> {
  const relay = new ChunkRelay(options);
  control.onRelay?.(relay);
  let sink: EventSink | undefined;
  const out: ChatCompletionChunk[] = [];
  const answerGuard = control.answerGuard ?? null;
  const guard = answerGuard === null ? null : new ChunkGuard(answerGuard);
  // The guard's output, when there is a guard: what goes out in place of `out`.
  const guarded: ChatCompletionChunk[] | null = guard === null ? null : [];
  try {
    for (;;) {
      // The one await per upstream read: the chunks decoded from it.
      const batch = await source.next();
      if (batch === null) break;
      if (batch.length === 0) continue;
      // A shutdown ended the response while the chunks were on their way.
      if (control.endedForShutdown()) throw new StreamEndedForShutdown();
      out.length = 0;
      for (let i = 0; i < batch.length; i++) relay.pushInto(batch[i] as ChatCompletionChunk, out);
      let send = out;
      if (guard !== null && guarded !== null) {
        guarded.length = 0;
        for (let i = 0; i < out.length; i++) guard.push(out[i] as ChatCompletionChunk, guarded);
        send = guarded;
      }
      for (let i = 0; i < send.length; i++) {
        sink ??= control.open();
        // The SSE writer answers WRITTEN unless the socket needs draining: no await, no turn, for it.
        const written = sink.data(JSON.stringify(send[i]));
        if (written !== WRITTEN) await written;
      }
    }
    const usage = relay.usage;
    if (usage !== undefined) control.noteUsage?.(usage);
    const trailing = relay.end();
    sink ??= control.open();
    if (guard !== null && guarded !== null) {
      // What the guard held goes out before the relay's trailing chunks (the usage chunk).
      guarded.length = 0;
      guard.end(guarded);
      for (let i = 0; i < guarded.length; i++) await sink.data(JSON.stringify(guarded[i]));
    }
    for (let i = 0; i < trailing.length; i++) await sink.data(JSON.stringify(trailing[i]));
    await sink.data('[DONE]');
    sink.end();
    return true;
  } catch (err) {
    // A failed upstream stream is closed already; closing again is a no-op.
    source.close();
    // Before the first event the caller's error boundary answers in JSON.
    if (sink === undefined) throw err;
    // The shutdown frame is the stream's last word.
    if (control.endedForShutdown() || control.clientGone()) return false;
    // An upstream that failed mid-hold: the text the guard held goes out scanned, ahead of the error frame.
    if (guard !== null && !isGuardFailure(err)) flushHeld(guard, sink);
    const rendered = renderError(err);
    control.onStreamError(rendered.code, err instanceof ApiError ? undefined : err);
    // The frame is queued and the response ended at once, never after a
    // 'drain': a client that stopped reading would hold the pump (and the
    // request) forever. Whether it ever takes the frame is the write-stall
    // limit's to judge; a rejection here only says the client is gone.
    sink.data(rendered.body).catch(() => undefined);
    sink.end();
    return false;
  }
}

function isGuardFailure(err: unknown): boolean {
  return err instanceof ApiError && err.code === 'guard_failed';
}

/** The guard's held text, queued (a failed write only says the client is gone); a guard that fails here sends nothing more of it. */
function flushHeld(guard: ChunkGuard, sink: EventSink): void {
  const held: ChatCompletionChunk[] = [];
  try {
    guard.end(held);
  } catch {
    return;
  }
  for (let i = 0; i < held.length; i++) sink.data(JSON.stringify(held[i])).catch(() => undefined);
}

/** Thrown inside the pump when a shutdown ended the response under it. */
class StreamEndedForShutdown extends Error {
  override name = 'StreamEndedForShutdown';
}
