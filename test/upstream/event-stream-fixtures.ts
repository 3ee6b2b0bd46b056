// Event-stream bodies for tests: a fetch Response that delivers exactly the
// given chunks, read through the exchange's own readEventStream.
import type { EventStreamEvent } from '../../src/sse/event-stream-parser.ts';
import { readEventStream } from '../../src/upstream/bounded-reads.ts';

/** A fetch Response whose body arrives as exactly these chunks. */
export function eventStreamResponse(chunks: readonly Uint8Array[]): Response {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
}

export const plainRead = (reader: ReadableStreamDefaultReader<Uint8Array>): Promise<Uint8Array | undefined> =>
  reader.read().then(({ done, value }) => (done ? undefined : value));

/** Every event of the response, in order. */
export async function readAllEvents(response: Response, maxEventBytes = 1024 * 1024): Promise<EventStreamEvent[]> {
  const reads = readEventStream(response, plainRead, maxEventBytes);
  const events: EventStreamEvent[] = [];
  try {
    while (!reads.ended) events.push(...(await reads.next()));
  } finally {
    await reads.close();
  }
  return events;
}

