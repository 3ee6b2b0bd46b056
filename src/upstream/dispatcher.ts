// Sends one chat request to an alias's targets: in orderTargets() order,
// skipping targets whose circuit breaker is open, retrying a target on
// transient failures with backoff (or the upstream's Retry-After), moving to the
// next target on failures a retry would not cure, and stopping at once on the
// client's own errors and on abort. A target whose provider cannot express the
// request (`refusal`) is skipped without a call: its refusal is about that
// target, not about the client's request, while another target can take it. The decisions live in ./retry-policy.ts,
// ./circuit-breaker.ts and ./target-order.ts; this file is the loop and the
// waits, which run on the caller's scheduler (../time/scheduler.ts).
//
// Streams: retries and fallbacks happen only before the first chunk. Once a
// target produced one, dispatchStream() resolves and the target is committed
// (the stream then tells its breaker how it ended: ./upstream-stream.ts);
// what fails after that reaches the caller unchanged (it may already have sent
// the client half an answer, which no retry can take back).
//
// Strict json_schema: when the context has an answer schema, a whole answer is
// checked before it is returned, and a stream is wrapped before its first read
// (./schema-checked-stream.ts). An answer that breaks the schema is a failed
// attempt like a bad answer (the next target is tried; a committed stream ends
// with the error), but the target's breaker hears success: the upstream
// answered, and the breaker judges its health, not its model's obedience.
// Without a schema neither the check nor the wrapper exists.

import type { AbortSource } from '../time/abort-source.ts';
import { checkCompletionAnswer } from '../chat/structured-answer.ts';
import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from '../chat/types.ts';
import type { Price } from '../config/config.ts';
import { DEFAULT_MAX_RESPONSE_BYTES } from '../config/provider-defaults.ts';
import { ApiError, UpstreamError, type InvalidRequestError } from '../errors/api-error.ts';
import { ProviderKind, type ChatProvider, type ExchangeCall, type UpstreamCall, type UpstreamStream } from './provider.ts';
import { exchangeCompletion } from './upstream-exchange.ts';
import { openExchangeStream, tellBreaker } from './upstream-stream.ts';
import { ClientAbortError, isClientAbort, UpstreamRateLimitError, UpstreamSchemaMismatchError } from './upstream-errors.ts';
import { SchemaCheckedStream, type AnswerSchema } from './schema-checked-stream.ts';
import { State, type CircuitBreaker } from './circuit-breaker.ts';
import { failureCauseOf, type FailureCause } from './failure-cause.ts';
import { upstreamRetryDelay } from './retry-after.ts';
import { backoffDelay, classifyFailure, FailureClass, type RetryPolicy } from './retry-policy.ts';
import { orderTargets } from './target-order.ts';
import { sleepOn, systemScheduler, type Scheduler } from '../time/scheduler.ts';

/** What the dispatch loop needs of any target: its name, its place in the order, its retries and breaker. */
export interface DispatchTarget {
  /** Breaker key and log name, e.g. 'local/llama-3.1-8b'. */
  id: string;
  priority: number;
  weight: number;
  retry: RetryPolicy;
  breaker: CircuitBreaker;
  /** Why this target cannot take the request (its adapter's refusal); null or absent when it can. */
  refusal?: InvalidRequestError | null;
  /** What its tokens cost (null: unpriced); absent where nothing is charged. */
  price?: Price | null;
}

/** A chat target: its provider and the upstream request made for it. */
export interface UpstreamTarget extends DispatchTarget {
  provider: ChatProvider;
  /** The upstream request for this target (upstream model name and max-tokens
   * field already set by the caller). */
  request: ChatRequest;
}

/** One attempt's share of the dispatch context: what an attempt sends with its upstream call. */
export type AttemptContext = ExchangeCall;

export interface DispatchContext {
  /** Sent upstream as x-request-id on every attempt. */
  requestId: string;
  /** The client left or a gateway deadline passed: stops attempts and waits at once. */
  signal: AbortSource;
  /** [0, 1); default Math.random. Drives the target order and the jitter. */
  random?: () => number;
  /** The back-off waits and the clock for Retry-After dates; default the system's. */
  scheduler?: Scheduler;
  /** Told about every attempt and every target skipped, as it happens. */
  onAttempt?(record: AttemptRecord): void;
  /** telemetry: called as an attempt starts; the headers (traceparent) go upstream with it. */
  startAttempt?(targetId: string, attempt: number): Record<string, string>;
  /** response_format json_schema with strict true: the answer must match it (read once per dispatch). */
  readonly answerSchema?: AnswerSchema | undefined;
}

