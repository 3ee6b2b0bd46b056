import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { normalizeCompletion } from '../../src/chat/completion-response.ts';
import { ApiError } from '../../src/errors/api-error.ts';
import type { ChatProvider } from '../../src/upstream/provider.ts';
import { isClientAbort } from '../../src/upstream/upstream-errors.ts';
import { createCircuitBreaker } from '../../src/upstream/circuit-breaker.ts';
import {
  abortableSleep,
  anyTargetAvailable,
  dispatchCompletion,
  type AttemptRecord,
  type DispatchContext,
} from '../../src/upstream/dispatcher.ts';
import {
  addressOf,
  answer,
  completionBody,
  errorStatus,
  hang,
  json,
  manualClock,
  refusedBaseUrl,
  rejection,
  reset,
  startFakeUpstream,
  target,
  type FakeUpstream,
  type UpstreamBehaviour,
} from './fake-upstream.ts';
import { scriptedRandom, seededRandom } from './seeded-random.ts';

const upstreams: FakeUpstream[] = [];
async function upstream(behaviour: UpstreamBehaviour): Promise<FakeUpstream> {
  const started = await startFakeUpstream(behaviour);
  upstreams.push(started);
  return started;
}
after(async () => {
  for (const started of upstreams) await started.close();
});

function context(records: AttemptRecord[], extra: Partial<DispatchContext> = {}): DispatchContext {
  return {
    requestId: 'req_dispatch',
    signal: new AbortController().signal,
    random: () => 0.5,
    onAttempt: (record) => records.push(record),
    ...extra,
  };
}

function sequence(...steps: UpstreamBehaviour[]): UpstreamBehaviour {
  return (n, req, res) => {
    const step = steps[Math.min(n, steps.length) - 1];
    if (step === undefined) throw new Error('no step');
    return step(n, req, res);
  };
}

const content = (result: { completion: { choices: Array<{ message: { content: string | null } }> } }): string | null =>
  result.completion.choices[0]?.message.content ?? null;

