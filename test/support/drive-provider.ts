// Drives a provider (src/upstream/provider.ts) the way the dispatcher does,
// one call at a time, for tests about one provider or one transport: a whole
// answer through the exchange, a stream as its chunks, one at a time.
import type { ChatCompletion, ChatCompletionChunk } from '../../src/chat/types.ts';
import { ProviderKind, type ChatProvider, type UpstreamCall, type UpstreamStream } from '../../src/upstream/provider.ts';
import { exchangeCompletion } from '../../src/upstream/upstream-exchange.ts';
import { openExchangeStream } from '../../src/upstream/upstream-stream.ts';

export interface DrivenProvider {
  /** The provider under test. */
  readonly provider: ChatProvider;
  complete(call: UpstreamCall): Promise<ChatCompletion>;
  /** The stream's chunks; the request goes out at the first next(), and
   * return() (leaving a for-await early) closes the stream. */
  stream(call: UpstreamCall): AsyncIterableIterator<ChatCompletionChunk>;
}

export function drive(provider: ChatProvider): DrivenProvider {
  return {
    provider,
    complete: (call) => (provider.kind === ProviderKind.Http ? exchangeCompletion(provider, call) : provider.complete(call)),
    stream: (call) => {
      let stream: UpstreamStream | undefined;
      return chunksOf(() => (stream ??= provider.kind === ProviderKind.Http ? openExchangeStream(provider, call) : provider.open(call)));
    },
  };
}

/** An UpstreamStream's chunks one at a time. */
export function chunksOf(source: UpstreamStream | (() => UpstreamStream)): AsyncIterableIterator<ChatCompletionChunk> {
  const streamOf = typeof source === 'function' ? source : () => source;
  let batch: readonly ChatCompletionChunk[] = [];
  let at = 0;
  let done = false;
  const iterator: AsyncIterableIterator<ChatCompletionChunk> = {
    async next(): Promise<IteratorResult<ChatCompletionChunk>> {
      while (!done && at >= batch.length) {
        const next = await streamOf().next();
        if (next === null) done = true;
        else {
          // The stream reuses its batch array: keep a copy.
          batch = [...next];
          at = 0;
        }
      }
      if (done && at >= batch.length) return { done: true, value: undefined };
      return { done: false, value: batch[at++] as ChatCompletionChunk };
    },
    async return(): Promise<IteratorResult<ChatCompletionChunk>> {
      if (!done) {
        done = true;
        batch = [];
        streamOf().close();
      }
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

/** An UpstreamStream over an async iterable of chunks, one chunk per read
 * (a test's scripted upstream); close() returns the iterator. */
export function streamOfChunks(source: AsyncIterable<ChatCompletionChunk>): UpstreamStream {
  const iterator = source[Symbol.asyncIterator]();
  let done = false;
  return {
    async next() {
      if (done) return null;
      let result: IteratorResult<ChatCompletionChunk>;
      try {
        result = await iterator.next();
      } catch (error) {
        done = true;
        throw error;
      }
      if (result.done === true) {
        done = true;
        return null;
      }
      return [result.value];
    },
    close() {
      if (done) return;
      done = true;
      void iterator.return?.();
    },
    commit() {
      throw new Error('not dispatched');
    },
  };
}
