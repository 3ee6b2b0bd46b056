// Issue 14 items 1 and 2: clients that stop reading. A fake upstream streams as
// fast as its socket takes; a raw client socket sends its request and never
// reads. Backpressure must reach the upstream (its writes block), and after
// limits.writeStallTimeoutMs the gateway ends the response: the socket goes,
// the upstream request is aborted, the key's concurrency slot comes back, the
// access-log line says so and a metric counts it. On both upstream transports.
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import net from 'node:net';
import tls from 'node:tls';
import { after, before, describe, test } from 'node:test';
import type { ServerResponse } from 'node:http';
import { loadListenerTls } from '../../src/config/tls-files.ts';
import { createGatewayMetrics, type GatewayMetrics } from '../../src/metrics/gateway-metrics.ts';
import { createTestPki } from '../tls/test-pki.ts';
import { postChat, sseData, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway, type UpstreamRequest } from './harness.ts';

const STALL_MS = 2000;
/** The goal for what the gateway holds in a stalled stream's socket buffers. */
const BUFFER_BOUND_BYTES = 1024 * 1024;
/** Loose: the gateway sweeps at least once a second; CI machines are slow. */
const RELEASE_BOUND_MS = 15_000;

function chunkFrame(i: number): string {
  const chunk = { id: 'chatcmpl-flood', object: 'chat.completion.chunk', created: 1, model: 'upstream-model-1', choices: [{ index: 0, delta: { content: `${'x'.repeat(200)}${i}` }, finish_reason: null }] };
  return `data: ${JSON.stringify(chunk)}\n\n`;
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

/** What the flooding upstream did: bytes written, and when a write last completed. */
interface Flood {
  written: number;
  /** Since when the upstream's current write waits for 'drain'; -1 when it does not. */
  blockedSince: number;
  /** Longest time a finished wait for 'drain' took, ms. */
  longestBlockMs: number;
}

function newFlood(): Flood {
  return { written: 0, blockedSince: -1, longestBlockMs: 0 };
}

/** The longest the upstream's writes were held by backpressure, the current wait included. */
function heldMs(flood: Flood): number {
  return Math.max(flood.longestBlockMs, flood.blockedSince < 0 ? 0 : performance.now() - flood.blockedSince);
}

/**
 * "flood": a stream written as fast as the socket takes it, until the
 * connection closes; "big": a 12 MB JSON completion; anything else: a short stream.
 */
function floodingUpstream(flood: Flood): (req: UpstreamRequest, res: ServerResponse) => Promise<void> {
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
      const blockedAt = performance.now();
      flood.blockedSince = blockedAt;
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
      flood.longestBlockMs = Math.max(flood.longestBlockMs, performance.now() - blockedAt);
    }
  };
}