describe('dispatchCompletion: retries on one target', () => {
  test('fail then succeed: a 500 is retried after the jittered backoff', async () => {
    const a = await upstream(sequence(errorStatus(500), answer('second time lucky')));
    const records: AttemptRecord[] = [];
    const result = await dispatchCompletion([target('a', a.baseUrl)], context(records));
    assert.equal(content(result), 'second time lucky');
    assert.equal(result.target.id, 'a');
    assert.equal(a.requests, 2);
    // random 0.5 of the 5 ms first-retry ceiling
    assert.deepEqual(records, [
      { targetId: 'a', attempt: 1, outcome: 'retry', status: 502, code: 'upstream_error', delayMs: 2, cause: { kind: 'http', detail: '500', address: addressOf(a) } },
      { targetId: 'a', attempt: 2, outcome: 'ok' },
    ]);
  });

  test('every attempt sends the target request with the x-request-id', async () => {
    const a = await upstream(sequence(errorStatus(503), answer('ok')));
    const b = await upstream(answer('unused'));
    const targets = [target('a', a.baseUrl), target('b', b.baseUrl, { priority: 1 })];
    await dispatchCompletion(targets, context([]));
    const expectedBody = JSON.stringify(targets[0]?.request);
    assert.deepEqual(a.seen, [
      { body: expectedBody, requestId: 'req_dispatch' },
      { body: expectedBody, requestId: 'req_dispatch' },
    ]);
    assert.equal(JSON.parse(expectedBody).model, 'a-model');
  });

  test('a connection reset is retried', async () => {
    const a = await upstream(sequence(reset, answer('after reset')));
    const records: AttemptRecord[] = [];
    const result = await dispatchCompletion([target('a', a.baseUrl)], context(records));
    assert.equal(content(result), 'after reset');
    assert.deepEqual(records.map((r) => [r.outcome, r.code]), [
      ['retry', 'upstream_unreachable'],
      ['ok', undefined],
    ]);
  });

  test('429 with Retry-After: 1 waits that second, not the backoff', async () => {
    const a = await upstream(sequence(errorStatus(429, { 'retry-after': '1' }), answer('patience')));
    const records: AttemptRecord[] = [];
    const started = performance.now();
    const result = await dispatchCompletion([target('a', a.baseUrl)], context(records));
    const elapsed = performance.now() - started;
    assert.equal(content(result), 'patience');
    assert.ok(elapsed >= 990 && elapsed < 1800, String(elapsed));
    assert.deepEqual(records[0], {
      targetId: 'a',
      attempt: 1,
      outcome: 'retry',
      status: 429,
      code: 'rate_limit_exceeded',
      delayMs: 1000,
      cause: { kind: 'http', detail: '429', address: addressOf(a) },
    });
  });

  test('429 with retry-after-ms is honoured to the millisecond', async () => {
    const a = await upstream(sequence(errorStatus(429, { 'retry-after': '1', 'retry-after-ms': '120' }), answer('ok')));
    const records: AttemptRecord[] = [];
    const waits: number[] = [];
    await dispatchCompletion([target('a', a.baseUrl)], context(records, { sleep: async (ms) => void waits.push(ms) }));
    assert.deepEqual(waits, [120]);
  });

  test('429 without Retry-After follows the backoff', async () => {
    const a = await upstream(sequence(errorStatus(429), errorStatus(429), answer('ok')));
    const waits: number[] = [];
    await dispatchCompletion(
      [target('a', a.baseUrl, { retry: { baseDelayMs: 100, maxDelayMs: 1000 } })],
      context([], { random: scriptedRandom([0.5, 0.25]), sleep: async (ms) => void waits.push(ms) }),
    );
    assert.deepEqual(waits, [50, 50]);
  });

  test('retries stop at maxAttempts; the last failure reaches the client', async () => {
    const a = await upstream(errorStatus(500));
    const records: AttemptRecord[] = [];
    const error = await rejection(dispatchCompletion([target('a', a.baseUrl)], context(records)));
    assert.equal(a.requests, 3);
    assert.ok(error instanceof ApiError);
    assert.deepEqual(error.toBody(), {
      error: { message: 'The upstream provider failed (HTTP 500): failure 500', type: 'upstream_error', param: null, code: 'upstream_error' },
    });
    assert.deepEqual(records.map((r) => r.outcome), ['retry', 'retry', 'fallback']);
  });

  test('maxAttempts 1 means no retry', async () => {
    const a = await upstream(errorStatus(502));
    await rejection(dispatchCompletion([target('a', a.baseUrl, { retry: { maxAttempts: 1 } })], context([])));
    assert.equal(a.requests, 1);
  });
});

