// A provider's stream held to a strict json_schema (../chat/structured-answer.ts):
// the dispatcher wraps the stream before its first read when the request has
// a schema, and never otherwise. Each batch is read through the check; the
// batch that finishes choice 0 with an answer that breaks the schema is not
// handed out, its place taken by an UpstreamSchemaMismatchError. Before the
// dispatcher commits to the stream (an answer that came whole in the first
// read), that error is a failed attempt and the next target is tried; after
// it, the error ends the stream and the pump sends it as the error frame, so
// the finish chunk (and [DONE]) never reach the client.

import { StreamedAnswerCheck, type SchemaViolation } from '../chat/structured-answer.ts';
import type { ChatCompletionChunk, ValidatedChatRequest } from '../chat/types.ts';
import type { CircuitBreaker } from './circuit-breaker.ts';
import type { UpstreamStream } from './provider.ts';
import { UpstreamSchemaMismatchError } from './upstream-errors.ts';

export type AnswerSchema = NonNullable<ValidatedChatRequest['answerSchema']>;

export class SchemaCheckedStream implements UpstreamStream {
  private readonly inner: UpstreamStream;
  private readonly check: StreamedAnswerCheck;
  private breaker: CircuitBreaker | undefined = undefined;
  /** Committed: the inner stream hands out the first batch again, which the check has read already. */
  private replaying = false;

  constructor(inner: UpstreamStream, schema: AnswerSchema, maxAnswerBytes: number) {
    this.inner = inner;
    this.check = new StreamedAnswerCheck(schema, maxAnswerBytes);
  }

  commit(first: readonly ChatCompletionChunk[], breaker: CircuitBreaker): void {
    this.inner.commit(first, breaker);
    this.breaker = breaker;
    this.replaying = true;
  }

  async next(): Promise<readonly ChatCompletionChunk[] | null> {
    const batch = await this.inner.next();
    if (this.replaying) {
      this.replaying = false;
      return batch;
    }
    const check = this.check;
    if (batch === null || check.finished) return batch;
    for (let i = 0; i < batch.length; i++) {
      const violation = check.push(batch[i] as ChatCompletionChunk);
      if (violation !== null) throw this.refuse(violation);
    }
    return batch;
  }

  close(): void {
    this.inner.close();
  }

  private refuse(violation: SchemaViolation): UpstreamSchemaMismatchError {
    // The upstream answered whole and in time: its breaker hears success. The
    // model's obedience is not the upstream's health. (Closing the inner
    // stream then releases nothing: the breaker is no longer half-open.)
    this.breaker?.onSuccess();
    this.inner.close();
    return new UpstreamSchemaMismatchError(violation);
  }
}
