// What the slow-client tests share: an upstream that floods as fast as its
// socket takes, a client that sends its request and never reads, the
// gateway's side of that client's connection, and the moment that connection
// is saturated (bytes wait for the client and none move), from which a
// manual scheduler's write-stall deadline is exact.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ServerResponse } from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { createGatewayMetrics, type GatewayMetrics } from '../../src/metrics/gateway-metrics.ts';
import { eventually } from '../support/eventually.ts';
import type { TestGateway, UpstreamRequest } from './harness.ts';

// A chunk with 4000 characters of content and its number: few frames fill the loopback buffers, and each is cheap to make.
const [FRAME_HEAD, FRAME_TAIL] = `data: ${JSON.stringify({ id: 'chatcmpl-flood', object: 'chat.completion.chunk', created: 1, model: 'upstream-model-1', choices: [{ index: 0, delta: { content: `${'x'.repeat(4000)}#` }, finish_reason: null }] })}\n\n`.split('#') as [string, string];

function chunkFrame(i: number): string {
  return `${FRAME_HEAD}${i}${FRAME_TAIL}`;
}

const SHORT_STREAM =
  `data: ${JSON.stringify({ id: 'chatcmpl-short', object: 'chat.completion.chunk', created: 1, model: 'upstream-model-1', choices: [{ index: 0, delta: { role: 'assistant', content: 'ok' }, finish_reason: null }] })}\n\n` +
  `data: ${JSON.stringify({ id: 'chatcmpl-short', object: 'chat.completion.chunk', created: 1, model: 'upstream-model-1', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n` +
  'data: [DONE]\n\n';

function completion(content: string): string {
  return JSON.stringify({
    id: 'chatcmpl-big',
    object: 'chat.completion',
    created: 1,
    model: 'upstream-model-1',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  });
}

/** What the flooding upstream did: bytes written, and whether its current write waits for 'drain'. */
export interface Flood {
  written: number;
  /** Since when (performance.now()) the upstream's current write waits for 'drain'; -1 when it does not. */
  blockedSince: number;
}

export function newFlood(): Flood {
  return { written: 0, blockedSince: -1 };
}

/**
 * "flood": a stream written as fast as the socket takes it, until the
 * connection closes; "big": a 12 MB JSON completion; anything else: a short stream.
 */
export function floodingUpstream(flood: Flood): (req: UpstreamRequest, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const body = req.body as { stream?: boolean; messages: { content: string }[] };
    const content = body.messages[0]?.content;
    if (content === 'big') {
      const text = completion('y'.repeat(12 * 1024 * 1024));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (content !== 'flood') {
      res.end(SHORT_STREAM);
      return;
    }
    for (let i = 0; !res.destroyed; i++) {
      const frame = chunkFrame(i);
      flood.written += frame.length;
      if (res.write(frame)) continue;
      flood.blockedSince = performance.now();
      await new Promise<void>((resolve) => {
        const done = (): void => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
      flood.blockedSince = -1;
    }
  };
}

/** A client that sends its request and never reads a byte of the answer (over TLS when `ca` is given). */
export function neverReadingClient(gw: TestGateway, body: unknown, ca?: Buffer): net.Socket {
  const text = JSON.stringify(body);
  const port = Number(new URL(gw.baseUrl).port);
  const socket = ca === undefined ? net.connect(port, '127.0.0.1') : tls.connect({ host: '127.0.0.1', port, ca });
  socket.pause();
  socket.on('error', () => undefined);
  socket.write(
    `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${gw.key}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
  );
  return socket;
}

/** The gateway's access-log lines for requests, once there are more than `index`; line `index`. */
export async function accessLine(gw: TestGateway, index: number): Promise<Record<string, unknown>> {
  const lines = (): Record<string, unknown>[] => gw.logs.filter((l) => l['msg'] === 'request');
  await eventually(() => lines().length > index, `access-log line ${index}`, { boundMs: 30_000 });
  return lines()[index] as Record<string, unknown>;
}

/** The gateway's side of the next connection it accepts. */
export function nextAccepted(gw: TestGateway): Promise<net.Socket> {
  return new Promise((resolve) => gw.gateway.server.once('connection', resolve));
}

/** What the write-stall sweep reads of a socket (src/http/write-stall.ts): bytes handed to the kernel, and what libuv still holds. */
function progressOf(socket: net.Socket): string {
  const queued = (socket as unknown as { _handle?: { writeQueueSize?: number } | null })._handle?.writeQueueSize ?? 0;
  return `${socket.bytesWritten - socket.writableLength}/${queued}`;
}

/**
 * Resolves once bytes wait on `socket` for a client that takes none: its
 * write buffer holds bytes and what the kernel took has not moved for
 * `stillMs` of real time. From then on the sweep sees no progress, so a stall
 * deadline on a manual scheduler is exact.
 */
export async function saturated(socket: net.Socket, stillMs = 150): Promise<void> {
  let seen = '';
  let since = performance.now();
  await eventually(
    () => {
      const now = progressOf(socket);
      if (now !== seen || socket.writableLength === 0) {
        seen = now;
        since = performance.now();
        return false;
      }
      return performance.now() - since >= stillMs;
    },
    'the connection to fill up with bytes the client does not take',
    { boundMs: 30_000, everyMs: 10 },
  );
}

/**
 * The most bytes any socket of this process held in its read buffer (client
 * sockets: the gateway's upstream connections, whichever transport made them,
 * and the test's own client) or in its write buffer (the gateway's accepted
 * sockets), sampled until stop(). Socket buffers are where an unbounded
 * relay would pile up bytes.
 */
export function sampleSocketBuffers(gw: TestGateway): { stop(): { readMax: number; writeMax: number } } {
  const clients: net.Socket[] = [];
  const accepted: net.Socket[] = [];
  const onClient = (message: unknown): void => void clients.push((message as { socket: net.Socket }).socket);
  const onAccepted = (socket: net.Socket): void => void accepted.push(socket);
  subscribe('net.client.socket', onClient);
  gw.gateway.server.on('connection', onAccepted);
  let readMax = 0;
  let writeMax = 0;
  const sample = (): void => {
    for (const socket of clients) readMax = Math.max(readMax, socket.readableLength);
    for (const socket of accepted) writeMax = Math.max(writeMax, socket.writableLength);
  };
  const timer = setInterval(sample, 25);
  return {
    stop() {
      sample();
      clearInterval(timer);
      unsubscribe('net.client.socket', onClient);
      gw.gateway.server.off('connection', onAccepted);
      return { readMax, writeMax };
    },
  };
}

/** Metrics whose sources read the gateway once it is started. */
export function metricsFor(target: { gw?: TestGateway }): GatewayMetrics {
  return createGatewayMetrics({
    targets: () => target.gw?.gateway.targets.health() ?? [],
    isKnownAlias: (alias) => target.gw !== undefined && Object.hasOwn(target.gw.gateway.config.aliases, alias),
    stateBackendUp: () => 1,
  });
}
