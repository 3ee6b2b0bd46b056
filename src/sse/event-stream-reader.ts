// I/O glue between a byte stream (a fetch body) and the pure event-stream
// parser: decodes UTF-8 with `stream: true`, so a character cut between two
// network chunks is held back until its last byte arrives, and hands the text on.
// Spec: https://html.spec.whatwg.org/multipage/server-sent-events.html#parsing-an-event-stream
// ("Streams must be decoded using the UTF-8 decode algorithm.")

import {
  createEventStreamParser,
  type EventStreamEvent,
  type EventStreamParserOptions,
} from './event-stream-parser.ts';

export interface ReadEventStreamOptions extends EventStreamParserOptions {
  /** Receives each comment line (keep-alives), e.g. for liveness tracking. */
  onComment?(text: string): void;
}

/**
 * Events of a byte stream, in order. Ends when the body ends (an event not
 * closed by a blank line is discarded, as the spec requires). Leaving the loop
 * early cancels the body. Throws EventStreamError when an event crosses
 * `maxEventBytes`, and whatever the body throws (an aborted fetch, a reset).
 */
export async function* readEventStream(
  body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  options: ReadEventStreamOptions = {},
): AsyncGenerator<EventStreamEvent, void, undefined> {
  const ready: EventStreamEvent[] = [];
  const callbacks: Parameters<typeof createEventStreamParser>[0] = {
    onEvent(event) {
      ready.push(event);
    },
  };
  if (options.onComment !== undefined) callbacks.onComment = options.onComment;
  const parser = createEventStreamParser(
    callbacks,
    options.maxEventBytes === undefined ? {} : { maxEventBytes: options.maxEventBytes },
  );
  // Not fatal: the spec's UTF-8 decode replaces invalid sequences with U+FFFD;
  // it also strips a leading BOM, which the parser would strip anyway.
  const decoder = new TextDecoder('utf-8');

  for await (const bytes of body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    // Drained by index and then cleared, so a long burst of events is not
    // shifted element by element.
    for (let i = 0; i < ready.length; i++) yield ready[i] as EventStreamEvent;
    ready.length = 0;
  }
  parser.feed(decoder.decode());
  parser.end();
  for (let i = 0; i < ready.length; i++) yield ready[i] as EventStreamEvent;
}
