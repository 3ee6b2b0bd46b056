import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLoginThrottle, type LoginThrottleOptions } from '../../src/admin/login-throttle.ts';
import { retryAfterSeconds } from '../../src/limits/rate-limit-headers.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';

const MINUTE = 60 * 1000;

function fixture(options: LoginThrottleOptions = {}) {
  const scheduler = new ManualScheduler();
  const throttle = createLoginThrottle({ scheduler, ...options });
  return {
    throttle,
    advance: (ms: number): Promise<void> => scheduler.advance(ms),
    failTimes(client: string, times: number) {
      for (let i = 0; i < times; i++) throttle.failure(client);
    },
  };
}

test('a client is allowed until its fifth failure, then refused for 15 minutes', async () => {
  const { throttle, advance, failTimes } = fixture();
  assert.deepEqual(throttle.check('10.0.0.1'), { allowed: true });
  failTimes('10.0.0.1', 4);
  assert.deepEqual(throttle.check('10.0.0.1'), { allowed: true });
  throttle.failure('10.0.0.1');
  assert.deepEqual(throttle.check('10.0.0.1'), { allowed: false, retryAfterMs: 15 * MINUTE, limit: 'client' });
  assert.deepEqual(throttle.check('10.0.0.2'), { allowed: true });
  await advance(10 * MINUTE);
  assert.deepEqual(throttle.check('10.0.0.1'), { allowed: false, retryAfterMs: 5 * MINUTE, limit: 'client' });
  await advance(5 * MINUTE - 1);
  assert.deepEqual(throttle.check('10.0.0.1'), { allowed: false, retryAfterMs: 1, limit: 'client' });
  await advance(1);
  assert.deepEqual(throttle.check('10.0.0.1'), { allowed: true });
});

test('after a lockout the client starts over with a full allowance', async () => {
  const { throttle, advance, failTimes } = fixture();
  failTimes('a', 5);
  await advance(15 * MINUTE);
  failTimes('a', 4);
  assert.deepEqual(throttle.check('a'), { allowed: true });
  throttle.failure('a');
  assert.deepEqual(throttle.check('a'), { allowed: false, retryAfterMs: 15 * MINUTE, limit: 'client' });
});

test('failures older than the window are forgotten', async () => {
  const { throttle, advance, failTimes } = fixture();
  failTimes('a', 4);
  await advance(15 * MINUTE);
  failTimes('a', 4);
  assert.deepEqual(throttle.check('a'), { allowed: true });
  throttle.failure('a');
  assert.equal(throttle.check('a').allowed, false);
});

test('the window counts from the first failure, not the last', async () => {
  const { throttle, advance, failTimes } = fixture();
  failTimes('a', 1);
  await advance(14 * MINUTE);
  failTimes('a', 3);
  await advance(MINUTE); // the first failure's window is over
  failTimes('a', 1);
  assert.deepEqual(throttle.check('a'), { allowed: true });
});

test('a success forgets the client failures', async () => {
  const { throttle, failTimes } = fixture();
  failTimes('a', 4);
  throttle.success('a');
  failTimes('a', 4);
  assert.deepEqual(throttle.check('a'), { allowed: true });
  assert.equal(throttle.trackedClients, 1);
  throttle.success('a');
  assert.equal(throttle.trackedClients, 0);
});

test('failures while locked out do not extend the lockout', async () => {
  const { throttle, advance, failTimes } = fixture();
  failTimes('a', 5);
  await advance(MINUTE);
  failTimes('a', 10);
  assert.deepEqual(throttle.check('a'), { allowed: false, retryAfterMs: 14 * MINUTE, limit: 'client' });
});

test('the global ceiling refuses every client until the window ends', async () => {
  const { throttle, advance, failTimes } = fixture({ maxGlobalFailures: 10 });
  for (let i = 0; i < 9; i++) failTimes(`10.0.0.${i}`, 1);
  assert.deepEqual(throttle.check('192.168.1.1'), { allowed: true });
  await advance(6 * MINUTE);
  failTimes('10.0.0.99', 1);
  assert.deepEqual(throttle.check('192.168.1.1'), { allowed: false, retryAfterMs: 9 * MINUTE, limit: 'global' });
  assert.deepEqual(throttle.check('10.0.0.0'), { allowed: false, retryAfterMs: 9 * MINUTE, limit: 'global' });
  await advance(9 * MINUTE);
  assert.deepEqual(throttle.check('192.168.1.1'), { allowed: true });
  // A new window: the count starts over.
  for (let i = 0; i < 9; i++) failTimes(`10.0.1.${i}`, 1);
  assert.deepEqual(throttle.check('192.168.1.1'), { allowed: true });
});

