// A client that stops reading, over a TLS listener, on the real clock: the
// write-stall sweep judges a TLS socket by completed writes alone (its handle
// reports no write queue), and the stall ends the stream after
// limits.writeStallTimeoutMs of real time. The certificate comes from openssl
// (test/tls/test-pki.ts). The plain-TCP cases, with exact deadlines on a
// manual scheduler: slow-clients.test.ts.
import assert from 'node:assert/strict';
import type net from 'node:net';
import { test } from 'node:test';
import { loadListenerTls } from '../../src/config/tls-files.ts';
import { within } from '../support/eventually.ts';
import { createTestPki } from '../tls/test-pki.ts';
import { startFakeUpstream, startGateway, type TestGateway } from './harness.ts';
import { accessLine, floodingUpstream, neverReadingClient, newFlood } from './slow-clients-fixtures.ts';

const STALL_MS = 2000;

test('over a TLS listener: a stream whose client never reads is ended after writeStallTimeoutMs of real time, the upstream aborted', async () => {
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
    const line = await accessLine(gw, 0);
    // The sweep reads performance.now(): the stall cannot be seen before the limit has passed since the request.
    const endedAfter = performance.now() - started;
    assert.ok(endedAfter >= STALL_MS, `ended after ${endedAfter} ms`);
    await within(upstream.aborted, 'the upstream request to be aborted');
    assert.deepEqual([line['status'], line['stream'], line['outcome'], line['completed'], line['clientGone']], [200, true, 'client_write_stalled', false, true]);
    assert.ok((line['totalMs'] as number) >= STALL_MS, `totalMs ${String(line['totalMs'])}`);
  } finally {
    client?.destroy();
    await gw?.close();
    await upstream.close();
    pki.cleanup();
  }
});
