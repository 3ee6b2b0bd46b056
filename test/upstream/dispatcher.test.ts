// dispatchCompletion against fake upstreams: retries on one target with their
// back-off, fallbacks to the next, and the order of targets. The waits and the
// timeouts run on a ManualScheduler where a test is about them, so each
// deadline is asserted exactly; the breakers and aborts are in
// ./dispatcher-breakers.test.ts.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { ApiError } from '../../src/errors/api-error.ts';
import { createCircuitBreaker } from '../../src/upstream/circuit-breaker.ts';
import { dispatchCompletion, type AttemptRecord } from '../../src/upstream/dispatcher.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import {
  addressOf,
  answer,
  backOff,
  bodiesAndIds,
  context,
  errorStatus,
  hang,
  rejection,
  reset,
  sequence,
  target,
  upstreamPool,
} from './dispatch-fixtures.ts';
import { scriptedRandom, seededRandom } from './seeded-random.ts';

const pool = upstreamPool();
after(() => pool.closeAll());

const content = (result: { completion: { choices: Array<{ message: { content: string | null } }> } }): string | null =>
  result.completion.choices[0]?.message.content ?? null;

describe('dispatchCompletion: retries on one target', () => {
  test('fail then succeed: a 500 is retried after the jittered back-off, to the millisecond', async () => {
    const a = await pool.start(sequence(errorStatus(500), answer('second time lucky')));
    const scheduler = new ManualScheduler();
    const records: AttemptRecord[] = [];
    const pending = dispatchCompletion([target('a', a.baseUrl, { scheduler })], context(records, { scheduler }));
    // random 0.5 of the 5 ms first-retry ceiling
    await backOff(scheduler, 2, a);
    const result = await pending;
    assert.equal(content(result), 'second time lucky');
    assert.equal(result.target.id, 'a');
    assert.equal(a.count, 2);
    assert.deepEqual(records, [
      { targetId: 'a', attempt: 1, outcome: 'retry', status: 502, code: 'upstream_error', delayMs: 2, cause: { kind: 'http', detail: '500', address: addressOf(a) } },
      { targetId: 'a', attempt: 2, outcome: 'ok' },
    ]);
  });

  test('every attempt sends the target request with the x-request-id (the back-off on the real clock)', async () => {
    const a = await pool.start(sequence(errorStatus(503), answer('ok')));
    const b = await pool.start(answer('unused'));
    const targets = [target('a', a.baseUrl), target('b', b.baseUrl, { priority: 1 })];
    await dispatchCompletion(targets, context([]));
    const expectedBody = JSON.stringify(targets[0]?.request);
    assert.deepEqual(bodiesAndIds(a), [
      { body: expectedBody, requestId: 'req_dispatch' },
      { body: expectedBody, requestId: 'req_dispatch' },
    ]);
    assert.equal(JSON.parse(expectedBody).model, 'a-model');
    assert.equal(b.count, 0);
  });

  test('a connection reset is retried', async () => {
    const a = await pool.start(sequence(reset, answer('after reset')));
    const records: AttemptRecord[] = [];
    const result = await dispatchCompletion([target('a', a.baseUrl)], context(records));
    assert.equal(content(result), 'after reset');
    assert.deepEqual(records.map((r) => [r.outcome, r.code]), [
      ['retry', 'upstream_unreachable'],
      ['ok', undefined],
    ]);
  });

  test('a back-off of 0 (the jitter drew 0) retries at once, without a timer', async () => {
    const a = await pool.start(sequence(errorStatus(500), answer('at once')));
    const scheduler = new ManualScheduler();
    const records: AttemptRecord[] = [];
    const result = await dispatchCompletion([target('a', a.baseUrl, { scheduler })], context(records, { scheduler, random: () => 0 }));
    assert.equal(content(result), 'at once');
    assert.equal(records[0]?.delayMs, 0);
    assert.equal(scheduler.elapsedMs, 0);
  });

  test('429 with Retry-After: 1 waits exactly that second, not the back-off', async () => {
    const a = await pool.start(sequence(errorStatus(429, { 'retry-after': '1' }), answer('patience')));
    const scheduler = new ManualScheduler();
    const records: AttemptRecord[] = [];
    const pending = dispatchCompletion([target('a', a.baseUrl, { scheduler })], context(records, { scheduler }));
    await backOff(scheduler, 1000, a);
    assert.equal(content(await pending), 'patience');
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

  test('429 with a Retry-After date counts from the scheduler\'s clock', async () => {
    const scheduler = new ManualScheduler({ startMs: Date.UTC(2026, 0, 1, 12, 0, 0) });
    const a = await pool.start(sequence(errorStatus(429, { 'retry-after': 'Thu, 01 Jan 2026 12:00:01 GMT' }), answer('on the date')));
    const pending = dispatchCompletion([target('a', a.baseUrl, { scheduler })], context([], { scheduler }));
    await backOff(scheduler, 1000, a);
    assert.equal(content(await pending), 'on the date');
  });

  test('429 with retry-after-ms is honoured to the millisecond', async () => {
    const a = await pool.start(sequence(errorStatus(429, { 'retry-after': '1', 'retry-after-ms': '120' }), answer('ok')));
    const scheduler = new ManualScheduler();
    const pending = dispatchCompletion([target('a', a.baseUrl, { scheduler })], context([], { scheduler }));
    await backOff(scheduler, 120, a);
    assert.equal(content(await pending), 'ok');
  });

  test('429 without Retry-After follows the back-off', async () => {
    const a = await pool.start(sequence(errorStatus(429), errorStatus(429), answer('ok')));
    const scheduler = new ManualScheduler();
    const pending = dispatchCompletion(
      [target('a', a.baseUrl, { scheduler, retry: { baseDelayMs: 100, maxDelayMs: 1000 } })],
      context([], { scheduler, random: scriptedRandom([0.5, 0.25]) }),
    );
    // 0.5 of 100, then 0.25 of 200
    await backOff(scheduler, 50, a);
    await backOff(scheduler, 50, a);
    assert.equal(content(await pending), 'ok');
    assert.equal(scheduler.elapsedMs, 100);
  });

  test('retries stop at maxAttempts; the last failure reaches the client', async () => {
    const a = await pool.start(errorStatus(500));
    const records: AttemptRecord[] = [];
    const error = await rejection(dispatchCompletion([target('a', a.baseUrl)], context(records)));
    assert.equal(a.count, 3);
    assert.ok(error instanceof ApiError);
    assert.deepEqual(error.toBody(), {
      error: { message: 'The upstream provider failed (HTTP 500): failure 500', type: 'upstream_error', param: null, code: 'upstream_error' },
    });
    assert.deepEqual(records.map((r) => r.outcome), ['retry', 'retry', 'fallback']);
  });

  test('maxAttempts 1 means no retry', async () => {
    const a = await pool.start(errorStatus(502));
    await rejection(dispatchCompletion([target('a', a.baseUrl, { retry: { maxAttempts: 1 } })], context([])));
    assert.equal(a.count, 1);
  });
});

describe('dispatchCompletion: fallbacks', () => {
  test('429 with a Retry-After beyond maxRetryAfterMs moves to the next target at once', async () => {
    const a = await pool.start(errorStatus(429, { 'retry-after': '3600' }));
    const b = await pool.start(answer('from b'));
    const scheduler = new ManualScheduler();
    const records: AttemptRecord[] = [];
    const result = await dispatchCompletion([target('a', a.baseUrl, { scheduler }), target('b', b.baseUrl, { scheduler, priority: 1 })], context(records, { scheduler }));
    // Answered while the scheduler stood still: no wait at all.
    assert.equal(scheduler.elapsedMs, 0);
    assert.equal(content(result), 'from b');
    assert.equal(result.target.id, 'b');
    assert.equal(a.count, 1);
    assert.deepEqual(records, [
      { targetId: 'a', attempt: 1, outcome: 'fallback', status: 429, code: 'rate_limit_exceeded', cause: { kind: 'http', detail: '429', address: addressOf(a) } },
      { targetId: 'b', attempt: 1, outcome: 'ok' },
    ]);
  });

  test('a long Retry-After on the only target is passed on as 429 with that Retry-After', async () => {
    const a = await pool.start(errorStatus(429, { 'retry-after': '3600' }));
    const error = await rejection(dispatchCompletion([target('a', a.baseUrl)], context([])));
    assert.ok(error instanceof ApiError);
    assert.equal(error.status, 429);
    assert.deepEqual(error.headers, { 'retry-after': '3600' });
    assert.equal(a.count, 1);
  });

  test('a hang before the first byte times out at firstByteTimeoutMs and falls back without a retry; the hung socket is closed', async () => {
    const a = await pool.start(hang);
    const b = await pool.start(answer('from b'));
    const scheduler = new ManualScheduler();
    const records: AttemptRecord[] = [];
    const pending = dispatchCompletion(
      [target('a', a.baseUrl, { scheduler, provider: { firstByteTimeoutMs: 150 } }), target('b', b.baseUrl, { scheduler, priority: 1 })],
      context(records, { scheduler }),
    );
    await a.arrived(1);
    await scheduler.advance(149);
    assert.deepEqual(records, []);
    await scheduler.advance(1);
    assert.equal(content(await pending), 'from b');
    assert.equal(a.count, 1);
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
    const a = await pool.start(errorStatus(401));
    const b = await pool.start(answer('from b'));
    const result = await dispatchCompletion([target('a', a.baseUrl), target('b', b.baseUrl, { priority: 1 })], context([]));
    assert.equal(content(result), 'from b');
    assert.equal(a.count, 1);
  });

  test('a 400 is the client’s: thrown at once, no retry, no fallback, not counted by the breaker', async () => {
    const a = await pool.start(errorStatus(400));
    const b = await pool.start(answer('never'));
    const breaker = createCircuitBreaker({ failureThreshold: 1 });
    const records: AttemptRecord[] = [];
    const error = await rejection(
      dispatchCompletion([target('a', a.baseUrl, { breaker }), target('b', b.baseUrl, { priority: 1 })], context(records)),
    );
    assert.ok(error instanceof ApiError);
    assert.deepEqual(error.toBody(), { error: { message: 'failure 400', type: 'invalid_request_error', param: null, code: null } });
    assert.equal(a.count, 1);
    assert.equal(b.count, 0);
    assert.equal(breaker.state(), 'closed');
    assert.deepEqual(records, [
      { targetId: 'a', attempt: 1, outcome: 'fatal', status: 400, code: 'upstream_rejected_request', cause: { kind: 'http', detail: '400', address: addressOf(a) } },
    ]);
  });

  test('everything failing: the last target’s failure, in the client’s terms', async () => {
    const a = await pool.start(errorStatus(500));
    const b = await pool.start(hang);
    const scheduler = new ManualScheduler();
    const pending = rejection(
      dispatchCompletion(
        [
          target('a', a.baseUrl, { scheduler, retry: { maxAttempts: 2 } }),
          target('b', b.baseUrl, { scheduler, priority: 1, provider: { firstByteTimeoutMs: 100 } }),
        ],
        context([], { scheduler }),
      ),
    );
    await backOff(scheduler, 2, a);
    await b.arrived(1);
    await scheduler.advance(100);
    const error = await pending;
    assert.ok(error instanceof ApiError);
    assert.deepEqual(error.toBody(), {
      error: { message: 'The upstream provider did not deliver response headers within 100 ms.', type: 'server_error', param: null, code: 'upstream_timeout' },
    });
    assert.equal(error.status, 504);
    assert.equal(a.count, 2);
    assert.equal(b.count, 1);
  });
});

describe('dispatchCompletion: order', () => {
  test('priorities: the lower priority is always tried first', async () => {
    const primary = await pool.start(answer('primary'));
    const backup = await pool.start(answer('backup'));
    const targets = [target('backup', backup.baseUrl, { priority: 5, weight: 100 }), target('primary', primary.baseUrl, { priority: 1, weight: 1 })];
    const random = seededRandom(1);
    for (let i = 0; i < 10; i++) assert.equal(content(await dispatchCompletion(targets, context([], { random }))), 'primary');
    assert.equal(backup.count, 0);
  });

  test('weights: 3:1 among equals over 80 seeded dispatches', async () => {
    const heavy = await pool.start(answer('heavy'));
    const light = await pool.start(answer('light'));
    const targets = [target('heavy', heavy.baseUrl, { weight: 3 }), target('light', light.baseUrl, { weight: 1 })];
    const random = seededRandom(20240611);
    for (let i = 0; i < 80; i++) await dispatchCompletion(targets, context([], { random }));
    assert.equal(heavy.count + light.count, 80);
    assert.ok(heavy.count >= 50 && heavy.count <= 70, `${heavy.count}:${light.count}`);
  });
});
