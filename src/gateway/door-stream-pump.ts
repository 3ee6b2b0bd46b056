// The stream pump of the doors whose events have names (Anthropic's Messages,
// OpenAI's Responses): each upstream read's chunks out as the door's events.
// Two kinds of upstream answer such a door:
// - one that speaks the door's own API, whose decoder hands each event as it
//   came on a carrier chunk (../chat/messages-origin.ts): the event goes out
//   as the door's `rawFrame` says (unchanged but for the alias as its model),
//   so what the gateway has no shape for survives; what the event says in
//   chat chunks passes the chunk relay only to be counted;
// - any other upstream, whose chat chunks pass the chunk relay (the wire
//   rules, usage, what was generated) and the door's encoder, which writes the
//   door's grammar.
// With an answer guard on the call (./answer-raw-guard.ts, ./answer-chunk-guard.ts)
// the translated stream's chunks pass the chunk guard between the relay and
// the encoder, and the passed-through events the raw event guard before they
// are framed; a fault in either ends the stream as guard_failed, never with
// text unexamined.
// As in the chat pump (./event-stream-pump.ts): nothing is sent before the
// first event, so an upstream that fails first is answered by the error
// boundary (in the door's envelope); after it a failure is the door's error
// events and the end.
import { rawErrorEvent, rawEvent, setRawErrorEvent, type RawEvent } from '../chat/messages-origin.ts';
import { ChunkRelay } from '../chat/stream-relay.ts';
import type { ChatCompletionChunk } from '../chat/types.ts';
import { WRITTEN } from '../sse/sse-writer.ts';
import type { UpstreamStream } from '../upstream/provider.ts';
import { ApiError } from '../errors/api-error.ts';
import { SHUTDOWN_STREAM_MESSAGE, ShuttingDownError } from '../http/request-context.ts';
import type { AnswerGuard } from '../guard/answer-guard.ts';
import { ChunkGuard } from './answer-chunk-guard.ts';
import { RawEventGuard } from './answer-raw-guard.ts';
import type { PumpControl } from './event-stream-pump.ts';

/** Where the events go: the SSE writer, or a test's recorder. */
export interface FrameSink {
  /** Whole events; resolves when the sink takes more (backpressure). */
  frames(text: string): Promise<void>;
  end(): void;
}

export interface DoorPumpControl extends Omit<PumpControl, 'open'> {
  open(): FrameSink;
  /** The events a shutdown would end this stream with, made when it happens (they follow what was written). */
  onShutdownEvents?(make: () => string): void;
}

/** A door's encoder of translated streams: chat chunks (as the relay gives them) to its events. */
export interface DoorStreamEncoder {
  push(chunk: ChatCompletionChunk, out: string[]): unknown;
  /** The upstream ended: the closing events; throws when the answer never completed. */
  end(out: string[]): unknown;
}

/** What one door brings to the pump. */
export interface DoorStream {
  /** The alias the client named: the answer's `model`. */
  readonly alias: string;
  /** A fresh encoder, made at a translated stream's first chunk (never for a passed-through one). */
  encoder(): DoorStreamEncoder;
  /** A passed-through event as the client gets it, framed. */
  rawFrame(event: RawEvent): string;
  /** Whether a passed-through event that translates to no chat chunk is billed output (thinking, signatures, server-tool input), counted by its length. */
  untranslatedOutput(event: RawEvent): boolean;
  /** Before each write: the door may rewrite `events` in place (the Responses door stores a completed
   * response and says so in its terminal event); null when there is nothing to wait for. */
  settle?(events: string[]): Promise<void> | null;
  /** The events that end a started stream with `error`; `encoder` is the translated stream's, if any. */
  errorEvents(error: unknown, encoder: DoorStreamEncoder | undefined): string;
  /** Which door's passed-through events these are (how the answer guard reads them). */
  readonly door: 'messages' | 'responses';
}

