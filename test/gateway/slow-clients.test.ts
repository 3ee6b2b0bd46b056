// Clients that stop reading. A fake upstream streams as fast as its socket
// takes; a raw client socket sends its request and never reads. Backpressure
// must reach the upstream (its writes block), and after
// limits.writeStallTimeoutMs the gateway ends the response: the socket goes,
// the upstream request is aborted, the key's concurrency slot comes back, the
// access-log line says so and a metric counts it. On both upstream transports.
// The gateway runs on a manual scheduler: once the client's connection is
// saturated, the stall is asserted at its exact moment (the first sweep, a
// quarter of the limit after the request, sees the bytes wait; the limit runs
// from there). The real clock and a TLS listener: slow-clients.system.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { GatewayMetrics } from '../../src/metrics/gateway-metrics.ts';
import { within } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { postChat, sseData, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from './harness.ts';
import { accessLine, floodingUpstream, metricsFor, neverReadingClient, newFlood, nextAccepted, sampleSocketBuffers, saturated, type Flood } from './slow-clients-fixtures.ts';

const STALL_MS = 2000;
/** The sweep runs every STALL_MS / 4: the one at 500 sees the bytes wait, the stall is due 2000 later. */
const STALLED_AT_MS = 2500;
/** The goal for what the gateway holds in a stalled stream's socket buffers. */
const BUFFER_BOUND_BYTES = 1024 * 1024;

interface Setup {
  upstream: FakeUpstream;
  gw: TestGateway;
  flood: Flood;
  scheduler: ManualScheduler;
  metrics: GatewayMetrics;
}

async function setUp(transport: 'fetch' | 'node', limits: Record<string, unknown>, provider: Record<string, unknown> = {}): Promise<Setup> {
  const flood = newFlood();
  const scheduler = new ManualScheduler();
  const target: { gw?: TestGateway } = {};
  const metrics = metricsFor(target);
  const upstream = await startFakeUpstream(floodingUpstream(flood));
  const gw = await startGateway({
    configValue: {
      limits,
      providers: { fake: { type: 'openai', baseUrl: upstream.baseUrl, transport, retry: { maxAttempts: 1 }, timeoutMs: 300_000, idleTimeoutMs: 300_000, ...provider } },
      aliases: { 'service-fake': { provider: 'fake', model: 'upstream-model-1' } },
      auto: { default: 'service-fake' },
    },
    keySettings: { limits: { concurrentRequests: 1 } },
    metrics,
    scheduler,
  });
  target.gw = gw;
  return { upstream, gw, flood, scheduler, metrics };
}

async function tearDown(s: Setup): Promise<void> {
  await s.gw.close();
  await s.upstream.close();
}

for (const transport of ['fetch', 'node'] as const) {
  test(`a stream whose client never reads (transport ${transport}): backpressure stops the upstream; at the stall deadline the response is ended, the upstream aborted, the slot freed, logged and counted`, async () => {
    const s = await setUp(transport, { writeStallTimeoutMs: STALL_MS });
    const { gw, flood, scheduler } = s;
    const buffers = sampleSocketBuffers(gw);
    const accepted = nextAccepted(gw);
    const client = neverReadingClient(gw, { model: 'service-fake', stream: true, messages: [{ role: 'user', content: 'flood' }] });
    try {
      const socket = await accepted;
      await saturated(socket);
      await scheduler.advance(STALLED_AT_MS - 1);
      assert.equal(socket.destroyed, false, 'ended before the stall deadline');
      // Backpressure reached the upstream: its write waits for the gateway to read.
      assert.ok(flood.blockedSince >= 0, 'the upstream writes on unhindered');
      await scheduler.advance(1);
      assert.equal(socket.destroyed, true, 'not ended at the stall deadline');
      const line = await accessLine(gw, 0);
      await within(s.upstream.aborted, 'the upstream request to be aborted');
      const { readMax, writeMax } = buffers.stop();
      assert.deepEqual(
        [line['status'], line['stream'], line['completed'], line['outcome'], line['clientGone'], line['keyId'], line['ttfbMs'], line['totalMs']],
        [200, true, false, 'client_write_stalled', true, gw.keyId, 0, STALLED_AT_MS],
      );
      // What the upstream wrote is what the socket buffers on the way hold (a few MB on loopback), not a stream's worth.
      assert.ok(flood.written < 48 * 1024 * 1024, `the upstream wrote ${flood.written} bytes`);
      // What the gateway held for the stalled stream in its socket buffers
      // (on Node 20, fetch's socket grew to 11 MB before undici-socket-reads.ts).
      assert.ok(readMax < BUFFER_BOUND_BYTES, `a socket's read buffer held ${readMax} bytes`);
      assert.ok(writeMax < BUFFER_BOUND_BYTES, `a socket's write buffer held ${writeMax} bytes`);
      assert.match(s.metrics.expose(), /^portcullis_client_write_stalls_total 1$/m);

      // The key's one concurrency slot is free again.
      const next = await postChat(gw, { model: 'service-fake', stream: true, messages: [{ role: 'user', content: 'short' }] });
      assert.equal(next.status, 200);
      assert.deepEqual(sseData(next.text).at(-1), '[DONE]');
    } finally {
      buffers.stop();
      client.destroy();
      await tearDown(s);
    }
  });

  test(`a 12 MB JSON answer whose client never reads (transport ${transport}): ended at the stall deadline, the slot freed, logged and counted`, async () => {
    const s = await setUp(transport, { writeStallTimeoutMs: STALL_MS });
    const { gw, scheduler } = s;
    const accepted = nextAccepted(gw);
    const client = neverReadingClient(gw, { model: 'service-fake', messages: [{ role: 'user', content: 'big' }] });
    try {
      const socket = await accepted;
      await saturated(socket);
      await scheduler.advance(STALLED_AT_MS - 1);
      assert.equal(socket.destroyed, false, 'ended before the stall deadline');
      await scheduler.advance(1);
      assert.equal(socket.destroyed, true, 'not ended at the stall deadline');
      const line = await accessLine(gw, 0);
      assert.deepEqual(
        [line['status'], line['stream'], line['completed'], line['clientGone'], line['outcome'], line['totalMs']],
        [200, false, false, true, 'client_write_stalled', STALLED_AT_MS],
      );
      assert.match(s.metrics.expose(), /^portcullis_client_write_stalls_total 1$/m);
      const next = await postChat(gw, { model: 'service-fake', stream: true, messages: [{ role: 'user', content: 'short' }] });
      assert.equal(next.status, 200);
    } finally {
      client.destroy();
      await tearDown(s);
    }
  });
}

test('the upstream total timeout fires while the client does not read: the upstream is freed at the timeout, the response ended by the stall limit, not before', async () => {
  // The sweep runs every second: the one at 1000 sees the bytes wait, the stall is due at 7000.
  const s = await setUp('node', { writeStallTimeoutMs: 6000 }, { timeoutMs: 1000 });
  const { gw, scheduler } = s;
  const accepted = nextAccepted(gw);
  const client = neverReadingClient(gw, { model: 'service-fake', stream: true, messages: [{ role: 'user', content: 'flood' }] });
  try {
    const socket = await accepted;
    await saturated(socket);
    await scheduler.advance(1000);
    await within(s.upstream.aborted, 'the upstream request to be aborted at its total timeout');
    await scheduler.advance(5999);
    assert.equal(socket.destroyed, false, 'ended before the stall deadline');
    assert.equal(gw.logs.filter((l) => l['msg'] === 'request').length, 0);
    await scheduler.advance(1);
    assert.equal(socket.destroyed, true, 'not ended at the stall deadline');
    const line = await accessLine(gw, 0);
    assert.deepEqual([line['outcome'], line['completed'], line['totalMs']], ['client_write_stalled', false, 7000]);
  } finally {
    client.destroy();
    await tearDown(s);
  }
});

test('a shutdown does not wait on a client that never reads past its drain deadline and the sockets’ grace', async () => {
  const s = await setUp('node', { writeStallTimeoutMs: 600_000 });
  const { gw, scheduler } = s;
  const accepted = nextAccepted(gw);
  const client = neverReadingClient(gw, { model: 'service-fake', stream: true, messages: [{ role: 'user', content: 'flood' }] });
  try {
    const socket = await accepted;
    await saturated(socket);
    let report: unknown = null;
    void gw.gateway.shutdown(500).then((r) => (report = r));
    await scheduler.advance(499);
    assert.equal(socket.destroyed, false);
    assert.equal(gw.gateway.inFlight, 1);
    // At the deadline the stream is ended with an error frame the client never takes;
    // the socket gets 2 s to deliver it, then every connection is closed.
    await scheduler.advance(1);
    await scheduler.advance(1999);
    assert.equal(report, null);
    assert.equal(socket.destroyed, false);
    await scheduler.advance(1);
    await within(gw.gateway.shutdown(500), 'the shutdown');
    assert.deepEqual(report, { finished: 0, endedWithError: 1, refused: 0 });
    const line = await accessLine(gw, 0);
    assert.deepEqual([line['error'], line['completed'], line['totalMs']], ['server_shutting_down', false, 2500]);
  } finally {
    client.destroy();
    await tearDown(s);
  }
});
