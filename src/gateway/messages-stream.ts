// The Messages door's part of the named-event stream pump
// (./door-stream-pump.ts): Anthropic's grammar for a translated stream
// (../messages/message-stream.ts), an Anthropic upstream's events as they came
// with message_start's `model` the alias, thinking and server-tool deltas
// counted as output, and Anthropic's `error` event for a failure (the
// upstream's own, as it came, when it sent one).
import { rawErrorEvent, type RawEvent } from '../chat/messages-origin.ts';
import { ApiError } from '../errors/api-error.ts';
import { anthropicErrorOf, anthropicMessageOf } from '../messages/message-errors.ts';
import { createMessageStreamEncoder, messageErrorEvent } from '../messages/message-stream.ts';
import { frame } from '../sse/sse-writer.ts';
import { withModelAt, type DoorStream } from './door-stream-pump.ts';

/** The Messages door's stream for `alias`; `inputTokens` (the estimate) is asked only for a translated stream's message_start. */
export function messagesDoorStream(alias: string, inputTokens: () => number): DoorStream {
  return {
    door: 'messages',
    alias,
    encoder: () => createMessageStreamEncoder({ alias, inputTokens: inputTokens() }),
    rawFrame: (raw: RawEvent) => `event: ${raw.event}\n${frame('data: ', raw.event === 'message_start' ? withModelAt(raw.data, 'message', alias) : raw.data)}`,
    // Thinking, signatures, citations and server-tool input say nothing in chat chunks, and are billed output all the same.
    untranslatedOutput: (raw: RawEvent) => raw.event === 'content_block_delta',
    errorEvents(error: unknown): string {
      // An Anthropic upstream's own error event goes as it came (its type: overloaded_error, ...).
      const upstreamEvent = rawErrorEvent(error);
      if (upstreamEvent !== undefined) return `event: error\n${frame('data: ', upstreamEvent.data)}`;
      if (!(error instanceof ApiError)) return messageErrorEvent('api_error', 'The server had an error while processing your request.');
      return messageErrorEvent(anthropicErrorOf(error).type, anthropicMessageOf(error));
    },
  };
}