/** Resolves true when the upstream's answer ended and the door's closing events went out, false when the stream was cut. */
export async function pumpDoorStream(source: UpstreamStream, door: DoorStream, control: DoorPumpControl): Promise<boolean> {
  const relay = new ChunkRelay({ alias: door.alias, includeUsage: true });
  const generated = new GeneratedCount(relay);
  control.onRelay?.(generated);
  let encoder: DoorStreamEncoder | undefined;
  control.onShutdownEvents?.(() => door.errorEvents(new ShuttingDownError(SHUTDOWN_STREAM_MESSAGE), encoder));
  let sink: FrameSink | undefined;
  let passedThrough = false;
  const relayed: ChatCompletionChunk[] = [];
  const events: string[] = [];
  const answerGuard = control.answerGuard ?? null;
  const guarded = answerGuard === null ? null : new GuardedEvents(door, answerGuard);
  try {
    for (;;) {
      const batch = await source.next();
      if (batch === null) break;
      if (batch.length === 0) continue;
      // A shutdown ended the response (with its own error event) while the chunks were on their way.
      if (control.endedForShutdown()) {
        source.close();
        return false;
      }
      events.length = 0;
      for (let i = 0; i < batch.length; i++) {
        const chunk = batch[i] as ChatCompletionChunk;
        const raw = rawEvent(chunk);
        relayed.length = 0;
        if (raw === undefined) {
          relay.pushInto(chunk, relayed);
          encoder ??= door.encoder();
          const chunks = guarded === null ? relayed : guarded.chunks(relayed);
          for (let j = 0; j < chunks.length; j++) encoder.push(chunks[j] as ChatCompletionChunk, events);
        } else {
          passedThrough = true;
          for (let j = 0; j < raw.translated.length; j++) relay.pushInto(raw.translated[j] as ChatCompletionChunk, relayed);
          if (raw.translated.length === 0 && door.untranslatedOutput(raw)) generated.untranslatedBytes += raw.data.length;
          if (guarded === null) events.push(door.rawFrame(raw));
          else guarded.raw(raw, events);
        }
      }
      if (events.length === 0) continue;
      const settling = door.settle?.(events);
      if (settling !== undefined && settling !== null) await settling;
      sink ??= control.open();
      const written = sink.frames(events.length === 1 ? (events[0] as string) : events.join(''));
      if (written !== WRITTEN) await written;
    }
    const usage = relay.usage;
    if (usage !== undefined) control.noteUsage?.(usage);
    events.length = 0;
    if (!passedThrough) {
      encoder ??= door.encoder();
      if (guarded !== null) {
        const held = guarded.endChunks();
        for (let i = 0; i < held.length; i++) encoder.push(held[i] as ChatCompletionChunk, events);
      }
      const trailing = relay.end();
      for (let i = 0; i < trailing.length; i++) encoder.push(trailing[i] as ChatCompletionChunk, events);
      encoder.end(events);
    } else if (guarded !== null) guarded.endRaw(events);
    const settling = door.settle?.(events);
    if (settling !== undefined && settling !== null) await settling;
    sink ??= control.open();
    if (events.length > 0) await sink.frames(events.join(''));
    sink.end();
    return true;
  } catch (err) {
    source.close();
    if (sink === undefined) throw err;
    if (control.endedForShutdown() || control.clientGone()) return false;
    // An upstream that failed mid-hold: what the guard held goes out scanned, ahead of the error.
    const held = guarded === null || (err instanceof ApiError && err.code === 'guard_failed') ? '' : guarded.heldEvents(encoder);
    const failure = guarded === null ? err : guarded.failing(err);
    const known = failure instanceof ApiError ? failure : undefined;
    control.onStreamError(known?.code ?? 'internal_error', known === undefined ? failure : undefined);
    const event = held + door.errorEvents(failure, encoder);
    // Queued, and the response ended at once: see the chat pump on a client that stopped reading.
    sink.frames(event).catch(() => undefined);
    sink.end();
    return false;
  }
}

/**
 * The answer guard between the upstream and the door: chunks through the
 * chunk guard, passed-through events through the raw event guard (the call
 * records the guard's findings as it closes). A throw inside either ends the
 * stream as guard_failed.
 */
class GuardedEvents {
  readonly #door: DoorStream;
  readonly #guard: AnswerGuard;
  #chunkGuard: ChunkGuard | undefined;
  #rawGuard: RawEventGuard | undefined;
  readonly #chunks: ChatCompletionChunk[] = [];
  readonly #raws: RawEvent[] = [];

  constructor(door: DoorStream, guard: AnswerGuard) {
    this.#door = door;
    this.#guard = guard;
  }

