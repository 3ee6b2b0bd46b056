// The Responses door's part of the named-event stream pump
// (./door-stream-pump.ts): the Responses grammar for a translated stream
// (../responses/response-stream.ts); an upstream that speaks Responses has its
// events go as they came, with the response's `model` the alias in the events
// that carry the whole response; its reasoning deltas count as output; a
// failure is response.failed and `error` (the encoder's; for a passed-through
// stream the upstream's own failure event as it came, or the gateway's error).
import { rawErrorEvent, type RawEvent } from '../chat/messages-origin.ts';
import { errorBody } from '../errors/render.ts';
import { createResponseStreamEncoder, type ResponseStreamEncoder, type ResponseStreamOptions } from '../responses/response-stream.ts';
import { frame } from '../sse/sse-writer.ts';
import { withModelAt, type DoorStream, type DoorStreamEncoder } from './door-stream-pump.ts';

export function responsesDoorStream(options: ResponseStreamOptions): DoorStream {
  const alias = options.alias;
  return {
    alias,
    encoder: () => createResponseStreamEncoder(options),
    rawFrame: (raw: RawEvent) => `event: ${raw.event}\n${frame('data: ', raw.event.startsWith('response.') && raw.data.includes('"response"') ? withModelAt(raw.data, 'response', alias) : raw.data)}`,
    untranslatedOutput: (raw: RawEvent) => raw.event.startsWith('response.reasoning'),
    errorEvents(error: unknown, encoder: DoorStreamEncoder | undefined): string {
      if (encoder !== undefined) return (encoder as ResponseStreamEncoder).fail(error).join('');
      // An upstream's own failure event (response.failed, error) goes as it came: Codex reads its code (a quota is not retried).
      const upstreamEvent = rawErrorEvent(error);
      if (upstreamEvent !== undefined) return `event: ${upstreamEvent.event}\n${frame('data: ', withModelAt(upstreamEvent.data, 'response', alias))}`;
      // A passed-through stream: its sequence numbers are the upstream's, so the gateway's error goes alone, as the published flat error event.
      const envelope = errorBody(error).error;
      return `event: error\n${frame('data: ', JSON.stringify({ type: 'error', code: envelope.code, message: envelope.message, param: envelope.param }))}`;
    },
  };
}

