// The manual scheduler the deadline tests rely on: exact deadlines, order,
// intervals, refresh and clear, as Node's timers behave.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualScheduler } from './manual-scheduler.ts';

test('a timeout fires at its deadline, not a millisecond before', async () => {
  const clock = new ManualScheduler({ startMs: 1_000_000 });
  const fired: number[] = [];
  clock.setTimeout(() => fired.push(clock.now()), 2000);
  await clock.advance(1999);
  assert.deepEqual(fired, []);
  assert.deepEqual(clock.pending(), [1]);
  await clock.advance(1);
  assert.deepEqual(fired, [1_002_000]);
  assert.deepEqual(clock.pending(), []);
  assert.equal(clock.monotonic(), 2000);
  assert.equal(clock.elapsedMs, 2000);
});

test('timers fire in deadline order, those due together in the order they were set, each at its own time', async () => {
  const clock = new ManualScheduler({ startMs: 0 });
  const fired: string[] = [];
  clock.setTimeout(() => fired.push(`c@${clock.now()}`), 30);
  clock.setTimeout(() => fired.push(`a@${clock.now()}`), 10);
  clock.setTimeout(() => fired.push(`b@${clock.now()}`), 10);
  await clock.advance(100);
  assert.deepEqual(fired, ['a@10', 'b@10', 'c@30']);
  assert.equal(clock.now(), 100);
});

test('a timer set by a firing timer fires within the same advance when it falls due', async () => {
  const clock = new ManualScheduler({ startMs: 0 });
  const fired: number[] = [];
  clock.setTimeout(() => {
    fired.push(clock.now());
    clock.setTimeout(() => fired.push(clock.now()), 5);
  }, 5);
  await clock.advance(10);
  assert.deepEqual(fired, [5, 10]);
});

test('an interval fires every period until cleared; clearing an ended or unknown timer is a no-op', async () => {
  const clock = new ManualScheduler({ startMs: 0 });
  const fired: number[] = [];
  const interval = clock.setInterval(() => fired.push(clock.now()), 100);
  await clock.advance(350);
  assert.deepEqual(fired, [100, 200, 300]);
  clock.clearTimer(interval);
  clock.clearTimer(interval);
  clock.clearTimer(undefined);
  await clock.advance(1000);
  assert.deepEqual(fired, [100, 200, 300]);
});

test('refresh() restarts the delay from now, fired or not', async () => {
  const clock = new ManualScheduler({ startMs: 0 });
  const fired: number[] = [];
  const timer = clock.setTimeout(() => fired.push(clock.now()), 100);
  await clock.advance(60);
  timer.refresh();
  await clock.advance(99);
  assert.deepEqual(fired, []);
  await clock.advance(1);
  assert.deepEqual(fired, [160]);
  timer.refresh();
  await clock.advance(100);
  assert.deepEqual(fired, [160, 260]);
  assert.equal(timer.unref(), timer);
});

test("delays Node fires after 1 ms (below 1, NaN, above 2^31 - 1) fire after 1 ms here too", async () => {
  const clock = new ManualScheduler({ startMs: 0 });
  const fired: number[] = [];
  for (const ms of [0, -5, Number.NaN, 2 ** 31]) clock.setTimeout(() => fired.push(clock.now()), ms);
  await clock.advance(1);
  assert.deepEqual(fired, [1, 1, 1, 1]);
});

test('next() moves to the soonest deadline; nothing pending is undefined; advance refuses a negative or infinite step', async () => {
  const clock = new ManualScheduler({ startMs: 0 });
  assert.equal(await clock.next(), undefined);
  clock.setTimeout(() => undefined, 250);
  assert.equal(await clock.next(), 250);
  assert.equal(clock.now(), 250);
  await assert.rejects(clock.advance(-1), RangeError);
  await assert.rejects(clock.advance(Number.POSITIVE_INFINITY), RangeError);
});

test('after each timer the event loop takes a turn: the promise jobs it started have run before the next fires', async () => {
  const clock = new ManualScheduler({ startMs: 0 });
  const seen: string[] = [];
  clock.setTimeout(() => void Promise.resolve().then(() => Promise.resolve()).then(() => seen.push('jobs of the first')), 10);
  clock.setTimeout(() => seen.push('second'), 20);
  await clock.advance(20);
  assert.deepEqual(seen, ['jobs of the first', 'second']);
});