  chunks(relayed: readonly ChatCompletionChunk[]): readonly ChatCompletionChunk[] {
    const out = this.#chunks;
    out.length = 0;
    try {
      this.#chunkGuard ??= new ChunkGuard(this.#guard);
      for (let i = 0; i < relayed.length; i++) this.#chunkGuard.push(relayed[i] as ChatCompletionChunk, out);
    } catch (error) {
      throw guardFailure(error);
    }
    return out;
  }

  endChunks(): readonly ChatCompletionChunk[] {
    const out = this.#chunks;
    out.length = 0;
    if (this.#chunkGuard === undefined) return out;
    try {
      this.#chunkGuard.end(out);
    } catch (error) {
      throw guardFailure(error);
    }
    return out;
  }

  /** The held text as events (a translated stream's through `encoder`), as far as the guard and the encoder get with it. */
  heldEvents(encoder: DoorStreamEncoder | undefined): string {
    const events: string[] = [];
    try {
      if (this.#rawGuard !== undefined) {
        const out = this.#raws;
        out.length = 0;
        this.#rawGuard.flush(out);
        for (let i = 0; i < out.length; i++) events.push(this.#door.rawFrame(out[i] as RawEvent));
      } else if (encoder !== undefined) {
        const held = this.endChunks();
        for (let i = 0; i < held.length; i++) encoder.push(held[i] as ChatCompletionChunk, events);
      }
    } catch {
      // The stream ends with its error all the same: what was scanned and encoded before the throw goes (its sequence numbers are spent).
    }
    return events.join('');
  }

  raw(event: RawEvent, events: string[]): void {
    const out = this.#raws;
    out.length = 0;
    try {
      this.#rawGuard ??= new RawEventGuard(this.#door.door, this.#guard);
      this.#rawGuard.push(event, out);
    } catch (error) {
      throw guardFailure(error);
    }
    for (let i = 0; i < out.length; i++) events.push(this.#door.rawFrame(out[i] as RawEvent));
  }

  endRaw(events: string[]): void {
    if (this.#rawGuard === undefined) return;
    const out = this.#raws;
    out.length = 0;
    try {
      this.#rawGuard.end(out);
    } catch (error) {
      throw guardFailure(error);
    }
    for (let i = 0; i < out.length; i++) events.push(this.#door.rawFrame(out[i] as RawEvent));
  }

  /** The stream fails with `error`: the error to end it with. An upstream failure event that repeats the answer's text repeats the guarded text. */
  failing(error: unknown): unknown {
    const upstreamEvent = rawErrorEvent(error);
    if (upstreamEvent === undefined || this.#rawGuard === undefined || !(error instanceof Error)) return error;
    try {
      setRawErrorEvent(error, this.#rawGuard.failure(upstreamEvent));
      return error;
    } catch (fault) {
      return guardFailure(fault);
    }
  }
}

/** A throw inside the answer guard: the guard's own guard_failed as it came, anything else made one (never the text unexamined). */
function guardFailure(error: unknown): ApiError {
  if (error instanceof ApiError && error.code === 'guard_failed') return error;
  return new ApiError('guard_failed', 'The gateway could not examine this answer for secrets and personal data, so the rest of it was not sent. Retry the request; if it fails again, tell the gateway operator the request id.');
}

/**
 * What the call charges a cut stream by: the relay's usage, and what was
 * generated: the relay's count of relayed text and tool input, plus the data
 * of passed-through deltas that translate to no chat chunk (thinking,
 * signatures, citations, server-tool input), each counted by its event's
 * length (a little over its text: an upper bound, as the byte count is).
 */
class GeneratedCount {
  readonly #relay: ChunkRelay;
  untranslatedBytes = 0;

  constructor(relay: ChunkRelay) {
    this.#relay = relay;
  }

  get usage(): ChunkRelay['usage'] {
    return this.#relay.usage;
  }

  get generatedBytes(): number {
    return this.#relay.generatedBytes + this.untranslatedBytes;
  }
}

/**
 * An event's data with the `model` of the object under `key` (`message`,
 * `response`) the alias; data that is not the expected object goes as it came.
 */
export function withModelAt(data: string, key: string, alias: string): string {
  try {
    const parsed: unknown = JSON.parse(data);
    const inner = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>)[key] : undefined;
    if (typeof inner === 'object' && inner !== null && 'model' in inner) {
      (inner as { model: unknown }).model = alias;
      return JSON.stringify(parsed);
    }
  } catch {
    // Not JSON: the decoder would have refused it; nothing to rename.
  }
  return data;
}