/** What the dispatcher did after an attempt (or instead of one). */
export const AttemptOutcome = {
  /** The target answered (for a stream: produced its first chunk). */
  Ok: 'ok',
  /** Failed; the same target is tried again after `delayMs`. */
  Retry: 'retry',
  /** Failed; the dispatcher moves on to the next target (none may be left). */
  Fallback: 'fallback',
  /** Failed in a way no other attempt would change; thrown to the caller. */
  Fatal: 'fatal',
  /** Not attempted: the target's circuit breaker is open. */
  SkippedOpen: 'skipped_open',
  /** Not attempted: the target's adapter cannot express the request (`param` says which part). */
  SkippedUnsupported: 'skipped_unsupported',
} as const;
export type AttemptOutcome = (typeof AttemptOutcome)[keyof typeof AttemptOutcome];

export interface AttemptRecord {
  targetId: string;
  /** 1-based attempt number on this target. */
  attempt: number;
  outcome: AttemptOutcome;
  /** The failure's HTTP status as the client would see it. */
  status?: number;
  /** The catalogue code (never an upstream's own), or `client_aborted`. */
  code?: string;
  /** For skipped_unsupported: the request parameter the target cannot take. */
  param?: string;
  delayMs?: number;
  /** What went wrong on the wire (refused, reset, tls, dns, timeout, http...):
   * for the operator's log, never for the client. Not set for a client abort. */
  cause?: FailureCause;
}

/** A non-streaming completion from the first target that answers. */
export async function dispatchCompletion(
  targets: readonly UpstreamTarget[],
  ctx: DispatchContext,
): Promise<{ completion: ChatCompletion; target: UpstreamTarget }> {
  const { value, target } = await dispatch(targets, ctx, completeOn, chatCall);
  return { completion: value, target };
}

/**
 * A stream from the first target that produces a first chunk. The returned
 * stream hands out that first batch, then the rest; it tells the target's
 * breaker of success when it ends, of the failure when it breaks. Its close()
 * (the consumer stopping early) frees the upstream request.
 */
export async function dispatchStream(
  targets: readonly UpstreamTarget[],
  ctx: DispatchContext,
): Promise<{ stream: UpstreamStream; target: UpstreamTarget }> {
  const { value, target } = await dispatch(targets, ctx, streamOn, chatCall);
  return { stream: value, target };
}

async function completeOn(target: UpstreamTarget, call: UpstreamCall, schema: AnswerSchema | undefined): Promise<ChatCompletion> {
  const { provider } = target;
  const completion = provider.kind === ProviderKind.Http ? await exchangeCompletion(provider, call) : await provider.complete(call);
  if (schema !== undefined) {
    const violation = checkCompletionAnswer(schema, completion, maxAnswerBytes(target));
    // dispatch() tells the breaker.
    if (violation !== null) throw new UpstreamSchemaMismatchError(violation);
  }
  target.breaker.onSuccess();
  return completion;
}

/** Reads until the first chunk (keep-alives come before it) or the end; the
 * stream is committed to the target only then. */
async function streamOn(target: UpstreamTarget, call: UpstreamCall, schema: AnswerSchema | undefined): Promise<UpstreamStream> {
  const { provider } = target;
  let stream = provider.kind === ProviderKind.Http ? openExchangeStream(provider, call) : provider.open(call);
  // Before the first read, so an answer that comes whole in it is checked before the commit.
  if (schema !== undefined) stream = new SchemaCheckedStream(stream, schema, maxAnswerBytes(target));
  let first: readonly ChatCompletionChunk[] | null;
  try {
    do first = await stream.next();
    while (first !== null && first.length === 0);
  } catch (error) {
    // A failed stream is closed already; its request is freed.
    stream.close();
    throw error;
  }
  if (first === null) target.breaker.onSuccess();
  else stream.commit(first, target.breaker);
  return stream;
}