/** A client that sends its request and never reads a byte of the answer (over TLS when `ca` is given). */
function neverReadingClient(gw: TestGateway, body: unknown, ca?: Buffer): net.Socket {
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

async function accessLine(gw: TestGateway, index: number, boundMs: number): Promise<Record<string, unknown>> {
  const deadline = performance.now() + boundMs;
  for (;;) {
    const lines = gw.logs.filter((l) => l['msg'] === 'request');
    if (lines.length > index) return lines[index] as Record<string, unknown>;
    if (performance.now() > deadline) throw new Error(`no access-log line ${index} within ${boundMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The most bytes any socket of this process held in its read buffer (client
 * sockets: the gateway's upstream connections, whichever transport made them,
 * and the test's own client) or in its write buffer (the gateway's accepted
 * sockets), sampled until stop(). Socket buffers are where an unbounded
 * relay would pile up bytes.
 */
function sampleSocketBuffers(gw: TestGateway): { stop(): { readMax: number; writeMax: number } } {
  const clients: net.Socket[] = [];
  const accepted: net.Socket[] = [];
  const onClient = (message: unknown): void => void clients.push((message as { socket: net.Socket }).socket);
  const onAccepted = (socket: net.Socket): void => void accepted.push(socket);
  subscribe('net.client.socket', onClient);
  gw.gateway.server.on('connection', onAccepted);
  let readMax = 0;
  let writeMax = 0;
  const timer = setInterval(() => {
    for (const socket of clients) readMax = Math.max(readMax, socket.readableLength);
    for (const socket of accepted) writeMax = Math.max(writeMax, socket.writableLength);
  }, 25);
  return {
    stop() {
      clearInterval(timer);
      unsubscribe('net.client.socket', onClient);
      gw.gateway.server.off('connection', onAccepted);
      return { readMax, writeMax };
    },
  };
}

function metricsFor(target: { gw?: TestGateway }): GatewayMetrics {
  return createGatewayMetrics({
    targets: () => target.gw?.gateway.routes.health() ?? [],
    isKnownAlias: (alias) => target.gw !== undefined && Object.hasOwn(target.gw.gateway.config.aliases, alias),
    stateBackendUp: () => 1,
  });
}

for (const transport of ['fetch', 'node'] as const) {
  describe(`a client that never reads (transport ${transport})`, () => {
    let upstream: FakeUpstream;
    let gw: TestGateway;
    let flood: Flood;
    const target: { gw?: TestGateway } = {};
    const metrics = metricsFor(target);

    before(async () => {
      flood = newFlood();
      upstream = await startFakeUpstream(floodingUpstream(flood));
      gw = await startGateway({
        configValue: {
          limits: { writeStallTimeoutMs: STALL_MS },
          providers: { fake: { type: 'openai', baseUrl: upstream.baseUrl, transport, retry: { maxAttempts: 1 }, timeoutMs: 300_000, idleTimeoutMs: 300_000 } },
          aliases: { 'service-fake': { provider: 'fake', model: 'upstream-model-1' } },
          auto: { default: 'service-fake' },
        },
        keySettings: { limits: { concurrentRequests: 1 } },
        metrics,
      });
      target.gw = gw;
    });
    after(async () => {
      await gw.close();
      await upstream.close();
    });

    test('a stream: backpressure stops the upstream; after writeStallTimeoutMs the response is ended, the upstream aborted, the slot freed, logged and counted', async () => {
      const started = performance.now();
      const buffers = sampleSocketBuffers(gw);
      const client = neverReadingClient(gw, { model: 'service-fake', stream: true, messages: [{ role: 'user', content: 'flood' }] });
      try {
        const line = await accessLine(gw, 0, RELEASE_BOUND_MS);
        const releasedAfter = performance.now() - started;
        const held = heldMs(flood);
        const { readMax, writeMax } = buffers.stop();
        await upstream.aborted;
        assert.ok(releasedAfter >= STALL_MS, `released after ${releasedAfter} ms`);
        assert.equal(line['status'], 200);
        assert.equal(line['stream'], true);
        assert.equal(line['completed'], false);
        assert.equal(line['outcome'], 'client_write_stalled');
        assert.equal(line['clientGone'], true);
        assert.equal(line['keyId'], gw.keyId);
        // Backpressure reached the upstream: its writes were held for a good
        // part of the stall, and what it wrote is what the socket buffers on
        // the way hold (a few MB on loopback), not a stream's worth.
        assert.ok(held >= STALL_MS / 4, `the upstream's writes were held for at most ${held} ms`);
        assert.ok(flood.written < 48 * 1024 * 1024, `the upstream wrote ${flood.written} bytes`);
        // What the gateway held for the stalled stream in its socket buffers
        // (on Node 20, fetch's socket grew to 11 MB before undici-socket-reads.ts).
        assert.ok(readMax < BUFFER_BOUND_BYTES, `a socket's read buffer held ${readMax} bytes`);
        assert.ok(writeMax < BUFFER_BOUND_BYTES, `a socket's write buffer held ${writeMax} bytes`);
        assert.match(metrics.expose(), /^portcullis_client_write_stalls_total 1$/m);

        // The key's one concurrency slot is free again.
        const next = await postChat(gw, { model: 'service-fake', stream: true, messages: [{ role: 'user', content: 'short' }] });
        assert.equal(next.status, 200);
        assert.deepEqual(sseData(next.text).at(-1), '[DONE]');
      } finally {
        client.destroy();
      }
    });

    test('a 12 MB JSON answer: the response is ended after writeStallTimeoutMs, the slot freed, logged and counted', async () => {
      const before = gw.logs.filter((l) => l['msg'] === 'request').length;
      const client = neverReadingClient(gw, { model: 'service-fake', messages: [{ role: 'user', content: 'big' }] });
      try {
        const line = await accessLine(gw, before, RELEASE_BOUND_MS);
        assert.equal(line['status'], 200);
        assert.equal(line['stream'], false);
        assert.equal(line['completed'], false);
        assert.equal(line['clientGone'], true);
        assert.equal(line['outcome'], 'client_write_stalled');
        assert.match(metrics.expose(), /^portcullis_client_write_stalls_total 2$/m);
        const next = await postChat(gw, { model: 'service-fake', stream: true, messages: [{ role: 'user', content: 'short' }] });
        assert.equal(next.status, 200);
      } finally {
        client.destroy();
      }
    });
  });
}

