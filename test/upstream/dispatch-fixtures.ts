// What the dispatcher tests share: targets over the OpenAI-compatible adapter
// against the shared fake upstream (../../src/testing/fake-upstream.ts), the
// upstream behaviours they script, and driving the back-off waits on a
// ManualScheduler.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ChatRequest } from '../../src/chat/types.ts';
import { createOpenAICompatibleProvider, type OpenAICompatibleOptions } from '../../src/providers/openai-compatible.ts';
import { createCircuitBreaker, type CircuitBreaker, type CircuitBreakerOptions } from '../../src/upstream/circuit-breaker.ts';
import type { AttemptRecord, DispatchContext, UpstreamTarget } from '../../src/upstream/dispatcher.ts';
import type { RetryPolicy } from '../../src/upstream/retry-policy.ts';
import type { Scheduler } from '../../src/time/scheduler.ts';
import { eventually } from '../support/eventually.ts';
import { sendJson, startEventStream, startFakeUpstream, type FakeUpstream, type ReceivedRequest, type UpstreamHandler } from '../../src/testing/fake-upstream.ts';
import type { ManualScheduler } from '../support/manual-scheduler.ts';

export { sendJson as json, startEventStream };

/** The fake upstreams a file starts, all closed by its after() with closeAll(). */
export function upstreamPool(): { start(handle: UpstreamHandler): Promise<FakeUpstream>; closeAll(): Promise<void> } {
  const started: FakeUpstream[] = [];
  return {
    async start(handle) {
      const upstream = await startFakeUpstream(handle);
      started.push(upstream);
      return upstream;
    },
    async closeAll() {
      for (const upstream of started) await upstream.close();
    },
  };
}

/** `host:port` of a fake upstream, as failure causes name it. */
export function addressOf(upstream: { baseUrl: string }): string {
  return new URL(upstream.baseUrl).host;
}

export const FAST_RETRY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 2000 };

export const baseRequest: ChatRequest = { model: 'upstream-model', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 16 };

export interface TargetOptions {
  priority?: number;
  weight?: number;
  retry?: Partial<RetryPolicy>;
  breaker?: CircuitBreaker;
  breakerOptions?: CircuitBreakerOptions;
  /** The provider's timers and the breaker's clock; default the system's. */
  scheduler?: Scheduler;
  provider?: Partial<OpenAICompatibleOptions>;
}

/** A target over the OpenAI-compatible adapter. Its first-byte and idle
 * timeouts (a minute) never fire in a test unless it sets its own. */
export function target(id: string, baseUrl: string, options: TargetOptions = {}): UpstreamTarget {
  const scheduler = options.scheduler;
  return {
    id,
    provider: createOpenAICompatibleProvider({
      baseUrl,
      firstByteTimeoutMs: 60_000,
      idleTimeoutMs: 60_000,
      ...(scheduler === undefined ? {} : { scheduler }),
      ...options.provider,
    }),
    priority: options.priority ?? 0,
    weight: options.weight ?? 1,
    request: { ...baseRequest, model: `${id}-model` },
    retry: { ...FAST_RETRY, ...options.retry },
    breaker: options.breaker ?? createCircuitBreaker(options.breakerOptions ?? {}, scheduler === undefined ? Date.now : () => scheduler.now()),
  };
}

/** A dispatch context recording every attempt, with the jitter at the middle of its range. */
export function context(records: AttemptRecord[] = [], extra: Partial<DispatchContext> = {}): DispatchContext {
  return {
    requestId: 'req_dispatch',
    signal: new AbortController().signal,
    random: () => 0.5,
    onAttempt: (record) => records.push(record),
    ...extra,
  };
}

export function completionBody(content: string): Record<string, unknown> {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1700000000,
    model: 'upstream-model',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
  };
}

export function answer(content: string): UpstreamHandler {
  return (_req, res) => sendJson(res, 200, completionBody(content));
}

export function chunkEvent(content: string, finish: string | null = null): string {
  const chunk = {
    id: 'chatcmpl-s',
    object: 'chat.completion.chunk',
    created: 1700000001,
    model: 'upstream-model',
    choices: [{ index: 0, delta: { content }, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** A whole stream: one chunk per word, a finish chunk, [DONE]. */
export function streamOf(...words: string[]): UpstreamHandler {
  return (_req, res) => {
    startEventStream(res);
    res.end(`${words.map((word) => chunkEvent(word)).join('')}${chunkEvent('', 'stop')}data: [DONE]\n\n`);
  };
}

export function errorStatus(status: number, headers: Record<string, string> = {}): UpstreamHandler {
  return (_req, res) => sendJson(res, status, { error: { message: `failure ${status}` } }, headers);
}

/** Never answers; the socket stays open until the client gives up. */
export const hang: UpstreamHandler = () => undefined;

/** Cuts the connection without a response. */
export const reset: UpstreamHandler = (req) => {
  req.socket.destroy();
};

/** Request n gets the n-th step; the last step answers every later request. */
export function sequence(...steps: UpstreamHandler[]): UpstreamHandler {
  return (req: IncomingMessage, res: ServerResponse, received: ReceivedRequest) => {
    const step = steps[Math.min(received.n, steps.length) - 1];
    if (step === undefined) throw new Error('no step');
    return step(req, res, received);
  };
}

/** Each request's body and x-request-id, in order. */
export function bodiesAndIds(upstream: FakeUpstream): Array<{ body: string; requestId: unknown }> {
  return upstream.received.map((r) => ({ body: r.text, requestId: r.headers['x-request-id'] }));
}

/**
 * The back-off of `ms` on `scheduler`, exactly: once it is the one timer
 * pending, the next attempt has not gone out 1 ms before its deadline and
 * has at it. `upstream` is where that attempt goes.
 */
export async function backOff(scheduler: ManualScheduler, ms: number, upstream: FakeUpstream): Promise<void> {
  // Until then the attempt's own timers are pending; they are cleared when it fails.
  await eventually(() => scheduler.pending().join() === String(ms), `a back-off of ${ms} ms as the one timer pending`);
  const before = upstream.count;
  if (ms > 1) await scheduler.advance(ms - 1);
  assert.equal(upstream.count, before, `no attempt before the back-off of ${ms} ms ended`);
  await scheduler.advance(1);
  await upstream.arrived(before + 1);
}

export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}