/** A streamed answer's content is parsed up to the bound of a whole answer's body from the same target. */
function maxAnswerBytes(target: UpstreamTarget): number {
  const { provider } = target;
  return provider.kind === ProviderKind.Http ? provider.settings.maxResponseBytes : DEFAULT_MAX_RESPONSE_BYTES;
}

/** False when every target's breaker is open (a half-open one counts as
 * available); service-auto routing skips such an alias. Takes no probe slot. */
export function anyTargetAvailable(targets: readonly Pick<UpstreamTarget, 'breaker'>[]): boolean {
  for (const target of targets) if (target.breaker.state() !== State.Open) return true;
  return false;
}

/** False for the outcomes of a target that was passed over without a call. */
export function wasAttempted(outcome: AttemptOutcome): boolean {
  return outcome !== AttemptOutcome.SkippedOpen && outcome !== AttemptOutcome.SkippedUnsupported;
}

/** One entry of the access line's `attempts`: `target:outcome`, then the
 * status the failure answers with, or the parameter a target could not take. */
export function describeAttempt(a: AttemptRecord): string {
  const detail = a.status ?? a.param;
  return `${a.targetId}:${a.outcome}${detail === undefined ? '' : `:${detail}`}`;
}

type Attempt<T, D extends DispatchTarget, C extends AttemptContext> = (target: D, call: C, schema: AnswerSchema | undefined) => Promise<T>;
/** The upstream call of one attempt on `target`: made once per attempt, the one object an attempt costs. */
type CallMaker<D extends DispatchTarget, C extends AttemptContext> = (target: D, requestId: string, signal: AbortSource, traceHeaders: Readonly<Record<string, string>> | undefined) => C;

const chatCall: CallMaker<UpstreamTarget, UpstreamCall> = (target, requestId, signal, traceHeaders) => ({ request: target.request, requestId, signal, traceHeaders });
const plainCall: CallMaker<DispatchTarget, AttemptContext> = (_target, requestId, signal, traceHeaders) => ({ requestId, signal, traceHeaders });

/**
 * The first answer `attempt` gets from `targets`, by the same order, retries,
 * fallbacks and breakers as a chat answer: for a request of another kind
 * (embeddings), whose attempt is its own. An attempt tells its target's
 * breaker of success; the loop tells it of failures.
 */
export function dispatchEach<T, D extends DispatchTarget>(
  targets: readonly D[],
  ctx: DispatchContext,
  attempt: (target: D, context: AttemptContext) => Promise<T>,
): Promise<{ value: T; target: D }> {
  return dispatch(targets, ctx, attempt, plainCall);
}

