// Shared by the lifecycle tests: the real gateway object (not only its URL) on
// 127.0.0.1 port 0, so a test can reload and shut it down; fake upstreams that
// stream on the test's command; a client that sees a stream's first bytes.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { GatewayConfig } from '../../src/config/config.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { createGateway, type Gateway } from '../../src/gateway/gateway.ts';
import { openFileBackend } from '../../src/state/file-backend.ts';
import { createLogger } from '../../src/log/logger.ts';
import type { Scheduler } from '../../src/time/scheduler.ts';
import { listenLocal, type RawResponse } from './harness.ts';

export const UPSTREAM_SECRET = 'sk-upstream-secret-lifecycle';

export interface LifecycleGateway {
  gateway: Gateway;
  baseUrl: string;
  key: string;
  keyId: string;
  logs: Record<string, unknown>[];
  /** A config file's content checked as the gateway's own was (same data directory). */
  configFor(value: Record<string, unknown>): GatewayConfig;
  close(): Promise<void>;
}

/** `scheduler`: the gateway's clock and timers (default: the system's). */
export async function startLifecycleGateway(value: Record<string, unknown>, options: { scheduler?: Scheduler } = {}): Promise<LifecycleGateway> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-lifecycle-'));
  const configFor = (v: Record<string, unknown>): GatewayConfig => parseConfig({ ...v, dataDir }, null, dataDir);
  const state = openFileBackend(dataDir, { watch: false });
  const keys = state.keys;
  const created = await keys.create('lifecycle');
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) });
  const gateway = createGateway({ config: configFor(value), state, logger, env: { UPSTREAM_KEY: UPSTREAM_SECRET }, loadedAt: 1_700_000_000, ...options });
  const address = await listenLocal(gateway);
  return {
    gateway,
    baseUrl: `http://127.0.0.1:${address.port}`,
    key: created.key,
    keyId: created.record.id,
    logs,
    configFor,
    async close() {
      gateway.server.closeAllConnections();
      gateway.endShutdownNow();
      await gateway.close();
      await state.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** An OpenAI-compatible provider entry for a fake upstream: one attempt, a breaker that never opens. */
export function fakeProvider(baseUrl: string): Record<string, unknown> {
  return { type: 'openai', baseUrl, apiKeyEnv: 'UPSTREAM_KEY', retry: { maxAttempts: 1 }, circuitBreaker: { failureThreshold: 1000 } };
}

const CHUNK_BASE = { id: 'chatcmpl-lc', object: 'chat.completion.chunk', created: 1, model: 'upstream' };

/** One upstream SSE event carrying `content`. */
export function contentEvent(content: string): string {
  return `data: ${JSON.stringify({ ...CHUNK_BASE, choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
}

export const FINISH_EVENTS = `data: ${JSON.stringify({ ...CHUNK_BASE, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`;

export function completionBody(content: string): string {
  return JSON.stringify({
    id: 'chatcmpl-lc',
    object: 'chat.completion',
    created: 1,
    model: 'upstream',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 },
  });
}

/** A gate the test opens: `wait` resolves once `open()` was called. */
export function createGate(): { wait: Promise<void>; open(): void } {
  let open: () => void = () => {};
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

export interface OpenStream {
  /** Resolves when the first bytes of the body arrived. */
  firstBytes: Promise<void>;
  response: Promise<RawResponse>;
}

/** POST /v1/chat/completions read as it arrives. */
export function openChat(baseUrl: string, key: string, body: unknown): OpenStream {
  let firstBytes: () => void = () => {};
  const first = new Promise<void>((resolve) => {
    firstBytes = resolve;
  });
  const response = new Promise<RawResponse>((resolve, reject) => {
    const req = http.request(
      `${baseUrl}/v1/chat/completions`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` } },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          parts.push(c);
          firstBytes();
        });
        res.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
  return { firstBytes: first, response };
}

/** Content of every chunk event of an SSE body, joined; the non-chunk payloads as they are. */
export function streamContents(payloads: string[]): string[] {
  return payloads.map((p) => {
    if (p === '[DONE]') return p;
    const value = JSON.parse(p) as { choices?: Array<{ delta?: { content?: string } }>; error?: unknown };
    if (value.error !== undefined) return p;
    return (value.choices ?? []).map((c) => c.delta?.content ?? '').join('');
  });
}

// The shared waits under the names other test files import them by.
export { eventually as until, within } from '../support/eventually.ts';
