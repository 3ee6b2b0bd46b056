// Fake OpenAI-compatible upstreams on 127.0.0.1, port 0, for the dispatcher
// tests: each counts the requests it saw and tells when a request's socket closed.

import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChatRequest } from '../../src/chat/types.ts';
import { createOpenAICompatibleProvider, type OpenAICompatibleOptions } from '../../src/providers/openai-compatible.ts';
import { createCircuitBreaker, type CircuitBreaker, type CircuitBreakerOptions } from '../../src/upstream/circuit-breaker.ts';
import type { UpstreamTarget } from '../../src/upstream/dispatcher.ts';
import type { RetryPolicy } from '../../src/upstream/retry-policy.ts';

/** `n` is the 1-based number of the request at this upstream. */
export type UpstreamBehaviour = (n: number, req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export interface FakeUpstream {
  readonly baseUrl: string;
  /** Requests received so far. */
  readonly requests: number;
  /** Each request's body and x-request-id, in order. */
  readonly seen: ReadonlyArray<{ body: string; requestId: string | undefined }>;
  behaviour: UpstreamBehaviour;
  /** Resolves when the response of request `n` closes (finished or aborted). */
  closed(n: number): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeUpstream(behaviour: UpstreamBehaviour): Promise<FakeUpstream> {
  let requests = 0;
  const seen: Array<{ body: string; requestId: string | undefined }> = [];
  const closings: Array<Promise<void>> = [];
  const server = createServer(async (req, res) => {
    const n = ++requests;
    closings[n] = once(res, 'close').then(() => undefined);
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const requestId = req.headers['x-request-id'];
    seen.push({ body: Buffer.concat(parts).toString('utf8'), requestId: typeof requestId === 'string' ? requestId : undefined });
    try {
      await upstream.behaviour(n, req, res);
    } catch {
      res.destroy();
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const upstream: FakeUpstream = {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return requests;
    },
    seen,
    behaviour,
    closed(n: number) {
      const closing = closings[n];
      if (closing === undefined) throw new Error(`request ${n} never arrived`);
      return closing;
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  return upstream;
}

/** A port nothing listens on: connections are refused. */
/** `host:port` of a fake upstream, as failure causes name it. */
export function addressOf(upstream: { baseUrl: string }): string {
  return new URL(upstream.baseUrl).host;
}

export async function refusedBaseUrl(): Promise<string> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  server.close();
  await once(server, 'close');
  return `http://127.0.0.1:${port}/v1`;
}

export const FAST_RETRY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 2000 };

export const baseRequest: ChatRequest = { model: 'upstream-model', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 16 };

export interface TargetOptions {
  priority?: number;
  weight?: number;
  retry?: Partial<RetryPolicy>;
  breaker?: CircuitBreaker;
  breakerOptions?: CircuitBreakerOptions;
  clock?: () => number;
  provider?: Partial<OpenAICompatibleOptions>;
}

export function target(id: string, baseUrl: string, options: TargetOptions = {}): UpstreamTarget {
  return {
    id,
    provider: createOpenAICompatibleProvider({ baseUrl, firstByteTimeoutMs: 2000, idleTimeoutMs: 2000, ...options.provider }),
    priority: options.priority ?? 0,
    weight: options.weight ?? 1,
    request: { ...baseRequest, model: `${id}-model` },
    retry: { ...FAST_RETRY, ...options.retry },
    breaker: options.breaker ?? createCircuitBreaker(options.breakerOptions ?? {}, options.clock ?? Date.now),
  };
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

export function completionBody(content: string): Record<string, unknown> {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1700000000,
    model: 'upstream-model',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
  };
}

export function answer(content: string): UpstreamBehaviour {
  return (_n, _req, res) => json(res, 200, completionBody(content));
}

export function chunkEvent(content: string, finish: string | null = null): string {
  const chunk = {
    id: 'chatcmpl-s',
    object: 'chat.completion.chunk',
    created: 1700000001,
    model: 'upstream-model',
    choices: [{ index: 0, delta: { content }, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

export function startEventStream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.flushHeaders();
}

/** A whole stream: one chunk per word, a finish chunk, [DONE]. */
export function streamOf(...words: string[]): UpstreamBehaviour {
  return (_n, _req, res) => {
    startEventStream(res);
    res.end(`${words.map((word) => chunkEvent(word)).join('')}${chunkEvent('', 'stop')}data: [DONE]\n\n`);
  };
}

export function errorStatus(status: number, headers: Record<string, string> = {}): UpstreamBehaviour {
  return (_n, _req, res) => json(res, status, { error: { message: `failure ${status}` } }, headers);
}

/** Never answers; the socket stays open until the client gives up. */
export const hang: UpstreamBehaviour = () => undefined;

/** Cuts the connection without a response. */
export const reset: UpstreamBehaviour = (_n, req) => {
  req.socket.destroy();
};

/** A clock the test moves by hand. */
export function manualClock(start = 1_000_000): { now: () => number; advance(ms: number): void } {
  let time = start;
  return {
    now: () => time,
    advance(ms: number) {
      time += ms;
    },
  };
}

export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}