async function dispatch<T, D extends DispatchTarget, C extends AttemptContext>(
  targets: readonly D[],
  ctx: DispatchContext,
  attempt: Attempt<T, D, C>,
  makeCall: CallMaker<D, C>,
): Promise<{ value: T; target: D }> {
  if (targets.length === 0) throw new Error('dispatch needs at least one upstream target.');
  const { signal } = ctx;
  if (signal.aborted) throw new ClientAbortError(signal.reason);
  const random = ctx.random ?? Math.random;
  const scheduler = ctx.scheduler ?? systemScheduler;
  const schema = ctx.answerSchema;

  let lastFailure: unknown;
  let attempted = false;
  for (const index of orderTargets(targets, random)) {
    const target = targets[index] as D;
    // Before the breaker: a half-open breaker's probe is not spent on a target that will not be called.
    if (target.refusal != null) {
      ctx.onAttempt?.({ targetId: target.id, attempt: 1, outcome: AttemptOutcome.SkippedUnsupported, code: target.refusal.code, ...paramOf(target.refusal) });
      continue;
    }
    const maxAttempts = Math.max(1, target.retry.maxAttempts);
    for (let n = 1; n <= maxAttempts; n++) {
      if (!target.breaker.canAttempt()) {
        ctx.onAttempt?.({ targetId: target.id, attempt: n, outcome: AttemptOutcome.SkippedOpen });
        break;
      }
      attempted = true;
      let value: T;
      try {
        const traceHeaders = ctx.startAttempt?.(target.id, n);
        value = await attempt(target, makeCall(target, ctx.requestId, signal, traceHeaders), schema);
      } catch (error) {
        const failure = classifyFailure(error);
        // A mismatch is an answer, whole and in time: no failure for the breaker (see the top of this file).
        if (error instanceof UpstreamSchemaMismatchError) target.breaker.onSuccess();
        else tellBreaker(target.breaker, failure, error);
        const record = failureRecord(target.id, n, error);
        if (failure === FailureClass.Fatal) {
          ctx.onAttempt?.({ ...record, outcome: AttemptOutcome.Fatal });
          throw error;
        }
        lastFailure = error;
        const delayMs = failure === FailureClass.Retry && n < maxAttempts ? retryDelay(error, n, target.retry, random, scheduler.now()) : undefined;
        if (delayMs === undefined) {
          ctx.onAttempt?.({ ...record, outcome: AttemptOutcome.Fallback });
          break;
        }
        ctx.onAttempt?.({ ...record, outcome: AttemptOutcome.Retry, delayMs });
        // No timer for no wait (full jitter draws 0 now and then).
        if (delayMs > 0) await sleepOn(scheduler, delayMs, signal, clientAbort);
        // An abort just as the wait ended still wins over the next attempt.
        if (signal.aborted) throw new ClientAbortError(signal.reason);
        continue;
      }
      ctx.onAttempt?.({ targetId: target.id, attempt: n, outcome: AttemptOutcome.Ok });
      return { value, target };
    }
  }
  if (!attempted) {
    const takers = targets.filter((t) => t.refusal == null);
    // The caller checks before dispatching (../routing/alias-targets.ts) that some target can take the request.
    if (takers.length === 0) throw (targets[0] as D).refusal as InvalidRequestError;
    throw allTargetsOpenError(takers);
  }
  // Already in the client's terms (429 with retry-after, 502, 504), with the
  // code of the last thing that went wrong.
  throw lastFailure;
}

function paramOf(refusal: InvalidRequestError): { param?: string } {
  return refusal.param === null ? {} : { param: refusal.param };
}

function failureRecord(targetId: string, attempt: number, error: unknown): Omit<AttemptRecord, 'outcome'> {
  if (error instanceof ApiError) return { targetId, attempt, status: error.status, code: error.code, cause: failureCauseOf(error) };
  if (isClientAbort(error)) return { targetId, attempt, code: error.code };
  return { targetId, attempt };
}

/**
 * The wait before the next attempt on the same target, or undefined when the
 * target should be given up on now: the upstream's own Retry-After when it
 * sent one (a rate limiter knows its window better than any backoff), unless
 * it is longer than maxRetryAfterMs; otherwise exponential backoff with jitter.
 */
function retryDelay(error: unknown, attempt: number, policy: RetryPolicy, random: () => number, now: number): number | undefined {
  let hinted: number | undefined;
  if (error instanceof UpstreamRateLimitError) {
    hinted = upstreamRetryDelay(error.upstreamHint.retryAfter, error.upstreamHint.retryAfterMs, now);
  } else if (error instanceof ApiError && error.status === 429) {
    hinted = upstreamRetryDelay(error.headers['retry-after'], error.headers['retry-after-ms'], now);
  }
  if (hinted !== undefined) return hinted <= policy.maxRetryAfterMs ? hinted : undefined;
  return backoffDelay(attempt, policy, random);
}

/** 503 when no target could even be tried; Retry-After says when the first
 * breaker lets a probe through. */
function allTargetsOpenError(targets: readonly DispatchTarget[]): UpstreamError {
  let soonest = Number.POSITIVE_INFINITY;
  for (const target of targets) soonest = Math.min(soonest, target.breaker.msUntilProbe());
  const seconds = Number.isFinite(soonest) ? Math.max(1, Math.ceil(soonest / 1000)) : 1;
  return new UpstreamError(
    'upstream_unavailable',
    `Every upstream provider for this model failed repeatedly and is paused; retry after ${seconds} s.`,
    { headers: { 'retry-after': String(seconds) } },
  );
}

/** What a back-off wait cut short by the caller's abort throws. */
function clientAbort(reason: unknown): Error {
  return new ClientAbortError(reason);
}
