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

/** What the door does with a completed response before its terminal event goes out (stores it when asked): the response object, changed in place. */
export type CompletedResponseHook = (response: Record<string, unknown>) => Promise<void>;

const COMPLETED = 'event: response.completed\n';

export function responsesDoorStream(options: ResponseStreamOptions, completed?: CompletedResponseHook): DoorStream {
  const alias = options.alias;
  return {
    door: 'responses',
    settle(events: string[]): Promise<void> | null {
      if (completed === undefined) return null;
      const at = events.findIndex((event) => event.startsWith(COMPLETED));
      return at === -1 ? null : settleCompleted(events, at, completed);
    },
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


/** The terminal event at `at`, its response handed to the hook and the event rebuilt from what it left. */
async function settleCompleted(events: string[], at: number, completed: CompletedResponseHook): Promise<void> {
  const event = events[at] as string;
  const data = event
    .slice(COMPLETED.length)
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => line.slice('data: '.length))
    .join('\n');
  let parsed: { response?: unknown };
  try {
    parsed = JSON.parse(data) as { response?: unknown };
  } catch {
    return;
  }
  if (typeof parsed.response !== 'object' || parsed.response === null) return;
  await completed(parsed.response as Record<string, unknown>);
  events[at] = `${COMPLETED}${frame('data: ', JSON.stringify(parsed))}`;
}
