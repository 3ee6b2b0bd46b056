// Event-stream bodies for tests: a fetch Response that delivers exactly the
// given chunks, seen through the transport interface, read through the
// exchange's own readEventStream.
import type { EventStreamEvent } from '../../src/sse/event-stream-parser.ts';
import { readEventStream } from '../../src/upstream/bounded-reads.ts';
import { upstreamBody, type UpstreamBody, type UpstreamResponse } from '../../src/upstream/transport.ts';

/** A fetch Response built by a test, as a transport hands responses over. */
export function asUpstream(response: Response): UpstreamResponse {
  const reader = response.body?.getReader();
  return {
    status: response.status,
    headers: response.headers,
    body: upstreamBody(
      async () => {
        if (reader === undefined) return undefined;
        const { done, value } = await reader.read();
        return done ? undefined : value;
      },
      async () => {
        await reader?.cancel().catch(() => undefined);
      },
    ),
  };
}

/** A fetch Response whose body arrives as exactly these chunks. */
export function eventStreamResponse(chunks: readonly Uint8Array[]): UpstreamResponse {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  return asUpstream(new Response(body, { headers: { 'content-type': 'text/event-stream' } }));
}

export const plainRead = (body: UpstreamBody): Promise<Uint8Array | undefined> => body.read();

/** Every event of the response, in order. */
export async function readAllEvents(response: UpstreamResponse, maxEventBytes = 1024 * 1024): Promise<EventStreamEvent[]> {
  const reads = readEventStream(response, plainRead, maxEventBytes);
  const events: EventStreamEvent[] = [];
  try {
    while (!reads.ended) events.push(...(await reads.next()));
  } finally {
    await reads.close();
  }
  return events;
}

