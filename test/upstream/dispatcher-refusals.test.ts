// dispatchCompletion / dispatchStream with targets that cannot take the
// request (UpstreamTarget.refusal): skipped without a call and without touching
// their breakers, reported as skipped_unsupported with the parameter, and never
// the error the client gets while another target was really tried.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { ApiError, InvalidRequestError } from '../../src/errors/api-error.ts';
import { createCircuitBreaker } from '../../src/upstream/circuit-breaker.ts';
import { describeAttempt, dispatchCompletion, dispatchStream, wasAttempted, type AttemptRecord } from '../../src/upstream/dispatcher.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { answer, context, errorStatus, rejection, target, upstreamPool } from './dispatch-fixtures.ts';

const pool = upstreamPool();
after(() => pool.closeAll());

const jsonMode = (): InvalidRequestError =>
  new InvalidRequestError("Invalid value for 'response_format.type': not here.", 'response_format.type', 'invalid_value');

describe('targets that cannot take the request', () => {
  test('skipped in order, before the breaker, with no call; the next target answers', async () => {
    const refusing = await pool.start(answer('never'));
    const taking = await pool.start(answer('taken'));
    const scheduler = new ManualScheduler();
    // Half-open: one probe allowed. A skip must not spend it.
    const breaker = createCircuitBreaker({ failureThreshold: 1, openMs: 1000 }, scheduler.now);
    breaker.onFailure();
    await scheduler.advance(1000);
    const targets = [
      { ...target('refusing', refusing.baseUrl, { breaker }), refusal: jsonMode() },
      target('taking', taking.baseUrl, { priority: 1 }),
    ];
    const records: AttemptRecord[] = [];
    const result = await dispatchCompletion(targets, context(records));
    assert.equal(result.target.id, 'taking');
    assert.equal(refusing.count, 0);
    assert.deepEqual(records, [
      { targetId: 'refusing', attempt: 1, outcome: 'skipped_unsupported', code: 'invalid_value', param: 'response_format.type' },
      { targetId: 'taking', attempt: 1, outcome: 'ok' },
    ]);
    assert.equal(breaker.canAttempt(), true, 'the half-open probe is still there');
    assert.deepEqual(records.map(describeAttempt), ['refusing:skipped_unsupported:response_format.type', 'taking:ok']);
    assert.deepEqual(records.map((r) => wasAttempted(r.outcome)), [false, true]);
  });

  test('the target that was tried failed: its failure is what the caller gets, not the refusal', async () => {
    const down = await pool.start(errorStatus(500));
    const refusing = await pool.start(answer('never'));
    const targets = [
      target('down', down.baseUrl, { retry: { maxAttempts: 1 } }),
      { ...target('refusing', refusing.baseUrl, { priority: 1 }), refusal: jsonMode() },
    ];
    const records: AttemptRecord[] = [];
    const error = await rejection(dispatchCompletion(targets, context(records)));
    assert.ok(error instanceof ApiError);
    assert.deepEqual({ status: error.status, code: error.code }, { status: 502, code: 'upstream_error' });
    assert.equal(refusing.count, 0);
    assert.deepEqual(records.map(describeAttempt), ['down:fallback:502', 'refusing:skipped_unsupported:response_format.type']);
  });

  test('a stream skips the same way', async () => {
    const down = await pool.start(errorStatus(503));
    const refusing = await pool.start(answer('never'));
    const targets = [
      target('down', down.baseUrl, { retry: { maxAttempts: 1 } }),
      { ...target('refusing', refusing.baseUrl, { priority: 1 }), refusal: jsonMode() },
    ];
    const error = await rejection(dispatchStream(targets, context([])));
    assert.equal((error as ApiError).status, 502);
    assert.equal(refusing.count, 0);
  });

  test('the only takers are paused: 503 with the Retry-After of their probe, not of the refusing target', async () => {
    const a = await pool.start(answer('a'));
    const b = await pool.start(answer('b'));
    const scheduler = new ManualScheduler();
    const open = createCircuitBreaker({ failureThreshold: 1, openMs: 30_000 }, scheduler.now);
    open.onFailure();
    await scheduler.advance(5_000);
    // The refusing target's breaker is closed: were it counted, Retry-After would say 1 s.
    const targets = [target('paused', a.baseUrl, { breaker: open }), { ...target('refusing', b.baseUrl, { priority: 1 }), refusal: jsonMode() }];
    const records: AttemptRecord[] = [];
    const error = await rejection(dispatchCompletion(targets, context(records)));
    assert.ok(error instanceof ApiError);
    assert.deepEqual({ status: error.status, code: error.code, headers: error.headers }, { status: 503, code: 'upstream_unavailable', headers: { 'retry-after': '25' } });
    assert.equal(a.count + b.count, 0);
    assert.deepEqual(records.map((r) => r.outcome), ['skipped_open', 'skipped_unsupported']);
  });

  test('every target refusing (a caller that did not plan first): the refusal, with no call', async () => {
    const a = await pool.start(answer('a'));
    const refusal = jsonMode();
    const error = await rejection(dispatchCompletion([{ ...target('a', a.baseUrl), refusal }], context([])));
    assert.equal(error, refusal);
    assert.equal(a.count, 0);
  });
});
