// The stream pump of the Messages door: each upstream read's chunks out as
// Anthropic's events. Two kinds of upstream answer the door:
// - an Anthropic upstream, whose decoder hands each event as it came on a
//   carrier chunk (../chat/messages-origin.ts): the event goes out unchanged
//   (only message_start's `model` becomes the alias), so thinking signatures,
//   citations and server-tool blocks survive; what the event says in chat
//   chunks passes the chunk relay only to be counted;
// - any other upstream, whose chat chunks pass the chunk relay (the wire
//   rules, usage, what was generated) and the Messages encoder
//   (../messages/message-stream.ts), which writes Anthropic's grammar.
// As in the chat pump (./event-stream-pump.ts): nothing is sent before the
// first event, so an upstream that fails first is answered by the error
// boundary (in Anthropic's envelope on this door); after it a failure is an
// `event: error` and the end.
import { rawErrorEvent, rawEvent } from '../chat/messages-origin.ts';
import { ChunkRelay } from '../chat/stream-relay.ts';
import type { ChatCompletionChunk } from '../chat/types.ts';
import { ApiError } from '../errors/api-error.ts';
import { anthropicErrorOf, anthropicMessageOf } from '../messages/message-errors.ts';
import { createMessageStreamEncoder, messageErrorEvent, type MessageStreamEncoder } from '../messages/message-stream.ts';
import { frame, WRITTEN } from '../sse/sse-writer.ts';
import type { UpstreamStream } from '../upstream/provider.ts';
import type { PumpControl } from './event-stream-pump.ts';

/** Where the events go: the SSE writer, or a test's recorder. */
export interface FrameSink {
  /** Whole events; resolves when the sink takes more (backpressure). */
  frames(text: string): Promise<void>;
  end(): void;
}

export interface MessagePumpControl extends Omit<PumpControl, 'open'> {
  open(): FrameSink;
}

export interface MessageStreamOptions {
  /** The alias the client named: the message's `model`. */
  readonly alias: string;
  /** The request's input tokens as the gateway estimates them, for a translated stream's message_start (its usage comes at its end); asked only for such a stream. */
  readonly inputTokens: () => number;
}

/** Resolves true when the upstream's answer ended and message_stop went out, false when the stream was cut. */
export async function pumpMessageStream(source: UpstreamStream, options: MessageStreamOptions, control: MessagePumpControl): Promise<boolean> {
  const relay = new ChunkRelay({ alias: options.alias, includeUsage: true });
  const generated = new GeneratedCount(relay);
  control.onRelay?.(generated);
  let encoder: MessageStreamEncoder | undefined;
  let sink: FrameSink | undefined;
  let passedThrough = false;
  const relayed: ChatCompletionChunk[] = [];
  const events: string[] = [];
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
          encoder ??= createMessageStreamEncoder({ alias: options.alias, inputTokens: options.inputTokens() });
          for (let j = 0; j < relayed.length; j++) encoder.push(relayed[j] as ChatCompletionChunk, events);
        } else {
          passedThrough = true;
          for (let j = 0; j < raw.translated.length; j++) relay.pushInto(raw.translated[j] as ChatCompletionChunk, relayed);
          // Thinking, signatures, citations and server-tool input say nothing in chat chunks, and are billed output all the same.
          if (raw.translated.length === 0 && raw.event === 'content_block_delta') generated.untranslatedBytes += raw.data.length;
          events.push(`event: ${raw.event}\n${frame('data: ', raw.event === 'message_start' ? withModel(raw.data, options.alias) : raw.data)}`);
        }
      }
      if (events.length === 0) continue;
      sink ??= control.open();
      const written = sink.frames(events.length === 1 ? (events[0] as string) : events.join(''));
      if (written !== WRITTEN) await written;
    }
    const usage = relay.usage;
    if (usage !== undefined) control.noteUsage?.(usage);
    events.length = 0;
    if (!passedThrough) {
      encoder ??= createMessageStreamEncoder({ alias: options.alias, inputTokens: options.inputTokens() });
      const trailing = relay.end();
      for (let i = 0; i < trailing.length; i++) encoder.push(trailing[i] as ChatCompletionChunk, events);
      encoder.end(events);
    }
    sink ??= control.open();
    if (events.length > 0) await sink.frames(events.join(''));
    sink.end();
    return true;
  } catch (err) {
    source.close();
    if (sink === undefined) throw err;
    if (control.endedForShutdown() || control.clientGone()) return false;
    const known = err instanceof ApiError ? err : undefined;
    control.onStreamError(known?.code ?? 'internal_error', known === undefined ? err : undefined);
    // An Anthropic upstream's own error event goes as it came (its type: overloaded_error, ...).
    const upstreamEvent = rawErrorEvent(err);
    const event =
      upstreamEvent !== undefined
        ? `event: error\n${frame('data: ', upstreamEvent.data)}`
        : known === undefined
          ? messageErrorEvent('api_error', 'The server had an error while processing your request.')
          : messageErrorEvent(anthropicErrorOf(known).type, anthropicMessageOf(known));
    // Queued, and the response ended at once: see the chat pump on a client that stopped reading.
    sink.frames(event).catch(() => undefined);
    sink.end();
    return false;
  }
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

/** message_start's data with the message's `model` the alias; data that is not the expected object goes as it came. */
function withModel(data: string, alias: string): string {
  try {
    const parsed: unknown = JSON.parse(data);
    if (typeof parsed === 'object' && parsed !== null) {
      const message = (parsed as { message?: unknown }).message;
      if (typeof message === 'object' && message !== null && 'model' in message) {
        (message as { model: unknown }).model = alias;
        return JSON.stringify(parsed);
      }
    }
  } catch {
    // Not JSON: the decoder would have refused it; nothing to rename.
  }
  return data;
}
