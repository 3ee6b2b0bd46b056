// createBurst: one start per burst, the count and span at its end, a new
// burst after the quiet time, close() reporting a burst still on.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createBurst, type BurstSummary } from '../../src/log/burst.ts';

function recorder(quietMs: number): { events: Array<string | BurstSummary>; burst: ReturnType<typeof createBurst>; clock: { now: number } } {
  const events: Array<string | BurstSummary> = [];
  const clock = { now: 1000 };
  const burst = createBurst({ quietMs, onStart: () => events.push('start'), onEnd: (summary) => events.push(summary), now: () => clock.now });
  return { events, burst, clock };
}

const settle = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('many hits in a burst: one start, then one end with the count and the span from first to last', async () => {
  const { events, burst, clock } = recorder(40);
  burst.hit();
  clock.now += 5;
  burst.hit();
  clock.now += 7;
  burst.hit();
  assert.deepEqual(events, ['start']);
  assert.equal(burst.active, true);
  // The timer sees the clock: quiet for 40 ms from the last hit.
  clock.now += 40;
  await settle(100);
  assert.deepEqual(events, ['start', { count: 3, durationMs: 12 }]);
  assert.equal(burst.active, false);
});

test('a hit within the quiet time extends the burst; after it, the next hit starts a new one', async () => {
  const { events, burst, clock } = recorder(30);
  burst.hit();
  await settle(10);
  clock.now += 20;
  burst.hit();
  await settle(40);
  // The first timer fired 30 ms after the start but only 20 ms after the last hit (on this clock): still on.
  assert.deepEqual(events, ['start']);
  clock.now += 30;
  await settle(60);
  assert.deepEqual(events, ['start', { count: 2, durationMs: 20 }]);
  burst.hit();
  assert.deepEqual(events, ['start', { count: 2, durationMs: 20 }, 'start']);
  burst.close();
  assert.deepEqual(events, ['start', { count: 2, durationMs: 20 }, 'start', { count: 1, durationMs: 0 }]);
});

test('close() with no burst on reports nothing; a closed burst’s timer never fires', async () => {
  const { events, burst, clock } = recorder(10);
  burst.close();
  assert.deepEqual(events, []);
  burst.hit();
  burst.close();
  clock.now += 100;
  await settle(40);
  assert.deepEqual(events, ['start', { count: 1, durationMs: 0 }]);
});
