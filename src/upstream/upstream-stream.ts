// The one exchange loop of a streamed answer: bytes from the transport, the
// UTF-8 decode, the event-stream parser, the provider's push decoder, out as
// the chunks of that read; one await per socket read. Retries happen before
// the first chunk (../upstream/dispatcher.ts); once the dispatcher commits a
// stream, the stream itself tells the target's circuit breaker how it ended:
// success at the clean end, the classified failure when it breaks, no verdict
// when the consumer stops reading.

import type { ChatCompletionChunk } from '../chat/types.ts';
import { createEventStreamParser, type EventStreamEvent } from '../sse/event-stream-parser.ts';
import { eventStreamBody } from './bounded-reads.ts';
import type { CircuitBreaker } from './circuit-breaker.ts';
import { failureCauseOf } from './failure-cause.ts';
import type { HttpProvider, ProviderCodec, StreamDecoder, UpstreamCall, UpstreamStream } from './provider.ts';
import { classifyFailure, FailureClass } from './retry-policy.ts';
import type { UpstreamBody } from './transport.ts';
import { Exchange } from './upstream-exchange.ts';

/** Tells `breaker` what a failure says about its upstream: a fatal one (the
 * client's own error, an abort) says nothing. */
export function tellBreaker(breaker: CircuitBreaker, failure: FailureClass, error: unknown): void {
  if (failure === FailureClass.Fatal) breaker.onRelease();
  else breaker.onFailure(failureCauseOf(error));
}

const StreamState = {
  /** The request is not sent yet: the first next() sends it. */
  Idle: 'idle',
  Reading: 'reading',
  /** The answer is complete (the body ended, or the decoder is done): the next next() ends the stream. */
  Complete: 'complete',
  /** Decoding failed after some chunks of a read: the next next() throws. */
  Failing: 'failing',
  /** Ended, broke, or closed; the breaker (if committed) has been told. */
  Done: 'done',
} as const;
type StreamState = (typeof StreamState)[keyof typeof StreamState];

type EventStreamParser = ReturnType<typeof createEventStreamParser>;

const NO_CHUNKS: readonly ChatCompletionChunk[] = [];

/** A streamed exchange with an HTTP upstream: the object is its own parser handler. */
class StreamExchange extends Exchange implements UpstreamStream {
  private readonly decoder: StreamDecoder;
  private readonly codec: ProviderCodec;
  /** The encoded request, until it is sent: an open stream does not keep a copy of its prompt. */
  private body: string;
  private state: StreamState = StreamState.Idle;
  private upstream: UpstreamBody | undefined;
  private parser: EventStreamParser | undefined;
  /** Not fatal: invalid UTF-8 becomes U+FFFD, as the event-stream spec's decode requires. */
  private text: InstanceType<typeof TextDecoder> | undefined;
  /** The batch of one read, reused: the consumer takes it whole before the next read. */
  private readonly out: ChatCompletionChunk[] = [];
  private held: readonly ChatCompletionChunk[] | null = null;
  private breaker: CircuitBreaker | undefined;
  /** What ends the stream once the chunks before it went out (state Failing). */
  private failure: unknown;

  constructor(call: UpstreamCall, provider: HttpProvider, body: string) {
    super(call, provider.settings, true);
    this.codec = provider.codec;
    this.decoder = provider.codec.streamDecoder(call.request);
    this.body = body;
  }

  commit(first: readonly ChatCompletionChunk[], breaker: CircuitBreaker): void {
    this.held = first;
    this.breaker = breaker;
  }

  async next(): Promise<readonly ChatCompletionChunk[] | null> {
    const held = this.held;
    if (held !== null) {
      this.held = null;
      return held;
    }
    if (this.state === StreamState.Done) return null;
    if (this.state === StreamState.Complete) {
      this.end();
      return null;
    }
    if (this.state === StreamState.Failing) throw this.judge(this.failure);
    const out = this.out;
    out.length = 0;
    try {
      let upstream = this.upstream;
      if (upstream === undefined) {
        const body = this.body;
        this.body = '';
        const request = this.call.request;
        upstream = eventStreamBody(await this.send(body, this.codec.requestHeaders?.(request), this.codec.endpoint?.(request)));
        this.upstream = upstream;
        this.parser = createEventStreamParser(this, { maxEventBytes: this.settings.maxEventBytes });
        this.text = new TextDecoder('utf-8');
        this.state = StreamState.Reading;
      }
      this.awaitBytes();
      let bytes: Uint8Array | undefined;
      try {
        bytes = await upstream.read();
      } finally {
        this.bytesCame();
      }
      const parser = this.parser as EventStreamParser;
      const text = this.text as InstanceType<typeof TextDecoder>;
      if (bytes === undefined) {
        this.finished = true;
        // An event not closed by a blank line is discarded (the spec).
        parser.feed(text.decode());
        parser.end();
        this.decoder.end(out);
        this.state = StreamState.Complete;
      } else {
        parser.feed(text.decode(bytes, { stream: true }));
        if (this.decoder.done) {
          // The answer is complete whatever follows; the rest is not read.
          upstream.cancel();
          this.decoder.end(out);
          this.state = StreamState.Complete;
        }
      }
    } catch (error) {
      // The chunks decoded before a failure in the same read go out first
      // (an error event after text): the failure ends the next read.
      if (out.length === 0) throw this.fail(error);
      // Explained now, while the exchange's state is the failure's.
      this.failure = this.explain(error);
      this.state = StreamState.Failing;
      this.upstream?.cancel();
      this.settle();
      return out;
    }
    if (this.state === StreamState.Complete && out.length === 0) {
      this.end();
      return null;
    }
    return out.length === 0 ? NO_CHUNKS : out;
  }

  /** The event-stream parser's handler: each event straight into the decoder. */
  onEvent(event: EventStreamEvent): void {
    this.decoder.push(event, this.out);
  }

  close(): void {
    if (this.state === StreamState.Done) return;
    this.state = StreamState.Done;
    this.held = null;
    // The consumer stopped reading: no verdict on the upstream.
    this.breaker?.onRelease();
    this.upstream?.cancel();
    this.settle();
  }

  private end(): void {
    this.state = StreamState.Done;
    this.settle();
    this.breaker?.onSuccess();
  }

  private fail(error: unknown): unknown {
    const explained = this.explain(error);
    this.upstream?.cancel();
    this.settle();
    return this.judge(explained);
  }

  /** Ends the stream on `explained`, telling the breaker if committed. */
  private judge(explained: unknown): unknown {
    this.state = StreamState.Done;
    const breaker = this.breaker;
    if (breaker !== undefined) tellBreaker(breaker, classifyFailure(explained), explained);
    return explained;
  }
}

/** A stream from `provider`'s upstream; the request goes out at the first next(). */
export function openExchangeStream(provider: HttpProvider, call: UpstreamCall): UpstreamStream {
  // A request the codec cannot express is the client's 400, before any I/O.
  return new StreamExchange(call, provider, provider.codec.encode(call.request, true));
}
