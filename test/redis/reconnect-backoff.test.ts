import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkReconnectPolicy, DEFAULT_RECONNECT_POLICY, reconnectDelayMs } from '../../src/redis/reconnect-backoff.ts';

const policy = { baseDelayMs: 50, maxDelayMs: 2000 };

test('the default policy is 50 ms doubling to a 2000 ms cap', () => {
  assert.deepEqual(DEFAULT_RECONNECT_POLICY, { baseDelayMs: 50, maxDelayMs: 2000 });
});

test('with no jitter the delay is half the ceiling, doubling to the cap', () => {
  const delays = [0, 1, 2, 3, 4, 5, 6, 7].map((attempt) => reconnectDelayMs(attempt, policy, () => 0));
  assert.deepEqual(delays, [25, 50, 100, 200, 400, 800, 1000, 1000]);
});

test('with the most jitter the delay reaches the ceiling', () => {
  const delays = [0, 1, 5, 6, 40].map((attempt) => reconnectDelayMs(attempt, policy, () => 0.999999));
  assert.deepEqual(delays, [50, 100, 1600, 2000, 2000]);
});

test('jitter spreads the delay over the upper half of the ceiling', () => {
  assert.equal(reconnectDelayMs(3, policy, () => 0.5), 300);
  assert.equal(reconnectDelayMs(3, policy, () => 0.25), 250);
});

test('huge and odd attempt counts stay at the cap, negative ones at the base', () => {
  assert.equal(reconnectDelayMs(1e9, policy, () => 0), 1000);
  assert.equal(reconnectDelayMs(Number.MAX_SAFE_INTEGER, policy, () => 0), 1000);
  assert.equal(reconnectDelayMs(-3, policy, () => 0), 25);
});

test('a policy that cannot work is refused', () => {
  assert.throws(() => checkReconnectPolicy({ baseDelayMs: 0, maxDelayMs: 10 }), RangeError);
  assert.throws(() => checkReconnectPolicy({ baseDelayMs: 100, maxDelayMs: 10 }), RangeError);
  assert.throws(() => checkReconnectPolicy({ baseDelayMs: Number.NaN, maxDelayMs: 10 }), RangeError);
  assert.deepEqual(checkReconnectPolicy({ baseDelayMs: 10, maxDelayMs: 10 }), { baseDelayMs: 10, maxDelayMs: 10 });
});
