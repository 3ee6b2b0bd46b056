// dispatchCompletion with circuit breakers (on a ManualScheduler's clock),
// aborts during an attempt or a back-off, and providers other than the
// OpenAI-compatible adapter.
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { after, describe, test } from 'node:test';
import { normalizeCompletion } from '../../src/chat/completion-response.ts';
import { ApiError } from '../../src/errors/api-error.ts';
import type { ChatProvider } from '../../src/upstream/provider.ts';
import { isClientAbort } from '../../src/upstream/upstream-errors.ts';
import { createCircuitBreaker } from '../../src/upstream/circuit-breaker.ts';
import { anyTargetAvailable, dispatchCompletion, type AttemptRecord } from '../../src/upstream/dispatcher.ts';
import type { Scheduler } from '../../src/time/scheduler.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { eventually } from '../support/eventually.ts';
import { refusedPort } from './refused-port.ts';
import { answer, backOff, completionBody, context, errorStatus, hang, json, rejection, target, upstreamPool } from './dispatch-fixtures.ts';

const pool = upstreamPool();
after(() => pool.closeAll());

const content = (result: { completion: { choices: Array<{ message: { content: string | null } }> } }): string | null =>
  result.completion.choices[0]?.message.content ?? null;

/** The abort listeners still attached to `signal`. */
const listeners = (signal: AbortSignal): number => getEventListeners(signal, 'abort').length;

describe('dispatchCompletion: circuit breakers', () => {
  test('a dead target stops being contacted once its breaker opens', async () => {
    const dead = await pool.start(errorStatus(503));
    const alive = await pool.start(answer('alive'));
    const scheduler = new ManualScheduler();
    const targets = [
      target('dead', dead.baseUrl, { scheduler, retry: { maxAttempts: 1 }, breakerOptions: { failureThreshold: 3, openMs: 10_000 } }),
      target('alive', alive.baseUrl, { scheduler, priority: 1 }),
    ];
    const outcomes: string[] = [];
    for (let i = 0; i < 6; i++) {
      const records: AttemptRecord[] = [];
      assert.equal(content(await dispatchCompletion(targets, context(records, { scheduler }))), 'alive');
      outcomes.push(records.map((r) => `${r.targetId}:${r.outcome}`).join(' '));
    }
    assert.equal(dead.count, 3);
    assert.equal(alive.count, 6);
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
    const dead = await pool.start(errorStatus(500));
    const records: AttemptRecord[] = [];
    const error = await rejection(
      dispatchCompletion([target('dead', dead.baseUrl, { retry: { maxAttempts: 5 }, breakerOptions: { failureThreshold: 2 } })], context(records)),
    );
    assert.equal((error as ApiError).code, 'upstream_error');
    assert.equal(dead.count, 2);
    assert.deepEqual(records.map((r) => r.outcome), ['retry', 'retry', 'skipped_open']);
  });

  test('half-open after exactly openMs: one probe; success closes the breaker, failure reopens it', async () => {
    let healthy = false;
    const flaky = await pool.start((_req, res) => (healthy ? json(res, 200, completionBody('flaky')) : json(res, 500, {})));
    const backup = await pool.start(answer('backup'));
    const scheduler = new ManualScheduler();
    const breaker = createCircuitBreaker({ failureThreshold: 1, openMs: 1000 }, scheduler.now);
    const targets = [target('flaky', flaky.baseUrl, { retry: { maxAttempts: 1 }, breaker }), target('backup', backup.baseUrl, { priority: 1 })];
    const ctx = (): ReturnType<typeof context> => context([], { scheduler });

    await dispatchCompletion(targets, ctx());
    assert.equal(breaker.state(), 'open');
    assert.equal(flaky.count, 1);

    await scheduler.advance(999);
    assert.equal(breaker.state(), 'open');
    await scheduler.advance(1);
    assert.equal(breaker.state(), 'half_open');
    // The probe fails: reopened, the request still served by the backup.
    assert.equal(content(await dispatchCompletion(targets, ctx())), 'backup');
    assert.equal(flaky.count, 2);
    assert.equal(breaker.state(), 'open');
    await dispatchCompletion(targets, ctx());
    assert.equal(flaky.count, 2);

    await scheduler.advance(1000);
    healthy = true;
    assert.equal(content(await dispatchCompletion(targets, ctx())), 'flaky');
    assert.equal(breaker.state(), 'closed');
    assert.equal(flaky.count, 3);
  });

  test('while the probe is in flight, other requests skip the target', async () => {
    let release: () => void = () => undefined;
    const slow = await pool.start(async (_req, res) => {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      json(res, 200, completionBody('probe'));
    });
    const backup = await pool.start(answer('backup'));
    const scheduler = new ManualScheduler();
    const breaker = createCircuitBreaker({ failureThreshold: 1, openMs: 10 }, scheduler.now);
    breaker.onFailure();
    await scheduler.advance(10);
    const targets = [target('slow', slow.baseUrl, { breaker }), target('backup', backup.baseUrl, { priority: 1 })];
    const probe = dispatchCompletion(targets, context([]));
    await slow.arrived(1);
    const records: AttemptRecord[] = [];
    assert.equal(content(await dispatchCompletion(targets, context(records))), 'backup');
    assert.deepEqual(records[0], { targetId: 'slow', attempt: 1, outcome: 'skipped_open' });
    release();
    assert.equal(content(await probe), 'probe');
    assert.equal(breaker.state(), 'closed');
  });

  test('every breaker open: 503 upstream_unavailable, Retry-After until the first probe, nothing contacted', async () => {
    const a = await pool.start(answer('a'));
    const b = await pool.start(answer('b'));
    const scheduler = new ManualScheduler();
    const breakerA = createCircuitBreaker({ failureThreshold: 1, openMs: 30_000 }, scheduler.now);
    const breakerB = createCircuitBreaker({ failureThreshold: 1, openMs: 30_000 }, scheduler.now);
    breakerA.onFailure();
    await scheduler.advance(10_000);
    breakerB.onFailure();
    await scheduler.advance(1_500);
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
    assert.equal(a.count + b.count, 0);
    assert.deepEqual(records.map((r) => r.outcome), ['skipped_open', 'skipped_open']);
  });

  test('connection refused counts toward the breaker', async () => {
    const breaker = createCircuitBreaker({ failureThreshold: 3 });
    const error = await rejection(dispatchCompletion([target('gone', `http://127.0.0.1:${await refusedPort()}/v1`, { breaker })], context([])));
    assert.equal((error as ApiError).code, 'upstream_unreachable');
    assert.equal(breaker.state(), 'open');
  });
});

