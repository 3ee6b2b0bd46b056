// The outward shape of a stream from a provider with no upstream (the demo):
// the same next() / close() / commit() as an exchange's stream
// (./upstream-stream.ts), with the same breaker verdicts once committed. A
// subclass says what each step produces.

import type { ChatCompletionChunk } from '../chat/types.ts';
import type { CircuitBreaker } from './circuit-breaker.ts';
import type { UpstreamStream } from './provider.ts';
import { classifyFailure } from './retry-policy.ts';
import { tellBreaker } from './upstream-stream.ts';

export abstract class LocalStream implements UpstreamStream {
  #held: readonly ChatCompletionChunk[] | null = null;
  #breaker: CircuitBreaker | undefined;
  #done = false;

  /** The next batch, or null at the end. Throws the client's error. */
  protected abstract produce(): Promise<readonly ChatCompletionChunk[] | null>;

  /** The consumer stopped: stop any wait. */
  protected abstract stop(): void;

  commit(first: readonly ChatCompletionChunk[], breaker: CircuitBreaker): void {
    this.#held = first;
    this.#breaker = breaker;
  }

  async next(): Promise<readonly ChatCompletionChunk[] | null> {
    const held = this.#held;
    if (held !== null) {
      this.#held = null;
      return held;
    }
    if (this.#done) return null;
    let batch: readonly ChatCompletionChunk[] | null;
    try {
      batch = await this.produce();
    } catch (error) {
      if (!this.#done) {
        this.#done = true;
        if (this.#breaker !== undefined) tellBreaker(this.#breaker, classifyFailure(error), error);
      }
      throw error;
    }
    if (batch === null && !this.#done) {
      this.#done = true;
      this.#breaker?.onSuccess();
    }
    return batch;
  }

  close(): void {
    if (this.#done) return;
    this.#done = true;
    this.#held = null;
    this.#breaker?.onRelease();
    this.stop();
  }
}