test('without a global ceiling (maxGlobalFailures: null) failures lock their own client, never everyone', async () => {
  const { throttle } = fixture({ maxGlobalFailures: null });
  for (let i = 0; i < 50; i++) throttle.failure(`10.0.0.${i}`);
  assert.deepEqual(throttle.check('192.168.1.1'), { allowed: true });
  for (let i = 0; i < 5; i++) throttle.failure('10.0.1.1');
  assert.deepEqual(throttle.check('10.0.1.1'), { allowed: false, retryAfterMs: 15 * MINUTE, limit: 'client' });
  assert.deepEqual(throttle.check('192.168.1.1'), { allowed: true });
  assert.equal(throttle.settings.maxGlobalFailures, null);
});

test('a refused client waits for the later of its own and the global lockout', async () => {
  const { throttle, advance, failTimes } = fixture({ maxGlobalFailures: 6, lockoutMs: 20 * MINUTE });
  failTimes('a', 5);
  await advance(MINUTE);
  failTimes('b', 1);
  assert.deepEqual(throttle.check('a'), { allowed: false, retryAfterMs: 19 * MINUTE, limit: 'client' });
  assert.deepEqual(throttle.check('b'), { allowed: false, retryAfterMs: 14 * MINUTE, limit: 'global' });
});

test('memory is bounded: stale records go first, then the least recently failed', async () => {
  const { throttle, advance, failTimes } = fixture({ maxClients: 3 });
  failTimes('old', 1);
  await advance(15 * MINUTE);
  failTimes('locked', 5);
  failTimes('b', 1);
  failTimes('c', 1); // full: 'old' (window over) is dropped
  assert.equal(throttle.trackedClients, 3);
  failTimes('locked', 1); // no effect on the lockout, but it moves 'locked' to the most recent
  failTimes('b', 1);
  failTimes('d', 1); // full, nothing stale: the least recently failed, 'c', goes
  assert.equal(throttle.trackedClients, 3);
  assert.equal(throttle.check('locked').allowed, false);
  failTimes('c', 4); // 'c' starts over, so four more failures do not lock it
  assert.deepEqual(throttle.check('c'), { allowed: true });
});

test('client keys are cut at 256 characters', async () => {
  const { throttle, failTimes } = fixture();
  failTimes('x'.repeat(256) + 'a', 5);
  assert.equal(throttle.check('x'.repeat(256) + 'b').allowed, false);
});

test('options must be positive integers', async () => {
  assert.throws(() => createLoginThrottle({ maxFailures: 0 }), { name: 'RangeError', message: 'maxFailures must be a positive integer, got 0' });
  assert.throws(() => createLoginThrottle({ windowMs: Number.NaN }), RangeError);
  assert.throws(() => createLoginThrottle({ maxGlobalFailures: 2.5 }), RangeError);
});

test('Retry-After (the one the rate limits use) is the wait in whole seconds, rounded up, at least 1', () => {
  assert.deepEqual([1, 999, 1000, 1001, 900_000].map(retryAfterSeconds), ['1', '1', '1', '2', '900']);
});

test('a client is its address group: an IPv6 address by its /56, an IPv4-mapped one as its IPv4 address, an IPv4 address alone', () => {
  const { throttle, failTimes } = fixture();
  failTimes('2001:db8:1:200::1', 4);
  throttle.failure('2001:db8:1:2ff:ffff:ffff:ffff:ffff');
  const locked = { allowed: false, retryAfterMs: 15 * MINUTE, limit: 'client' };
  assert.deepEqual(throttle.check('2001:db8:1:2ab::5'), locked);
  assert.deepEqual(throttle.check('2001:db8:1:300::1'), { allowed: true });
  assert.deepEqual(throttle.check('2001:db8:1:1ff::1'), { allowed: true });

  failTimes('10.0.0.1', 3);
  failTimes('::ffff:10.0.0.1', 2);
  assert.deepEqual(throttle.check('10.0.0.1'), locked);
  assert.deepEqual(throttle.check('::ffff:a00:1'), locked);
  assert.deepEqual(throttle.check('10.0.0.2'), { allowed: true });
  assert.equal(throttle.trackedClients, 2);
  throttle.success('2001:db8:1:2cd::1');
  assert.deepEqual(throttle.check('2001:db8:1:200::1'), { allowed: true });
});