describe('dispatchCompletion: fallbacks', () => {
  test('429 with a Retry-After beyond maxRetryAfterMs moves to the next target at once', async () => {
    const a = await upstream(errorStatus(429, { 'retry-after': '3600' }));
    const b = await upstream(answer('from b'));
    const records: AttemptRecord[] = [];
    const started = performance.now();
    const result = await dispatchCompletion([target('a', a.baseUrl), target('b', b.baseUrl, { priority: 1 })], context(records));
    assert.ok(performance.now() - started < 1000);
    assert.equal(content(result), 'from b');
    assert.equal(result.target.id, 'b');
    assert.equal(a.requests, 1);
    assert.deepEqual(records, [
      { targetId: 'a', attempt: 1, outcome: 'fallback', status: 429, code: 'rate_limit_exceeded', cause: { kind: 'http', detail: '429', address: addressOf(a) } },
      { targetId: 'b', attempt: 1, outcome: 'ok' },
    ]);
  });

  test('a long Retry-After on the only target is passed on as 429 with that Retry-After', async () => {
    const a = await upstream(errorStatus(429, { 'retry-after': '3600' }));
    const error = await rejection(dispatchCompletion([target('a', a.baseUrl)], context([])));
    assert.ok(error instanceof ApiError);
    assert.equal(error.status, 429);
    assert.deepEqual(error.headers, { 'retry-after': '3600' });
    assert.equal(a.requests, 1);
  });

  test('a hang before the first byte times out and falls back without a retry; the hung socket is closed', async () => {
    const a = await upstream(hang);
    const b = await upstream(answer('from b'));
    const records: AttemptRecord[] = [];
    const started = performance.now();
    const result = await dispatchCompletion(
      [target('a', a.baseUrl, { provider: { firstByteTimeoutMs: 150 } }), target('b', b.baseUrl, { priority: 1 })],
      context(records),
    );
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 140 && elapsed < 1500, String(elapsed));
    assert.equal(content(result), 'from b');
    assert.equal(a.requests, 1);
    assert.deepEqual(records[0], {
      targetId: 'a',
      attempt: 1,
      outcome: 'fallback',
      status: 504,
      code: 'upstream_timeout',
      cause: { kind: 'timeout', detail: 'first_byte', address: addressOf(a) },
    });
    await a.closed(1);
  });

  test('upstream 401 falls back at once: another target has other credentials', async () => {
    const a = await upstream(errorStatus(401));
    const b = await upstream(answer('from b'));
    const result = await dispatchCompletion([target('a', a.baseUrl), target('b', b.baseUrl, { priority: 1 })], context([]));
    assert.equal(content(result), 'from b');
    assert.equal(a.requests, 1);
  });

  test('a 400 is the client’s: thrown at once, no retry, no fallback, not counted by the breaker', async () => {
    const a = await upstream(errorStatus(400));
    const b = await upstream(answer('never'));
    const breaker = createCircuitBreaker({ failureThreshold: 1 });
    const records: AttemptRecord[] = [];
    const error = await rejection(
      dispatchCompletion([target('a', a.baseUrl, { breaker }), target('b', b.baseUrl, { priority: 1 })], context(records)),
    );
    assert.ok(error instanceof ApiError);
    assert.deepEqual(error.toBody(), { error: { message: 'failure 400', type: 'invalid_request_error', param: null, code: null } });
    assert.equal(a.requests, 1);
    assert.equal(b.requests, 0);
    assert.equal(breaker.state(), 'closed');
    assert.deepEqual(records, [
      { targetId: 'a', attempt: 1, outcome: 'fatal', status: 400, code: 'upstream_rejected_request', cause: { kind: 'http', detail: '400', address: addressOf(a) } },
    ]);
  });

  test('everything failing: the last target’s failure, in the client’s terms', async () => {
    const a = await upstream(errorStatus(500));
    const b = await upstream(hang);
    const error = await rejection(
      dispatchCompletion(
        [target('a', a.baseUrl, { retry: { maxAttempts: 2 } }), target('b', b.baseUrl, { priority: 1, provider: { firstByteTimeoutMs: 100 } })],
        context([]),
      ),
    );
    assert.ok(error instanceof ApiError);
    assert.equal(error.status, 504);
    assert.equal(error.code, 'upstream_timeout');
    assert.equal(a.requests, 2);
    assert.equal(b.requests, 1);
  });
});

describe('dispatchCompletion: order', () => {
  test('priorities: the lower priority is always tried first', async () => {
    const primary = await upstream(answer('primary'));
    const backup = await upstream(answer('backup'));
    const targets = [target('backup', backup.baseUrl, { priority: 5, weight: 100 }), target('primary', primary.baseUrl, { priority: 1, weight: 1 })];
    const random = seededRandom(1);
    for (let i = 0; i < 10; i++) assert.equal(content(await dispatchCompletion(targets, context([], { random }))), 'primary');
    assert.equal(backup.requests, 0);
  });

  test('weights: 3:1 among equals over 80 seeded dispatches', async () => {
    const heavy = await upstream(answer('heavy'));
    const light = await upstream(answer('light'));
    const targets = [target('heavy', heavy.baseUrl, { weight: 3 }), target('light', light.baseUrl, { weight: 1 })];
    const random = seededRandom(20240611);
    for (let i = 0; i < 80; i++) await dispatchCompletion(targets, context([], { random }));
    assert.equal(heavy.requests + light.requests, 80);
    assert.ok(heavy.requests >= 50 && heavy.requests <= 70, `${heavy.requests}:${light.requests}`);
  });
});