test('issue 14: the upstream total timeout fires while the client does not read: the upstream is freed at the timeout, the response ended by the stall limit', async () => {
  const upstream = await startFakeUpstream(floodingUpstream(newFlood()));
  const gw = await startGateway({
    configValue: {
      limits: { writeStallTimeoutMs: 6000 },
      providers: { fake: { type: 'openai', baseUrl: upstream.baseUrl, transport: 'node', retry: { maxAttempts: 1 }, timeoutMs: 1000 } },
      aliases: { 'service-fake': { provider: 'fake', model: 'upstream-model-1' } },
      auto: { default: 'service-fake' },
    },
  });
  const started = performance.now();
  const client = neverReadingClient(gw, { model: 'service-fake', stream: true, messages: [{ role: 'user', content: 'flood' }] });
  try {
    await upstream.aborted;
    const abortedAfter = performance.now() - started;
    assert.ok(abortedAfter < 5000, `the upstream was aborted after ${abortedAfter} ms`);
    const line = await accessLine(gw, 0, RELEASE_BOUND_MS + 6000);
    // Not before the stall limit; timers may fire a little early against performance.now(), hence the slack.
    const endedAfter = performance.now() - started;
    assert.ok(endedAfter >= 5900, `the response ended after ${endedAfter} ms, before the 6000 ms stall limit`);
    assert.equal(line['outcome'], 'client_write_stalled');
    assert.equal(line['completed'], false);
  } finally {
    client.destroy();
    await gw.close();
    await upstream.close();
  }
});

test('a shutdown does not wait on a client that never reads past its drain deadline', async () => {
  const flood: Flood = newFlood();
  const upstream = await startFakeUpstream(floodingUpstream(flood));
  const gw = await startGateway({
    configValue: {
      limits: { writeStallTimeoutMs: 600_000 },
      providers: { fake: { type: 'openai', baseUrl: upstream.baseUrl, transport: 'node', retry: { maxAttempts: 1 } } },
      aliases: { 'service-fake': { provider: 'fake', model: 'upstream-model-1' } },
      auto: { default: 'service-fake' },
    },
  });
  const client = neverReadingClient(gw, { model: 'service-fake', stream: true, messages: [{ role: 'user', content: 'flood' }] });
  try {
    // Wait until the stream is open and the upstream is held.
    const deadline = performance.now() + RELEASE_BOUND_MS;
    while (heldMs(flood) < 300) {
      if (performance.now() > deadline) throw new Error('the stream never filled the buffers');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const started = performance.now();
    const report = await gw.gateway.shutdown(500);
    const took = performance.now() - started;
    assert.deepEqual(report, { finished: 0, endedWithError: 1, refused: 0 });
    // 500 ms of drain, then at most the shell's 2 s for the sockets to take their last bytes.
    assert.ok(took < 10_000, `the shutdown took ${took} ms`);
    const line = await accessLine(gw, 0, 1000);
    assert.equal(line['error'], 'server_shutting_down');
  } finally {
    client.destroy();
    await gw.close();
    await upstream.close();
  }
});

test('over a TLS listener: a stream whose client never reads is ended after writeStallTimeoutMs', async () => {
  const pki = createTestPki();
  const upstream = await startFakeUpstream(floodingUpstream(newFlood()));
  let gw: TestGateway | undefined;
  let client: net.Socket | undefined;
  try {
    const pair = pki.server('gateway');
    const material = loadListenerTls(null, 'listen.tls', { certFile: pair.certFile, keyFile: pair.keyFile, clientCaFile: null, clientAuth: 'none', minVersion: 'TLSv1.2' }, {});
    gw = await startGateway({
      configValue: {
        limits: { writeStallTimeoutMs: STALL_MS },
        providers: { fake: { type: 'openai', baseUrl: upstream.baseUrl, transport: 'node', retry: { maxAttempts: 1 } } },
        aliases: { 'service-fake': { provider: 'fake', model: 'upstream-model-1' } },
        auto: { default: 'service-fake' },
      },
      tls: material,
    });
    const started = performance.now();
    client = neverReadingClient(gw, { model: 'service-fake', stream: true, messages: [{ role: 'user', content: 'flood' }] }, pki.ca);
    const line = await accessLine(gw, 0, RELEASE_BOUND_MS);
    assert.ok(performance.now() - started >= STALL_MS);
    await upstream.aborted;
    assert.equal(line['status'], 200);
    assert.equal(line['outcome'], 'client_write_stalled');
    assert.equal(line['completed'], false);
  } finally {
    client?.destroy();
    await gw?.close();
    await upstream.close();
    pki.cleanup();
  }
});
