// The load generator of bench/gateway.ts: a fixed number of POSTs kept
// `concurrency` at a time over a keep-alive node:http Agent, one latency (and,
// for streams, time to first body byte) recorded per request. Every request
// has a deadline, so a stuck server ends a cell with errors instead of hanging.

import { Buffer } from 'node:buffer';
import http from 'node:http';

const REQUEST_TIMEOUT_MS = 10_000;
const DONE_TAIL = Buffer.from('data: [DONE]\n\n');

export interface LoadTarget {
  port: number;
  /** Request headers beyond content-type and content-length (auth, for the gateway). */
  headers: Readonly<Record<string, string>>;
}

export interface LoadRun {
  target: LoadTarget;
  body: Buffer;
  stream: boolean;
  concurrency: number;
  requests: number;
  agent: http.Agent;
}

export interface LoadSamples {
  requests: number;
  errors: number;
  /** The first error seen, to show what went wrong. */
  firstError: string | undefined;
  /** Wall time of the whole run, ms. */
  elapsedMs: number;
  /** Per successful request, request start to last byte, ms. */
  totalMs: Float64Array;
  /** Per successful request, request start to first body byte, ms. */
  firstByteMs: Float64Array;
}

export const CHAT_PATH = '/v1/chat/completions';

export function createAgent(concurrency: number): http.Agent {
  // One socket per concurrent request, reused: the servers see `concurrency`
  // keep-alive connections, as from a pooled client.
  return new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency });
}

interface Sample {
  ok: boolean;
  error: string | undefined;
  totalMs: number;
  firstByteMs: number;
}

function sendOne(run: LoadRun): Promise<Sample> {
  return new Promise((resolve) => {
    const started = performance.now();
    let firstByte = 0;
    let settled = false;
    const finish = (ok: boolean, error: string | undefined): void => {
      if (settled) return;
      settled = true;
      const now = performance.now();
      resolve({ ok, error, totalMs: now - started, firstByteMs: (firstByte === 0 ? now : firstByte) - started });
    };
    const req = http.request(
      {
        host: '127.0.0.1',
        port: run.target.port,
        method: 'POST',
        path: CHAT_PATH,
        agent: run.agent,
        headers: { ...run.target.headers, 'content-type': 'application/json', 'content-length': run.body.length },
      },
      (res) => {
        // The last bytes seen, enough to tell a stream that ended with [DONE].
        let tail: Buffer = Buffer.alloc(0);
        res.on('data', (chunk: Buffer) => {
          if (firstByte === 0) firstByte = performance.now();
          tail = chunk.length >= DONE_TAIL.length ? chunk : Buffer.concat([tail, chunk]).subarray(-DONE_TAIL.length);
        });
        res.on('end', () => {
          if (res.statusCode !== 200) finish(false, `status ${res.statusCode}`);
          else if (run.stream && !tail.subarray(-DONE_TAIL.length).equals(DONE_TAIL)) finish(false, 'stream did not end with [DONE]');
          else if (!run.stream && firstByte === 0) finish(false, 'empty body');
          else finish(true, undefined);
        });
        res.on('error', (error) => finish(false, error.message));
      },
    );
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', (error) => finish(false, error.message));
    req.end(run.body);
  });
}

/** Sends `run.requests` requests, `run.concurrency` at a time. */
export async function runLoad(run: LoadRun): Promise<LoadSamples> {
  const totalMs = new Float64Array(run.requests);
  const firstByteMs = new Float64Array(run.requests);
  let issued = 0;
  let succeeded = 0;
  let errors = 0;
  let firstError: string | undefined;
  const worker = async (): Promise<void> => {
    while (issued < run.requests) {
      issued++;
      const sample = await sendOne(run);
      if (sample.ok) {
        totalMs[succeeded] = sample.totalMs;
        firstByteMs[succeeded] = sample.firstByteMs;
        succeeded++;
      } else {
        errors++;
        firstError ??= sample.error;
      }
    }
  };
  const started = performance.now();
  const workers: Promise<void>[] = [];
  for (let i = 0; i < Math.min(run.concurrency, run.requests); i++) workers.push(worker());
  await Promise.all(workers);
  const elapsedMs = performance.now() - started;
  return {
    requests: run.requests,
    errors,
    firstError,
    elapsedMs,
    totalMs: totalMs.subarray(0, succeeded),
    firstByteMs: firstByteMs.subarray(0, succeeded),
  };
}

/** Nearest-rank percentile (p in 0..1) of unsorted samples; NaN when there are none. */
export function percentile(samples: Float64Array, p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(p * sorted.length)));
  return sorted[rank - 1] as number;
}

/** One request with the whole answer kept, to check a target before measuring it. */
export function fetchOnce(target: LoadTarget, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: target.port,
        method: 'POST',
        path: CHAT_PATH,
        agent: false,
        headers: { ...target.headers, 'content-type': 'application/json', 'content-length': body.length },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (part: Buffer) => parts.push(part));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}
