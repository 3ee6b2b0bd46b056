// The one stream pump: an upstream's normalised chunks, through the chunk
// relay (../chat/stream-relay.ts, the wire rules), out as server-sent events.
// Production drives it with the SSE writer on the response; tests drive the
// same function with a recording sink.
import { createChunkRelay, type ChunkRelay, type RelayOptions } from '../chat/stream-relay.ts';
import type { ChatCompletionChunk } from '../chat/types.ts';
import { ApiError } from '../errors/api-error.ts';
import { renderError } from '../errors/render.ts';

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
  /** Given the relay at the start, so the caller can read what was generated and reported however the stream ends. */
  onRelay?(relay: Pick<ChunkRelay, 'usage' | 'generatedBytes'>): void;
}

/**
 * Streams `source` under the relay's rules. Nothing is sent before the first
 * relayed chunk: an upstream that fails first throws here, and the caller's
 * error boundary answers in JSON (a retry or fallback may have happened before
 * it). After the first event a failure is a `data: {"error":...}` frame and
 * the end, never a clean `[DONE]`.
 *
 * One async step per upstream chunk, and every chunk an upstream chunk yields
 * is written without waiting in between: the writer joins the events of a turn
 * into one socket write and holds the pump only when the socket needs draining.
 *
 * Resolves true when the upstream's stream ended and `[DONE]` was written,
 * false when the stream was cut (an error frame, the client gone, a shutdown).
 */
export async function pumpEventStream(source: AsyncIterable<ChatCompletionChunk>, options: RelayOptions, control: PumpControl): Promise<boolean> {
  const chunks = source[Symbol.asyncIterator]();
  const relay = createChunkRelay(options);
  control.onRelay?.(relay);
  let sink: EventSink | undefined;
  let upstreamFailed = false;
  try {
    for (;;) {
      let next: IteratorResult<ChatCompletionChunk>;
      try {
        next = await chunks.next();
      } catch (err) {
        // A failed iterator is closed already; only the relay's own errors
        // below leave it open.
        upstreamFailed = true;
        throw err;
      }
      if (next.done === true) break;
      // A shutdown ended the response while the chunk was on its way.
      if (control.endedForShutdown()) throw new StreamEndedForShutdown();
      const out = relay.push(next.value);
      for (let i = 0; i < out.length; i++) {
        sink ??= control.open();
        await sink.data(JSON.stringify(out[i]));
      }
    }
    const usage = relay.usage;
    if (usage !== undefined) options.onUsage?.(usage);
    const trailing = relay.end();
    sink ??= control.open();
    for (let i = 0; i < trailing.length; i++) await sink.data(JSON.stringify(trailing[i]));
    await sink.data('[DONE]');
    sink.end();
    return true;
  } catch (err) {
    if (!upstreamFailed) await chunks.return?.(undefined).catch(() => undefined);
    // Before the first event the caller's error boundary answers in JSON.
    if (sink === undefined) throw err;
    // The shutdown frame is the stream's last word.
    if (control.endedForShutdown() || control.clientGone()) return false;
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

/** Thrown inside the pump when a shutdown ended the response under it. */
class StreamEndedForShutdown extends Error {
  override name = 'StreamEndedForShutdown';
}
