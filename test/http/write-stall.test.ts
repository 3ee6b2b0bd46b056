// The write-stall watch (src/http/write-stall.ts) over stand-in responses whose
// socket counters the test moves by hand: only a response with bytes waiting
// and no progress is reported, once; a slow reader and an idle one are not.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { test } from 'node:test';
import { createWriteStallWatch } from '../../src/http/write-stall.ts';

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

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

test('bytes waiting and none taken: reported once, after the limit', async () => {
  const watch = createWriteStallWatch(400);
  const { res } = fakeResponse(65536);
  let stalls = 0;
  const started = performance.now();
  let at = 0;
  watch.watch(res, () => {
    stalls++;
    at = performance.now() - started;
  });
  await sleep(1500);
  assert.equal(stalls, 1);
  assert.ok(at >= 400, `reported after ${at} ms`);
  assert.equal(watch.size, 0);
});

test('a client that takes a few bytes at a time is never reported', async () => {
  const watch = createWriteStallWatch(400);
  const { res, socket } = fakeResponse(65536);
  let stalls = 0;
  watch.watch(res, () => stalls++);
  // The write in flight shrinks by 10 bytes every 50 ms: the kernel takes them.
  for (let i = 0; i < 24; i++) {
    await sleep(50);
    socket._handle.writeQueueSize -= 10;
  }
  // Then writes complete (what was queued is handed over) and new bytes wait.
  for (let i = 0; i < 8; i++) {
    await sleep(50);
    socket.bytesWritten += 1000;
  }
  watch.unwatch(res);
  assert.equal(stalls, 0);
});

test('nothing waiting (a slow upstream): never reported, however long', async () => {
  const watch = createWriteStallWatch(200);
  const { res, socket } = fakeResponse(0);
  socket._handle.writeQueueSize = 0;
  let stalls = 0;
  watch.watch(res, () => stalls++);
  await sleep(800);
  watch.unwatch(res);
  assert.equal(stalls, 0);
});

test('the clock starts when bytes begin to wait, and an unwatched response is never reported', async () => {
  const watch = createWriteStallWatch(300);
  const { res, socket, setWaiting } = fakeResponse(0);
  socket._handle.writeQueueSize = 0;
  let stalls = 0;
  watch.watch(res, () => stalls++);
  await sleep(600);
  setWaiting(100);
  await sleep(150);
  assert.equal(stalls, 0);
  await sleep(900);
  assert.equal(stalls, 1);

  const other = fakeResponse(100);
  watch.watch(other.res, () => stalls++);
  watch.unwatch(other.res);
  await sleep(800);
  assert.equal(stalls, 1);
});

test('a new limit (a reload) applies to the responses already watched', async () => {
  const watch = createWriteStallWatch(60_000);
  const { res } = fakeResponse(100);
  let stalls = 0;
  watch.watch(res, () => stalls++);
  await sleep(300);
  watch.setTimeout(300);
  await sleep(1200);
  assert.equal(stalls, 1);
  // The same limit again changes nothing; with nothing watched the sweep stops by itself.
  watch.setTimeout(300);
  assert.equal(watch.size, 0);
});