describe('dispatchCompletion: circuit breakers', () => {
  test('a dead target stops being contacted once its breaker opens', async () => {
    const dead = await upstream(errorStatus(503));
    const alive = await upstream(answer('alive'));
    const clock = manualClock();
    const targets = [
      target('dead', dead.baseUrl, { retry: { maxAttempts: 1 }, breakerOptions: { failureThreshold: 3, openMs: 10_000 }, clock: clock.now }),
      target('alive', alive.baseUrl, { priority: 1 }),
    ];
    const outcomes: string[] = [];
    for (let i = 0; i < 6; i++) {
      const records: AttemptRecord[] = [];
      assert.equal(content(await dispatchCompletion(targets, context(records))), 'alive');
      outcomes.push(records.map((r) => `${r.targetId}:${r.outcome}`).join(' '));
    }
    assert.equal(dead.requests, 3);
    assert.equal(alive.requests, 6);
    assert.deepEqual(outcomes, [
      'dead:fallback alive:ok',
      'dead:fallback alive:ok',
      'dead:fallback alive:ok',
      'dead:skipped_open alive:ok',
      'dead:skipped_open alive:ok',
      'dead:skipped_open alive:ok',
    ]);
    assert.equal(anyTargetAvailable(targets), true);
    assert.equal(anyTargetAvailable(targets.slice(0, 1)), false);
  });

  test('retries count against the breaker, which stops the retries when it opens', async () => {
    const dead = await upstream(errorStatus(500));
    const records: AttemptRecord[] = [];
    const error = await rejection(
      dispatchCompletion([target('dead', dead.baseUrl, { retry: { maxAttempts: 5 }, breakerOptions: { failureThreshold: 2 } })], context(records)),
    );
    assert.equal((error as ApiError).code, 'upstream_error');
    assert.equal(dead.requests, 2);
    assert.deepEqual(records.map((r) => r.outcome), ['retry', 'retry', 'skipped_open']);
  });

  test('half-open: exactly one probe; success closes the breaker, failure reopens it', async () => {
    let healthy = false;
    const flaky = await upstream((_n, _req, res) => (healthy ? json(res, 200, completionBody('flaky')) : json(res, 500, {})));
    const backup = await upstream(answer('backup'));
    const clock = manualClock();
    const breaker = createCircuitBreaker({ failureThreshold: 1, openMs: 1000 }, clock.now);
    const targets = [target('flaky', flaky.baseUrl, { retry: { maxAttempts: 1 }, breaker }), target('backup', backup.baseUrl, { priority: 1 })];

    await dispatchCompletion(targets, context([]));
    assert.equal(breaker.state(), 'open');
    assert.equal(flaky.requests, 1);

    clock.advance(1000);
    assert.equal(breaker.state(), 'half_open');
    // The probe fails: reopened, the request still served by the backup.
    assert.equal(content(await dispatchCompletion(targets, context([]))), 'backup');
    assert.equal(flaky.requests, 2);
    assert.equal(breaker.state(), 'open');
    await dispatchCompletion(targets, context([]));
    assert.equal(flaky.requests, 2);

    clock.advance(1000);
    healthy = true;
    assert.equal(content(await dispatchCompletion(targets, context([]))), 'flaky');
    assert.equal(breaker.state(), 'closed');
    assert.equal(flaky.requests, 3);
  });

  test('while the probe is in flight, other requests skip the target', async () => {
    let release: () => void = () => undefined;
    const slow = await upstream(async (_n, _req, res) => {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      json(res, 200, completionBody('probe'));
    });
    const backup = await upstream(answer('backup'));
    const clock = manualClock();
    const breaker = createCircuitBreaker({ failureThreshold: 1, openMs: 10 }, clock.now);
    breaker.onFailure();
    clock.advance(10);
    const targets = [target('slow', slow.baseUrl, { breaker }), target('backup', backup.baseUrl, { priority: 1 })];
    const probe = dispatchCompletion(targets, context([]));
    while (slow.requests === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const records: AttemptRecord[] = [];
    assert.equal(content(await dispatchCompletion(targets, context(records))), 'backup');
    assert.deepEqual(records[0], { targetId: 'slow', attempt: 1, outcome: 'skipped_open' });
    release();
    assert.equal(content(await probe), 'probe');
    assert.equal(breaker.state(), 'closed');
  });

  test('every breaker open: 503 upstream_unavailable, Retry-After until the first probe, nothing contacted', async () => {
    const a = await upstream(answer('a'));
    const b = await upstream(answer('b'));
    const clock = manualClock();
    const breakerA = createCircuitBreaker({ failureThreshold: 1, openMs: 30_000 }, clock.now);
    const breakerB = createCircuitBreaker({ failureThreshold: 1, openMs: 30_000 }, clock.now);
    breakerA.onFailure();
    clock.advance(10_000);
    breakerB.onFailure();
    clock.advance(1_500);
    const targets = [target('a', a.baseUrl, { breaker: breakerA }), target('b', b.baseUrl, { breaker: breakerB })];
    assert.equal(anyTargetAvailable(targets), false);
    const records: AttemptRecord[] = [];
    const error = await rejection(dispatchCompletion(targets, context(records)));
    assert.ok(error instanceof ApiError);
    assert.deepEqual(
      { status: error.status, body: error.toBody(), headers: error.headers },
      {
        status: 503,
        body: {
          error: {
            message: 'Every upstream provider for this model failed repeatedly and is paused; retry after 19 s.',
            type: 'server_error',
            param: null,
            code: 'upstream_unavailable',
          },
        },
        headers: { 'retry-after': '19' },
      },
    );
    assert.equal(a.requests + b.requests, 0);
    assert.deepEqual(records.map((r) => r.outcome), ['skipped_open', 'skipped_open']);
  });

  test('connection refused counts toward the breaker', async () => {
    const breaker = createCircuitBreaker({ failureThreshold: 3 });
    const error = await rejection(dispatchCompletion([target('gone', await refusedBaseUrl(), { breaker })], context([])));
    assert.equal((error as ApiError).code, 'upstream_unreachable');
    assert.equal(breaker.state(), 'open');
  });
});

describe('dispatchCompletion: aborts', () => {
  test('an already aborted signal contacts nobody', async () => {
    const a = await upstream(answer('a'));
    const controller = new AbortController();
    controller.abort(new Error('left'));
    const error = await rejection(dispatchCompletion([target('a', a.baseUrl)], context([], { signal: controller.signal })));
    assert.equal(isClientAbort(error), true);
    assert.equal(a.requests, 0);
  });

  test('an abort during the backoff ends the wait at once and leaves no timer', async () => {
    const a = await upstream(errorStatus(500));
    const controller = new AbortController();
    const timers = (): number => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const before = timers();
    const records: AttemptRecord[] = [];
    const started = performance.now();
    const pending = dispatchCompletion(
      [target('a', a.baseUrl, { retry: { baseDelayMs: 10_000, maxDelayMs: 10_000 } })],
      context(records, {
        signal: controller.signal,
        random: () => 0.9,
        onAttempt(record) {
          records.push(record);
          if (record.outcome === 'retry') setTimeout(() => controller.abort(new Error('client left')), 30);
        },
      }),
    );
    const error = await rejection(pending);
    assert.ok(performance.now() - started < 1000);
    assert.equal(isClientAbort(error), true);
    assert.equal(((error as Error).cause as Error).message, 'client left');
    assert.equal(a.requests, 1);
    assert.deepEqual(records[0]?.delayMs, 9000);
    assert.equal(timers(), before);
  });

  test('an abort while waiting for the upstream closes its socket; the breaker is not blamed', async () => {
    const a = await upstream(hang);
    const controller = new AbortController();
    const breaker = createCircuitBreaker({ failureThreshold: 1 });
    const pending = dispatchCompletion([target('a', a.baseUrl, { breaker })], context([], { signal: controller.signal }));
    while (a.requests === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    assert.equal(isClientAbort(await rejection(pending)), true);
    await a.closed(1);
    assert.equal(breaker.state(), 'closed');
  });

  test('abortableSleep: resolves after the time, rejects on abort, cleans up', async () => {
    const controller = new AbortController();
    let listeners = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.addEventListener = (...args: Parameters<AbortSignal['addEventListener']>) => {
      listeners++;
      add(...args);
    };
    controller.signal.removeEventListener = (...args: Parameters<AbortSignal['removeEventListener']>) => {
      listeners--;
      remove(...args);
    };
    await abortableSleep(5, controller.signal);
    assert.equal(listeners, 0);
    const pending = abortableSleep(10_000, controller.signal);
    controller.abort('why');
    const error = await rejection(pending);
    assert.equal(isClientAbort(error), true);
    assert.equal((error as Error).cause, 'why');
    assert.equal(isClientAbort(await rejection(abortableSleep(5, controller.signal))), true);
  });

  test('no targets is a programming error', async () => {
    await assert.rejects(dispatchCompletion([], context([])), { message: 'dispatch needs at least one upstream target.' });
  });
});

describe('dispatchCompletion with other providers’ errors', () => {
  function scripted(...outcomes: unknown[]): ChatProvider {
    let n = 0;
    return {
      complete: async () => {
        const outcome = outcomes[n++];
        if (outcome instanceof Error) throw outcome;
        return normalizeCompletion(completionBody(String(outcome)));
      },
      stream: () => {
        throw new Error('unused');
      },
    };
  }

  test('a plain 429 ApiError: its retry-after header is the hint', async () => {
    const waits: number[] = [];
    const t = { ...target('other', 'http://127.0.0.1:9/v1'), provider: scripted(new ApiError('rate_limit_exceeded', 'slow down', { headers: { 'retry-after': '2' } }), 'ok') };
    const result = await dispatchCompletion([t], context([], { sleep: async (ms) => void waits.push(ms) }));
    assert.equal(content(result), 'ok');
    assert.deepEqual(waits, [2000]);
  });

  test('a bug in a provider is thrown as is, without status, and frees the breaker', async () => {
    const bug = new TypeError('cannot read properties of undefined');
    const breaker = createCircuitBreaker({ failureThreshold: 1 });
    const records: AttemptRecord[] = [];
    const t = { ...target('buggy', 'http://127.0.0.1:9/v1', { breaker }), provider: scripted(bug) };
    assert.equal(await rejection(dispatchCompletion([t], context(records))), bug);
    assert.deepEqual(records, [{ targetId: 'buggy', attempt: 1, outcome: 'fatal' }]);
    assert.equal(breaker.state(), 'closed');
  });

  test('a custom sleep that ignores the abort does not let the next attempt out', async () => {
    const controller = new AbortController();
    const t = { ...target('other', 'http://127.0.0.1:9/v1'), provider: scripted(new ApiError('upstream_error', 'x'), 'never') };
    const error = await rejection(
      dispatchCompletion([t], context([], { signal: controller.signal, sleep: async () => controller.abort() })),
    );
    assert.equal(isClientAbort(error), true);
  });
});
