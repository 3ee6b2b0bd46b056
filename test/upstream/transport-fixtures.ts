// What the transport tests share: both transports by name, the shared fake
// upstream (../../src/testing/fake-upstream.ts; http, or https with server options),
// a transport that tells when a response's headers arrived, and small helpers
// to call a provider and read its failure.
import assert from 'node:assert/strict';
import type https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ChatRequest } from '../../src/chat/types.ts';
import { ApiError } from '../../src/errors/api-error.ts';
import { createOpenAICompatibleProvider, type OpenAICompatibleOptions } from '../../src/providers/openai-compatible.ts';
import { createFetchTransport } from '../../src/upstream/fetch-transport.ts';
import { createNodeTransport, type NodeTransportOptions } from '../../src/upstream/node-transport.ts';
import type { UpstreamCall } from '../../src/upstream/provider.ts';
import type { UpstreamTransport } from '../../src/upstream/transport.ts';
import { startTestUpstream, type TestUpstream } from '../../src/testing/fake-upstream-server.ts';
import { sendJson, startEventStream, type UpstreamHandler } from '../../src/testing/fake-upstream.ts';
import { drive, type DrivenProvider } from '../support/drive-provider.ts';

export { collect } from '../support/collect.ts';
export { startEventStream };

export interface TransportCase {
  name: 'fetch' | 'node';
  /** A fresh transport; the fetch one ignores the options (it takes none). */
  make(options?: NodeTransportOptions): UpstreamTransport;
}

export const TRANSPORTS: readonly TransportCase[] = [
  { name: 'fetch', make: () => createFetchTransport() },
  { name: 'node', make: (options) => createNodeTransport(options) },
];

export type { TestUpstream };

/** The shared fake upstream on 127.0.0.1:0; https when `tls` (server options) is given. */
export function startUpstream(handle: UpstreamHandler, tls?: https.ServerOptions): Promise<TestUpstream> {
  return startTestUpstream(handle, tls === undefined ? {} : { tls });
}

/** `transport`, calling `onResponse` as each response's status and headers arrive. */
export function observed(transport: UpstreamTransport, onResponse: () => void): UpstreamTransport {
  return {
    name: transport.name,
    send(request) {
      const sent = transport.send(request);
      sent.response.then(onResponse, () => undefined);
      return sent;
    },
  };
}

export function provider(transport: UpstreamTransport, baseUrl: string, options: Partial<OpenAICompatibleOptions> = {}): DrivenProvider {
  return drive(createOpenAICompatibleProvider({ baseUrl, apiKey: 'sk-upstream-secret', transport, firstByteTimeoutMs: 5000, idleTimeoutMs: 5000, ...options }));
}

export const baseRequest: ChatRequest = { model: 'upstream-model', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 16 };

export function call(stream = false, signal: AbortSignal = new AbortController().signal): UpstreamCall {
  return { request: { ...baseRequest, ...(stream ? { stream: true } : {}) }, requestId: 'req_table-1', signal };
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

export const json = sendJson;

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
