// The write-stall limit (limits.writeStallTimeoutMs): a response whose client
// has taken no bytes for that long, while the gateway holds bytes for it, is
// reported stalled, so that the shell can end it (./server.ts). Without it a
// client that opens a stream and stops reading keeps its socket, the key's
// concurrency slot, the upstream request and the buffered bytes for as long
// as the connection stays open, which may be forever.
//
// Like nginx's send_timeout, it bounds the time between two moments of
// progress, not the whole answer: a client that reads slowly but keeps
// reading is served. Progress is what the kernel took from the socket: a
// write request completed (net.Socket's bytesWritten counts queued bytes too,
// so the bytes still queued, writableLength, are taken off), or the part of
// the write in flight that libuv has not handed to the kernel yet
// (writeQueueSize) shrank. A response with nothing waiting (the upstream is
// slow to produce) is never stalled: the upstream's own timers bound that.
//
// One sweep timer per shell checks every watched response, instead of a timer
// per response re-armed on every write: the per-request cost stays a Map entry,
// and 10,000 open streams cost one pass over the Map per interval.

import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { systemScheduler, type Scheduler, type Timer } from '../time/scheduler.ts';

/** The sweep runs this often, at most; so a stall is seen within timeoutMs + this. */
const MAX_SWEEP_MS = 1000;
/** The sweep runs at least this far apart, however short the limit. */
const MIN_SWEEP_MS = 100;

export interface WriteStallWatch {
  /** Watches `res` until unwatch(); `onStall(res)` runs at most once, then the watch ends. */
  watch(res: ServerResponse, onStall: (res: ServerResponse) => void): void;
  unwatch(res: ServerResponse): void;
  /** A new limit (a reload); responses watched now are judged by it from the next sweep. */
  setTimeout(timeoutMs: number): void;
  /** How many responses are watched (tests, diagnostics). */
  readonly size: number;
}

interface Watched {
  onStall: (res: ServerResponse) => void;
  res: ServerResponse;
  /** When progress was last seen while bytes were waiting; -1 while nothing waits. */
  since: number;
  /** Bytes whose write completed, at `since`. */
  delivered: number;
  /** Bytes of the write in flight not yet in the kernel, at the last sweep. */
  queued: number;
}

/**
 * The sweep runs on `scheduler`, every quarter of the limit (100 ms to 1 s)
 * from the first watch. A response is reported by the first pass at least
 * timeoutMs after the pass that last saw it progress, or first saw its bytes
 * wait: a stall is seen between timeoutMs and timeoutMs + two intervals after
 * the client stopped taking bytes.
 */
export function createWriteStallWatch(timeoutMs: number, scheduler: Scheduler = systemScheduler): WriteStallWatch {
  let limitMs = timeoutMs;
  const watched = new Map<ServerResponse, Watched>();
  let timer: Timer | undefined;

  function sweepEvery(): number {
    return Math.max(MIN_SWEEP_MS, Math.min(MAX_SWEEP_MS, Math.floor(limitMs / 4)));
  }

  function start(): void {
    if (timer !== undefined) return;
    timer = scheduler.setInterval(sweep, sweepEvery());
    // A watch never keeps the process alive on its own.
    timer.unref();
  }

  function stop(): void {
    scheduler.clearTimer(timer);
    timer = undefined;
  }

  function sweep(): void {
    if (watched.size === 0) {
      stop();
      return;
    }
    const at = scheduler.monotonic();
    const stalled: Watched[] = [];
    for (const [res, w] of watched) {
      const socket = res.socket;
      if (socket === null || socket.destroyed) continue;
      const queued = queuedInHandle(socket);
      // Bytes in the response's and the socket's buffers (the write in flight
      // included): what the gateway holds for this client.
      if (res.writableLength === 0 && queued === 0) {
        w.since = -1;
        continue;
      }
      const delivered = deliveredBytes(socket);
      if (w.since < 0 || delivered !== w.delivered || queued < w.queued) {
        w.since = at;
        w.delivered = delivered;
        w.queued = queued;
        continue;
      }
      w.queued = queued;
      if (at - w.since >= limitMs) {
        watched.delete(res);
        stalled.push(w);
      }
    }
    // Called after the pass: a callback may destroy sockets and unwatch others.
    for (const w of stalled) w.onStall(w.res);
  }

  return {
    watch(res, onStall) {
      watched.set(res, { onStall, res, since: -1, delivered: 0, queued: 0 });
      start();
    },
    unwatch(res) {
      watched.delete(res);
    },
    setTimeout(ms) {
      if (ms === limitMs) return;
      limitMs = ms;
      if (timer !== undefined) {
        stop();
        if (watched.size > 0) start();
      }
    },
    get size() {
      return watched.size;
    },
  };
}

/** Bytes whose writes completed: handed to the kernel. */
function deliveredBytes(socket: Socket): number {
  const written = socket.bytesWritten;
  return typeof written === 'number' ? written - socket.writableLength : 0;
}

/**
 * What libuv still holds of the write in flight (a plain TCP socket's handle
 * reports it; net.Socket reads the same field). 0 where the handle does not
 * say (a TLS socket): then only completed writes count as progress.
 */
function queuedInHandle(socket: Socket): number {
  const handle = (socket as unknown as { _handle?: { writeQueueSize?: unknown } | null })._handle;
  const size = handle?.writeQueueSize;
  return typeof size === 'number' ? size : 0;
}