describe('dispatchCompletion: aborts', () => {
  test('an already aborted signal contacts nobody', async () => {
    const a = await pool.start(answer('a'));
    const controller = new AbortController();
    controller.abort(new Error('left'));
    const error = await rejection(dispatchCompletion([target('a', a.baseUrl)], context([], { signal: controller.signal })));
    assert.equal(isClientAbort(error), true);
    assert.equal(a.count, 0);
  });

  test('an abort during the back-off ends the wait at once and leaves no timer and no listener', async () => {
    const a = await pool.start(errorStatus(500));
    const controller = new AbortController();
    const scheduler = new ManualScheduler();
    const records: AttemptRecord[] = [];
    const pending = dispatchCompletion(
      [target('a', a.baseUrl, { scheduler, retry: { baseDelayMs: 10_000, maxDelayMs: 10_000 } })],
      context(records, { signal: controller.signal, scheduler, random: () => 0.9 }),
    );
    await eventually(() => scheduler.pending().join() === '9000', 'the back-off of 9000 ms');
    await scheduler.advance(8999);
    controller.abort(new Error('client left'));
    const error = await rejection(pending);
    assert.equal(isClientAbort(error), true);
    assert.equal(((error as Error).cause as Error).message, 'client left');
    assert.equal(a.count, 1);
    assert.deepEqual(records[0]?.delayMs, 9000);
    assert.deepEqual(scheduler.pending(), []);
    assert.equal(listeners(controller.signal), 0);
  });

  test('a back-off that runs out leaves no timer and no listener either', async () => {
    let n = 0;
    const a = await pool.start((_req, res) => (++n === 1 ? json(res, 500, {}) : json(res, 200, completionBody('later'))));
    const controller = new AbortController();
    const scheduler = new ManualScheduler();
    const pending = dispatchCompletion([target('a', a.baseUrl, { scheduler })], context([], { signal: controller.signal, scheduler }));
    await backOff(scheduler, 2, a);
    assert.equal(content(await pending), 'later');
    assert.deepEqual(scheduler.pending(), []);
    assert.equal(listeners(controller.signal), 0);
  });

  test('an abort just as the back-off ends still stops the next attempt', async () => {
    const a = await pool.start(errorStatus(500));
    const controller = new AbortController();
    const manual = new ManualScheduler();
    // The caller leaves in the same turn as the wait's timer fires.
    const scheduler: Scheduler = {
      now: manual.now,
      monotonic: manual.monotonic,
      setInterval: (callback, ms) => manual.setInterval(callback, ms),
      clearTimer: (timer) => manual.clearTimer(timer),
      setTimeout: (callback, ms) =>
        manual.setTimeout(() => {
          callback();
          controller.abort(new Error('left at the deadline'));
        }, ms),
    };
    const pending = rejection(dispatchCompletion([target('a', a.baseUrl, { scheduler })], context([], { signal: controller.signal, scheduler })));
    await eventually(() => manual.pending().join() === '2', 'the back-off of 2 ms');
    await manual.advance(2);
    const error = await pending;
    assert.equal(isClientAbort(error), true);
    assert.equal(((error as Error).cause as Error).message, 'left at the deadline');
    assert.equal(a.count, 1);
  });

  test('an abort while waiting for the upstream closes its socket; the breaker is not blamed', async () => {
    const a = await pool.start(hang);
    const controller = new AbortController();
    const breaker = createCircuitBreaker({ failureThreshold: 1 });
    const pending = dispatchCompletion([target('a', a.baseUrl, { breaker })], context([], { signal: controller.signal }));
    await a.arrived(1);
    controller.abort();
    assert.equal(isClientAbort(await rejection(pending)), true);
    await a.closed(1);
    assert.equal(breaker.state(), 'closed');
  });

  test('no targets is a programming error', async () => {
    await assert.rejects(dispatchCompletion([], context([])), { message: 'dispatch needs at least one upstream target.' });
  });
});

describe('dispatchCompletion with other providers’ errors', () => {
  function scripted(...outcomes: unknown[]): ChatProvider {
    let n = 0;
    return {
      kind: 'local',
      complete: async () => {
        const outcome = outcomes[n++];
        if (outcome instanceof Error) throw outcome;
        return normalizeCompletion(completionBody(String(outcome)));
      },
      open: () => {
        throw new Error('unused');
      },
    };
  }

  test('a plain 429 ApiError: its retry-after header is the hint', async () => {
    const scheduler = new ManualScheduler();
    const t = { ...target('other', 'http://127.0.0.1:9/v1'), provider: scripted(new ApiError('rate_limit_exceeded', 'slow down', { headers: { 'retry-after': '2' } }), 'ok') };
    const pending = dispatchCompletion([t], context([], { scheduler }));
    await eventually(() => scheduler.pending().join() === '2000', 'the wait of 2000 ms');
    await scheduler.advance(2000);
    assert.equal(content(await pending), 'ok');
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
});
