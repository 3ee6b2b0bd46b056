// The metrics listener's connections: idle ones cannot lock a scraper out.
// One address holds at most MAX_CONNECTIONS_PER_ADDRESS (the next gets the
// exact 503 bytes); with MAX_CONNECTIONS idle ones open from many addresses,
// a scrape still gets its 200, the connection silent longest closed for it; a
// connection that sends no request head is answered 408 and closed at the
// headers deadline; on TLS one that sends no byte is closed at the exact
// first-byte deadline (manual scheduler), and a TLS scrape is served.
import assert from 'node:assert/strict';
import type net from 'node:net';
import type { AddressInfo } from 'node:net';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { loadListenerTls } from '../../src/config/tls-files.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createMetricsListener, HEADERS_TIMEOUT_MS, MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS, type MetricsListenerOptions } from '../../src/metrics/metrics-listener.ts';
import { eventually, within } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { tlsRequest } from '../tls/https-client.ts';
import { createInProcessPki } from '../tls/in-process-pki.ts';
import type { TestPki } from '../tls/test-pki.ts';
import { ADDRESS_REFUSAL, connect, REFUSAL, type Raw } from '../http/connection-limit-fixtures.ts';

const TOKEN = 'f'.repeat(40);
const EXPOSITION = '# TYPE portcullis_up gauge\nportcullis_up 1\n';

interface Listening {
  server: http.Server;
  port: number;
  logs: Record<string, unknown>[];
  refused: () => number;
  reclaimed: () => number;
  /** The server's side of every connection, in the order accepted. */
  accepted: net.Socket[];
}

const servers: http.Server[] = [];
const clients: Raw[] = [];
let pki: TestPki;
before(() => {
  pki = createInProcessPki();
});
after(async () => {
  for (const raw of clients.splice(0)) raw.socket.destroy();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  pki.cleanup();
});

async function listen(options: Partial<MetricsListenerOptions> = {}): Promise<Listening> {
  const logs: Record<string, unknown>[] = [];
  let refused = 0;
  let reclaimed = 0;
  const server = createMetricsListener({
    expose: () => EXPOSITION,
    token: TOKEN,
    logger: createLogger({ write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) }),
    onConnectionRefused: () => refused++,
    onConnectionReclaimed: () => reclaimed++,
    ...options,
  });
  servers.push(server);
  const accepted: net.Socket[] = [];
  server.on('connection', (socket: net.Socket) => accepted.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, logs, refused: () => refused, reclaimed: () => reclaimed, accepted };
}

async function idle(port: number, from: string): Promise<Raw> {
  const raw = await connect(port, '', false, from);
  clients.push(raw);
  return raw;
}

function scrape(port: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/metrics', headers: { authorization: `Bearer ${TOKEN}` }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('the caps: 64 connections in all, 4 from one address', () => {
  assert.deepEqual([MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS, HEADERS_TIMEOUT_MS], [64, 4, 5000]);
});

test('one address holding its share of idle connections: the next from it gets the 503 bytes, a scraper elsewhere its 200', async () => {
  const s = await listen({ scheduler: new ManualScheduler() });
  for (let i = 0; i < MAX_CONNECTIONS_PER_ADDRESS; i++) await idle(s.port, '127.0.0.2');
  await eventually(() => s.accepted.length === MAX_CONNECTIONS_PER_ADDRESS, 'the idle connections accepted');
  const beyond = await idle(s.port, '127.0.0.2');
  assert.equal(await within(beyond.closed, 'the refused connection closed'), ADDRESS_REFUSAL);
  assert.equal(s.refused(), 1);
  assert.deepEqual(await scrape(s.port), { status: 200, body: EXPOSITION });
  const warn = s.logs.find((l) => String(l['msg']).startsWith('connection limit per address reached'));
  assert.deepEqual([warn?.['level'], warn?.['listener'], warn?.['maxConnectionsPerAddress']], ['warn', 'metrics', 4]);
});

test('the listener full of idle connections from many addresses: a scrape gets its 200, the connection silent longest answered 503 and closed for it', async () => {
  const s = await listen({ scheduler: new ManualScheduler() });
  const held: Raw[] = [];
  for (let i = 0; i < MAX_CONNECTIONS; i++) held.push(await idle(s.port, `127.0.1.${10 + Math.floor(i / MAX_CONNECTIONS_PER_ADDRESS)}`));
  await eventually(() => s.accepted.length === MAX_CONNECTIONS, 'the idle connections accepted');
  assert.deepEqual(await scrape(s.port), { status: 200, body: EXPOSITION });
  assert.equal(await within((held[0] as Raw).closed, 'the oldest idle connection closed'), REFUSAL);
  assert.equal((held[1] as Raw).socket.destroyed, false);
  assert.deepEqual([s.reclaimed(), s.refused()], [1, 0]);
  // Filled again, the next scrape takes the next oldest's place.
  await idle(s.port, '127.0.2.1');
  await eventually(() => s.accepted.length === MAX_CONNECTIONS + 2, 'the new idle connection accepted');
  assert.deepEqual(await scrape(s.port), { status: 200, body: EXPOSITION });
  assert.equal(await within((held[1] as Raw).closed, 'the next oldest closed'), REFUSAL);
  assert.equal((held[2] as Raw).socket.destroyed, false);
  assert.deepEqual([s.reclaimed(), s.refused()], [2, 0]);
  const warn = s.logs.find((l) => String(l['msg']).startsWith('connection limit reached: connections without a request in flight are closed'));
  assert.deepEqual([warn?.['level'], warn?.['listener'], warn?.['maxConnections']], ['warn', 'metrics', 64]);
});

test('a connection that sends no request head is answered 408 and closed at the headers deadline (node\'s timer: a short deadline, a generous bound)', async () => {
  const s = await listen({ headersTimeoutMs: 200 });
  assert.equal(s.server.headersTimeout, 200);
  const silent = await idle(s.port, '127.0.0.3');
  const text = await within(silent.closed, 'the silent connection closed', 10_000);
  assert.match(text, /^HTTP\/1\.1 408 Request Timeout\r\n/);
});

test('TLS: a connection that sends no byte is closed at the first-byte deadline, not before; a scrape over TLS is served', async () => {
  const pair = pki.server('metrics');
  const tls = loadListenerTls(null, 'metrics.tls', { certFile: pair.certFile, keyFile: pair.keyFile, clientCaFile: null, clientAuth: 'none', minVersion: 'TLSv1.2' }, {});
  const scheduler = new ManualScheduler();
  const s = await listen({ tls, scheduler, headersTimeoutMs: 3000 });
  assert.equal(s.server.headersTimeout, 3000);
  const silent = await idle(s.port, '127.0.0.4');
  await eventually(() => scheduler.pending().includes(3000), 'the first-byte deadline');
  const serverSide = s.accepted[0];
  assert.ok(serverSide !== undefined);
  await scheduler.advance(2999);
  assert.equal(serverSide.destroyed, false);
  await scheduler.advance(1);
  assert.equal(serverSide.destroyed, true);
  assert.equal(await within(silent.closed, 'the silent TLS connection closed'), '');
  const answer = await tlsRequest(`https://127.0.0.1:${s.port}/metrics`, { ca: pki.ca, headers: { authorization: `Bearer ${TOKEN}` } });
  assert.deepEqual([answer.status, answer.text], [200, EXPOSITION]);
});
