// The write-stall watch (src/http/write-stall.ts) over stand-in responses whose
// socket counters the test moves by hand, on a manual scheduler: only a
// response with bytes waiting and no progress is reported, once, at the first
// sweep timeoutMs after the sweep that last saw it move; a slow reader and an
// idle one are not. (The real clock and real sockets: slow-clients.system.test.ts.)
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { test } from 'node:test';
import { createWriteStallWatch } from '../../src/http/write-stall.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';

interface FakeSocket {
  destroyed: boolean;
  bytesWritten: number;
  writableLength: number;
  _handle: { writeQueueSize: number };
}

function fakeResponse(waiting: number): { res: ServerResponse; socket: FakeSocket; setWaiting(n: number): void } {
  const socket: FakeSocket = { destroyed: false, bytesWritten: waiting, writableLength: waiting, _handle: { writeQueueSize: waiting } };
  const res = { socket, writableLength: waiting };
  return {
    res: res as unknown as ServerResponse,
    socket,
    setWaiting(n) {
      res.writableLength = n;
      socket.writableLength = n;
    },
  };
}

/** A watch on a manual scheduler, and the moments (ms since the start) its stalls were reported. */
function manualWatch(timeoutMs: number): { watch: ReturnType<typeof createWriteStallWatch>; scheduler: ManualScheduler; stalledAt: number[]; onStall: () => void } {
  const scheduler = new ManualScheduler();
  const stalledAt: number[] = [];
  return { watch: createWriteStallWatch(timeoutMs, scheduler), scheduler, stalledAt, onStall: () => stalledAt.push(scheduler.elapsedMs) };
}

test('bytes waiting and none taken: reported once, at the first sweep timeoutMs after the sweep that first saw them wait', async () => {
  const { watch, scheduler, stalledAt, onStall } = manualWatch(400);
  const { res } = fakeResponse(65536);
  watch.watch(res, onStall);
  // A quarter of the limit, at least 100 ms: the first sweep (100) sees the bytes, the stall is due at 100 + 400.
  assert.deepEqual(scheduler.pending(), [100]);
  await scheduler.advance(499);
  assert.deepEqual(stalledAt, []);
  assert.equal(watch.size, 1);
  await scheduler.advance(1);
  assert.deepEqual(stalledAt, [500]);
  assert.equal(watch.size, 0);
  // Once only; the next sweep finds nothing watched and stops the timer.
  await scheduler.advance(10_000);
  assert.deepEqual(stalledAt, [500]);
  assert.deepEqual(scheduler.pending(), []);
});

test('a client that takes a few bytes at a time is never reported; when it stops, the limit runs from the sweep that last saw progress', async () => {
  const { watch, scheduler, stalledAt, onStall } = manualWatch(400);
  const { res, socket } = fakeResponse(65536);
  watch.watch(res, onStall);
  // The write in flight shrinks by 10 bytes every 50 ms: the kernel takes them.
  for (let i = 0; i < 24; i++) {
    await scheduler.advance(50);
    socket._handle.writeQueueSize -= 10;
  }
  // Then writes complete (what was queued is handed over) and new bytes wait.
  for (let i = 0; i < 8; i++) {
    await scheduler.advance(50);
    socket.bytesWritten += 1000;
  }
  assert.equal(scheduler.elapsedMs, 1600);
  assert.deepEqual(stalledAt, []);
  // The last progress (at 1600) is seen by the sweep at 1700: stalled at 2100, not before.
  await scheduler.advance(499);
  assert.deepEqual(stalledAt, []);
  await scheduler.advance(1);
  assert.deepEqual(stalledAt, [2100]);
});

test('nothing waiting (a slow upstream): never reported, however long', async () => {
  const { watch, scheduler, stalledAt, onStall } = manualWatch(200);
  const { res, socket } = fakeResponse(0);
  socket._handle.writeQueueSize = 0;
  watch.watch(res, onStall);
  await scheduler.advance(60_000);
  assert.deepEqual(stalledAt, []);
  assert.equal(watch.size, 1);
  watch.unwatch(res);
  await scheduler.advance(100);
  assert.deepEqual(scheduler.pending(), []);
});

test('the clock starts when bytes begin to wait, and an unwatched response is never reported', async () => {
  const { watch, scheduler, stalledAt, onStall } = manualWatch(300);
  const { res, socket, setWaiting } = fakeResponse(0);
  socket._handle.writeQueueSize = 0;
  watch.watch(res, onStall);
  await scheduler.advance(600);
  setWaiting(100);
  // The sweep at 700 sees them wait: due at 1000.
  await scheduler.advance(399);
  assert.deepEqual(stalledAt, []);
  await scheduler.advance(1);
  assert.deepEqual(stalledAt, [1000]);

  const other = fakeResponse(100);
  watch.watch(other.res, onStall);
  watch.unwatch(other.res);
  await scheduler.advance(60_000);
  assert.deepEqual(stalledAt, [1000]);
});

test('a new limit (a reload) applies to the responses already watched, with its own sweep interval', async () => {
  const { watch, scheduler, stalledAt, onStall } = manualWatch(60_000);
  const { res } = fakeResponse(100);
  watch.watch(res, onStall);
  // At most one sweep a second, however long the limit.
  assert.deepEqual(scheduler.pending(), [1000]);
  await scheduler.advance(300);
  watch.setTimeout(300);
  assert.deepEqual(scheduler.pending(), [100]);
  // Sweeps from 300 every 100: the one at 400 sees the bytes wait, due at 700.
  await scheduler.advance(399);
  assert.deepEqual(stalledAt, []);
  await scheduler.advance(1);
  assert.deepEqual(stalledAt, [700]);
  // The same limit again changes nothing; with nothing watched the sweep stops by itself.
  watch.setTimeout(300);
  assert.equal(watch.size, 0);
  await scheduler.advance(100);
  assert.deepEqual(scheduler.pending(), []);
});

test('a destroyed socket is skipped, not reported', async () => {
  const { watch, scheduler, stalledAt, onStall } = manualWatch(400);
  const { res, socket } = fakeResponse(65536);
  watch.watch(res, onStall);
  socket.destroyed = true;
  await scheduler.advance(10_000);
  assert.deepEqual(stalledAt, []);
});
