import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createBreakerRegistry, createCircuitBreaker, State, type CircuitBreaker } from '../../src/upstream/circuit-breaker.ts';

/** A clock the test moves by hand. */
function manualClock(start = 1_000_000): { now: () => number; advance(ms: number): void } {
  let time = start;
  return {
    now: () => time,
    advance(ms: number) {
      time += ms;
    },
  };
}

function failTimes(breaker: CircuitBreaker, times: number): void {
  for (let i = 0; i < times; i++) {
    assert.equal(breaker.canAttempt(), true, `attempt ${i}`);
    breaker.onFailure();
  }
}

describe('createCircuitBreaker', () => {
  test('State names', () => {
    assert.deepEqual(State, { Closed: 'closed', Open: 'open', HalfOpen: 'half_open' });
  });

  test('snapshot: when it opened, when it lets a probe through, the last counted failure and when', () => {
    const clock = manualClock();
    const breaker = createCircuitBreaker({ failureThreshold: 2, openMs: 1000 }, clock.now);
    assert.deepEqual(breaker.snapshot(), { state: 'closed', openedAt: null, probeAt: null, lastFailure: null });
    breaker.onFailure({ kind: 'http', detail: '503', address: 'llm.internal:443' });
    clock.advance(10);
    breaker.onFailure({ kind: 'refused', detail: 'ECONNREFUSED', address: 'llm.internal:443' });
    const refused = { kind: 'refused', detail: 'ECONNREFUSED', address: 'llm.internal:443', at: 1_000_010 };
    assert.deepEqual(breaker.snapshot(), { state: 'open', openedAt: 1_000_010, probeAt: 1_001_010, lastFailure: refused });
    clock.advance(1000);
    assert.deepEqual(breaker.snapshot(), { state: 'half_open', openedAt: 1_000_010, probeAt: null, lastFailure: refused });
    assert.equal(breaker.canAttempt(), true);
    breaker.onSuccess();
    // Closed again: the history stays, nothing is open.
    assert.deepEqual(breaker.snapshot(), { state: 'closed', openedAt: 1_000_010, probeAt: null, lastFailure: refused });
    // A failure reported without a cause keeps the last known one.
    breaker.onFailure();
    assert.deepEqual(breaker.snapshot().lastFailure, refused);
  });

  test('defaults: opens on the 5th consecutive failure, stays open 30 s', () => {
    const clock = manualClock();
    const breaker = createCircuitBreaker({}, clock.now);
    failTimes(breaker, 4);
    assert.equal(breaker.state(), 'closed');
    failTimes(breaker, 1);
    assert.equal(breaker.state(), 'open');
    assert.equal(breaker.canAttempt(), false);
    assert.equal(breaker.msUntilProbe(), 30_000);
    clock.advance(29_999);
    assert.equal(breaker.canAttempt(), false);
    assert.equal(breaker.msUntilProbe(), 1);
    clock.advance(1);
    assert.equal(breaker.state(), 'half_open');
    assert.equal(breaker.msUntilProbe(), 0);
  });

  test('a success resets the consecutive count', () => {
    const breaker = createCircuitBreaker({ failureThreshold: 3 }, manualClock().now);
    failTimes(breaker, 2);
    breaker.onSuccess();
    failTimes(breaker, 2);
    assert.equal(breaker.state(), 'closed');
    failTimes(breaker, 1);
    assert.equal(breaker.state(), 'open');
  });

  test('a release counts nothing in closed state', () => {
    const breaker = createCircuitBreaker({ failureThreshold: 2 }, manualClock().now);
    failTimes(breaker, 1);
    breaker.onRelease();
    failTimes(breaker, 1);
    assert.equal(breaker.state(), 'open');
  });

  test('half-open lets exactly one probe through until it reports; success closes', () => {
    const clock = manualClock();
    const breaker = createCircuitBreaker({ failureThreshold: 1, openMs: 100 }, clock.now);
    failTimes(breaker, 1);
    clock.advance(100);
    assert.equal(breaker.state(), 'half_open');
    // state() looked without taking the probe
    assert.equal(breaker.canAttempt(), true);
    assert.equal(breaker.canAttempt(), false);
    assert.equal(breaker.canAttempt(), false);
    assert.equal(breaker.state(), 'half_open');
    breaker.onSuccess();
    assert.equal(breaker.state(), 'closed');
    assert.equal(breaker.canAttempt(), true);
    assert.equal(breaker.canAttempt(), true);
  });

  test('a failed probe reopens for another openMs', () => {
    const clock = manualClock();
    const breaker = createCircuitBreaker({ failureThreshold: 2, openMs: 100 }, clock.now);
    failTimes(breaker, 2);
    clock.advance(150);
    assert.equal(breaker.canAttempt(), true);
    clock.advance(7);
    breaker.onFailure();
    assert.equal(breaker.state(), 'open');
    assert.equal(breaker.msUntilProbe(), 100);
    clock.advance(99);
    assert.equal(breaker.canAttempt(), false);
    clock.advance(1);
    assert.equal(breaker.canAttempt(), true);
  });

  test('after a reopen-and-close cycle, the threshold counts from zero again', () => {
    const clock = manualClock();
    const breaker = createCircuitBreaker({ failureThreshold: 2, openMs: 10 }, clock.now);
    failTimes(breaker, 2);
    clock.advance(10);
    assert.equal(breaker.canAttempt(), true);
    breaker.onSuccess();
    failTimes(breaker, 1);
    assert.equal(breaker.state(), 'closed');
  });

  test('a released probe frees the slot for the next caller', () => {
    const clock = manualClock();
    const breaker = createCircuitBreaker({ failureThreshold: 1, openMs: 10 }, clock.now);
    failTimes(breaker, 1);
    clock.advance(10);
    assert.equal(breaker.canAttempt(), true);
    assert.equal(breaker.canAttempt(), false);
    breaker.onRelease();
    assert.equal(breaker.state(), 'half_open');
    assert.equal(breaker.canAttempt(), true);
    assert.equal(breaker.canAttempt(), false);
  });

  test('late reports while open change nothing', () => {
    const clock = manualClock();
    const breaker = createCircuitBreaker({ failureThreshold: 1, openMs: 100 }, clock.now);
    failTimes(breaker, 1);
    clock.advance(40);
    breaker.onSuccess();
    breaker.onFailure();
    breaker.onRelease();
    assert.equal(breaker.state(), 'open');
    assert.equal(breaker.msUntilProbe(), 60);
  });

  test('a late failure while half-open reopens', () => {
    const clock = manualClock();
    const breaker = createCircuitBreaker({ failureThreshold: 1, openMs: 10 }, clock.now);
    failTimes(breaker, 1);
    clock.advance(10);
    breaker.onFailure();
    assert.equal(breaker.state(), 'open');
  });

  test('invalid options are refused', () => {
    for (const options of [{ failureThreshold: 0 }, { failureThreshold: 1.5 }, { openMs: -1 }, { openMs: Number.NaN }]) {
      assert.throws(() => createCircuitBreaker(options), RangeError, JSON.stringify(options));
    }
  });
});

describe('createBreakerRegistry', () => {
  test('one breaker per target id, shared by every alias that uses it', () => {
    const clock = manualClock();
    const registry = createBreakerRegistry({ failureThreshold: 1, openMs: 50 }, clock.now);
    const a = registry.get('local/llama-3.1-8b');
    assert.equal(registry.get('local/llama-3.1-8b'), a);
    const b = registry.get('openai/gpt-4o-mini');
    assert.notEqual(b, a);
    failTimes(a, 1);
    assert.equal(registry.get('local/llama-3.1-8b').state(), 'open');
    assert.equal(b.state(), 'closed');
  });

  test('invalid options fail at creation', () => {
    assert.throws(() => createBreakerRegistry({ openMs: 0 }), RangeError);
  });
});
