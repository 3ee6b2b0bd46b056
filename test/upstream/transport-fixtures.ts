// What the transport tests share: both transports by name, a fake upstream
// (http or https) on 127.0.0.1 port 0 that counts TCP connections and records
// requests, and small helpers to call a provider and read its failure.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { ChatCompletionChunk, ChatRequest } from '../../src/chat/types.ts';
import { ApiError } from '../../src/errors/api-error.ts';
import { createOpenAICompatibleProvider, type OpenAICompatibleOptions } from '../../src/providers/openai-compatible.ts';
import { createFetchTransport } from '../../src/upstream/fetch-transport.ts';
import { createNodeTransport, type NodeTransportOptions } from '../../src/upstream/node-transport.ts';
import type { ChatProvider, UpstreamCall } from '../../src/upstream/provider.ts';
import type { UpstreamTransport } from '../../src/upstream/transport.ts';

export interface TransportCase {
  name: 'fetch' | 'node';
  /** A fresh transport; the fetch one ignores the options (it takes none). */
  make(options?: NodeTransportOptions): UpstreamTransport;
}

export const TRANSPORTS: readonly TransportCase[] = [
  { name: 'fetch', make: () => createFetchTransport() },
  { name: 'node', make: (options) => createNodeTransport(options) },
];

export interface SeenRequest {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

export interface TestUpstream {
  baseUrl: string;
  port: number;
  /** TCP connections accepted so far. */
  readonly connections: number;
  readonly sockets: Socket[];
  seen: SeenRequest[];
  handle: Handler;
  /** Resolves when the response to the latest request closes (finished or cut). */
  closed(): Promise<void>;
  close(): Promise<void>;
}

/** An upstream on 127.0.0.1:0; https when `tls` (server options) is given. */
export async function startUpstream(handle: Handler, tls?: https.ServerOptions): Promise<TestUpstream> {
  const sockets: Socket[] = [];
  let lastClosed: Promise<void> = Promise.resolve();
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    lastClosed = once(res, 'close').then(() => undefined);
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const body = Buffer.concat(parts).toString('utf8');
      upstream.seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      try {
        upstream.handle(req, res, body);
      } catch {
        res.destroy();
      }
    });
  };
  const server = tls === undefined ? http.createServer(onRequest) : https.createServer(tls, onRequest);
  server.on(tls === undefined ? 'connection' : 'secureConnection', (socket: Socket) => void sockets.push(socket));
  // A failed handshake is the test's subject, not an error of the fake.
  server.on('tlsClientError', () => undefined);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const upstream: TestUpstream = {
    baseUrl: `${tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}/v1`,
    port,
    get connections() {
      return sockets.length;
    },
    sockets,
    seen: [],
    handle,
    closed: () => lastClosed,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  return upstream;
}

export function provider(transport: UpstreamTransport, baseUrl: string, options: Partial<OpenAICompatibleOptions> = {}): ChatProvider {
  return createOpenAICompatibleProvider({ baseUrl, apiKey: 'sk-upstream-secret', transport, firstByteTimeoutMs: 5000, idleTimeoutMs: 5000, ...options });
}

export const baseRequest: ChatRequest = { model: 'upstream-model', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 16 };

export function call(stream = false, signal: AbortSignal = new AbortController().signal): UpstreamCall {
  return { request: { ...baseRequest, ...(stream ? { stream: true } : {}) }, requestId: 'req_table-1', signal };
}

export async function collect(iterable: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const out: ChatCompletionChunk[] = [];
  for await (const chunk of iterable) out.push(chunk);
  return out;
}

export async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected a rejection');
}

/** status, code and message of an ApiError. */
export function rendered(error: unknown): { status: number; code: string | null; message: string } {
  assert.ok(error instanceof ApiError, `expected an ApiError, got ${String(error)}`);
  const body = error.toBody().error;
  return { status: error.status, code: body.code, message: body.message };
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

export const completion = {
  id: 'chatcmpl-t1',
  object: 'chat.completion',
  created: 1700000000,
  model: 'upstream-model-1',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
};

export function chunkFrame(content: string): string {
  const chunk = { id: 'chatcmpl-s1', object: 'chat.completion.chunk', created: 1700000001, model: 'upstream-model-1', choices: [{ index: 0, delta: { content }, finish_reason: null }] };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

export function startEventStream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.flushHeaders();
}

/** A whole event stream: two chunks and [DONE]. */
export function eventStream(res: ServerResponse): void {
  startEventStream(res);
  res.end(`${chunkFrame('Hi')}${chunkFrame(' there')}data: [DONE]\n\n`);
}

/** The answer both a stream and a non-stream call get from `eventStream`/`completion`. */
export function answer(req: IncomingMessage, res: ServerResponse): void {
  if (req.headers['accept'] === 'text/event-stream') eventStream(res);
  else json(res, 200, completion);
}

/** Lets the pools settle between sequential calls (undici frees a socket on the next tick). */
export const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
