// Event-stream bodies for tests: a fetch Response that delivers exactly the
// given chunks, seen through the transport interface, read through the
// production read loop (src/upstream/upstream-stream.ts: UTF-8 decode,
// event-stream parser, a decoder) with a decoder that records the events.
import type { ChatRequest } from '../../src/chat/types.ts';
import type { EventStreamEvent } from '../../src/sse/event-stream-parser.ts';
import { exchangeSettings } from '../../src/upstream/exchange-settings.ts';
import type { HttpProvider, ProviderCodec } from '../../src/upstream/provider.ts';
import { ConnectObservation, type UpstreamResponse, type UpstreamTransport } from '../../src/upstream/transport.ts';
import { openExchangeStream } from '../../src/upstream/upstream-stream.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';

/** A fetch Response built by a test, as a transport hands responses over. */
export function asUpstream(response: Response): UpstreamResponse {
  const reader = response.body?.getReader();
  return {
    status: response.status,
    headers: response.headers,
    body: {
      async read() {
        if (reader === undefined) return undefined;
        const { done, value } = await reader.read();
        return done ? undefined : value;
      },
      cancel() {
        reader?.cancel().catch(() => undefined);
      },
    },
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

/** The events of a response as the read loop parses them, one body read at a time. */
export interface EventReads {
  /** The events one body read completed (possibly none). Throws the client's error. */
  next(): Promise<EventStreamEvent[]>;
  readonly ended: boolean;
  close(): void;
}

const REQUEST: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'Hi' }] };

/** `response` read through the production stream loop, over a transport that hands it over. */
export function readEvents(response: UpstreamResponse, maxEventBytes = 1024 * 1024): EventReads {
  const events: EventStreamEvent[] = [];
  const codec: ProviderCodec = {
    encode: () => '{}',
    decode: () => {
      throw new Error('not used');
    },
    streamDecoder: () => ({ done: false, push: (event) => void events.push(event), end: () => undefined }),
  };
  const transport: UpstreamTransport = {
    name: 'test',
    send: () => ({ response: Promise.resolve(response), connect: ConnectObservation.Unobserved, abort: () => response.body.cancel() }),
  };
  const provider: HttpProvider = {
    kind: 'http',
    codec,
    settings: exchangeSettings('http://upstream.test/v1/chat/completions', new Headers(), { transport, maxEventBytes, scheduler: new ManualScheduler() }),
  };
  const stream = openExchangeStream(provider, { request: REQUEST, requestId: 'req_reads', signal: new AbortController().signal });
  let ended = false;
  return {
    async next() {
      events.length = 0;
      if ((await stream.next()) === null) ended = true;
      return [...events];
    },
    get ended() {
      return ended;
    },
    close: () => stream.close(),
  };
}

/** Every event of the response, in order. */
export async function readAllEvents(response: UpstreamResponse, maxEventBytes = 1024 * 1024): Promise<EventStreamEvent[]> {
  const reads = readEvents(response, maxEventBytes);
  const events: EventStreamEvent[] = [];
  try {
    while (!reads.ended) events.push(...(await reads.next()));
  } finally {
    reads.close();
  }
  return events;
}
