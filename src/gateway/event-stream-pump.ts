// The one stream pump, the end of the exchange loop: each upstream read's
// normalised chunks (../upstream/upstream-stream.ts: bytes, event parser,
// decoder), through the chunk relay (../chat/stream-relay.ts, the wire
// rules), out as server-sent events.
// Production drives it with the SSE writer on the response; tests drive the
// same function with a recording sink.
import { ChunkRelay, type RelayOptions } from '../chat/stream-relay.ts';
import type { ChatCompletionChunk, Usage } from '../chat/types.ts';
import { ApiError } from '../errors/api-error.ts';
import { renderError } from '../errors/render.ts';
import type { UpstreamStream } from '../upstream/provider.ts';
import { WRITTEN } from '../sse/sse-writer.ts';

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
      for (let i = 0; i < out.length; i++) {
        sink ??= control.open();
        // The SSE writer answers WRITTEN unless the socket needs draining: no await, no turn, for it.
        const written = sink.data(JSON.stringify(out[i]));
        if (written !== WRITTEN) await written;
      }
    }
    const usage = relay.usage;
    if (usage !== undefined) control.noteUsage?.(usage);
    const trailing = relay.end();
    sink ??= control.open();
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
