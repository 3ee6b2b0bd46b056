// A response's times for its access-log line: when its request began to be
// handled and when its status line and headers went out (time to first
// byte). Every path to the socket (implicit headers, flushHeaders() and end()
// without writeHead included) goes through the response's writeHead, so the
// second is taken there. It works on any node:http ServerResponse, one a
// host's server made included: the response gets its own writeHead that
// records the time and calls the one it had (a host's own wrapper kept), and
// the times live here, not on the response.
import { ServerResponse } from 'node:http';

type WriteHead = ServerResponse['writeHead'];

export interface ResponseTiming {
  /** When timing began (the request's handling), on the clock given to startTiming. */
  readonly openedAt: number;
  /** When the headers went out, on the same clock; -1 while they have not. */
  readonly headersAt: number;
}

interface Timing extends ResponseTiming {
  headersAt: number;
  /** The writeHead the response had before, called by the recording one. */
  readonly writeHead: WriteHead;
  readonly monotonic: () => number;
}

const timings = new WeakMap<ServerResponse, Timing>();

/**
 * The one recording writeHead, shared by every response (`this` is the
 * response): timing a response makes one record and no function.
 */
function recordingWriteHead(this: ServerResponse, ...args: unknown[]): ServerResponse {
  const timing = timings.get(this);
  const next = timing?.writeHead ?? ServerResponse.prototype.writeHead;
  if (timing !== undefined && timing.headersAt < 0) timing.headersAt = timing.monotonic();
  return (next as (...more: unknown[]) => ServerResponse).apply(this, args);
}

/** Starts `res`'s times on `monotonic`'s clock (read with timingOf). Once per response; a later call keeps the first times. */
export function startTiming(res: ServerResponse, monotonic: () => number): void {
  if (timings.has(res)) return;
  const openedAt = monotonic();
  timings.set(res, { openedAt, headersAt: res.headersSent ? openedAt : -1, writeHead: res.writeHead, monotonic });
  res.writeHead = recordingWriteHead as WriteHead;
}

/** `res`'s times; undefined when startTiming was never called on it. */
export function timingOf(res: ServerResponse): ResponseTiming | undefined {
  return timings.get(res);
}
