// limits.maxConnections on a TLS listener (its certificate from openssl,
// test/tls/test-pki.ts): beyond the cap, every connection busy, it closes the
// new connection before any handshake and serves the open one; a client that never finishes its
// handshake is closed by node's own headers timeout, freeing its place. The
// plain listener's cases: connection-limit.test.ts.
import assert from 'node:assert/strict';
import tls from 'node:tls';
import { after, test } from 'node:test';
import { loadListenerTls } from '../../src/config/tls-files.ts';
import { eventually } from '../support/eventually.ts';
import { createTestPki } from '../tls/test-pki.ts';
import net from 'node:net';
import { closeShells, connect, HOLD_REQUEST, start } from './connection-limit-fixtures.ts';

const pki = createTestPki();
after(async () => {
  await closeShells();
  pki.cleanup();
});

function tlsMaterial() {
  const pair = pki.server('limit');
  return loadListenerTls(null, 'listen.tls', { certFile: pair.certFile, keyFile: pair.keyFile, clientCaFile: null, clientAuth: 'none', minVersion: 'TLSv1.2' }, {});
}

test('a TLS listener beyond maxConnections, its connection busy, closes the new one before any handshake; the open one is served', async () => {
  const s = await start({ maxConnections: 1 }, { tls: tlsMaterial() });
  const holder = tls.connect({ port: s.port, host: '127.0.0.1', ca: pki.ca, servername: 'localhost' });
  await new Promise<void>((resolve, reject) => holder.once('secureConnect', resolve).once('error', reject));
  let text = '';
  holder.setEncoding('latin1');
  holder.on('data', (chunk: string) => (text += chunk));
  holder.write(HOLD_REQUEST);
  await eventually(() => s.holding() === 1, 'the held request');
  const failure = await new Promise<Error>((resolve, reject) => {
    const refused = tls.connect({ socket: net.connect({ port: s.port, host: '127.0.0.1', localAddress: '127.0.0.9' }), ca: pki.ca, servername: 'localhost' });
    refused.once('secureConnect', () => reject(new Error('the refused connection completed a handshake')));
    refused.once('error', resolve);
  });
  assert.match(String((failure as NodeJS.ErrnoException).code), /^(ECONNRESET|EPIPE)$/);
  assert.equal(s.refused(), 1);
  s.release();
  await eventually(() => text.endsWith('{"held":true}'), 'the answer on the open TLS connection');
  assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
  holder.destroy();
});

test('a TLS client that never finishes its handshake is closed after headersTimeoutMs, freeing its place (it was held open: an HTTP 400 was written into the handshake)', async () => {
  // Node's own handshake and headers timers: the real clock is the point here.
  const s = await start({ maxConnections: 1, headersTimeoutMs: 1000, requestTimeoutMs: 1000 }, { tls: tlsMaterial() });
  const started = Date.now();
  const stalled = await connect(s.port);
  assert.equal(s.shell.openConnections, 1);
  assert.equal(await stalled.closed, '');
  assert.ok(Date.now() - started < 10_000, `closed after ${Date.now() - started} ms`);
  await eventually(() => s.shell.openConnections === 0, 'the place to be freed');
  // A handshake that failed is no HTTP answer: no access line (and no HTTP bytes written into the handshake).
  assert.deepEqual(s.logs.filter((l) => l['msg'] === 'request'), []);
});
