// Regression, "on a TLS listener, handshakes that never finish do the same":
// limits.maxConnections 50 on a TLS listener (its certificate from openssl,
// test/tls/test-pki.ts), one address holding 60 connections that never send a
// ClientHello and re-opening each as soon as it is closed, while four other
// addresses complete handshakes and ask 25 times each on new connections. The
// share served is printed as a diagnostic. The plain listener:
// connection-fairness.test.ts.
//
// A request in flight on a TLS connection must keep it from being reclaimed:
// node hands the request the TLS socket, whose TCP socket (its _parent) is
// the one the table tracks, so a flood pins that lookup.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, test } from 'node:test';
import tls from 'node:tls';
import { loadListenerTls } from '../../src/config/tls-files.ts';
import { createTestPki } from '../tls/test-pki.ts';
import { eventually, within } from '../support/eventually.ts';
import { closeShells, HOLD_REQUEST, start } from './connection-limit-fixtures.ts';
import { flood, share } from './connection-flood.ts';

const pki = createTestPki();
after(async () => {
  await closeShells();
  pki.cleanup();
});

const CLIENTS = ['127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6'];

function tlsMaterial() {
  const pair = pki.server('fairness');
  return loadListenerTls(null, 'listen.tls', { certFile: pair.certFile, keyFile: pair.keyFile, clientCaFile: null, clientAuth: 'none', minVersion: 'TLSv1.2' }, {});
}

test('TLS, one address floods with unfinished handshakes, the default share: every other client is answered', { timeout: 90_000 }, async (t) => {
  const s = await start({ maxConnections: 50 }, { tls: tlsMaterial() });
  const result = await flood({ port: s.port, flooders: ['127.0.0.2'], held: 60, clients: CLIENTS, requests: 25, tlsCa: pki.ca, flooded: () => s.shell.openConnections === 8 });
  t.diagnostic(`served ${share(result)}; failures ${JSON.stringify(result.failures)}; flooder connections ${result.flooderConnections}`);
  assert.deepEqual(result.failures, {});
  assert.equal(result.served, 100);
  assert.ok(s.refused() > 0, 'the flooder was refused beyond its share');
});

test('TLS, two addresses flood with unfinished handshakes, a share as large as the cap: the handshakes that never finish give way, the others are answered', { timeout: 90_000 }, async (t) => {
  const s = await start({ maxConnections: 50, maxConnectionsPerAddress: 50 }, { tls: tlsMaterial() });
  const result = await flood({ port: s.port, flooders: ['127.0.0.2', '127.0.0.7'], held: 60, clients: CLIENTS, requests: 25, tlsCa: pki.ca, flooded: () => s.shell.openConnections === 50 });
  t.diagnostic(`served ${share(result)}; failures ${JSON.stringify(result.failures)}; flooder connections ${result.flooderConnections}; reclaimed ${s.reclaimed()}`);
  // A client's connection is reclaimable until its request arrives (a handshake and a request
  // on TLS); the flooders would have to open 50 connections in that time.
  assert.ok(result.served >= 90, share(result));
  assert.ok(s.reclaimed() > 100, `unfinished handshakes were reclaimed: ${s.reclaimed()}`);
});

test('TLS, a share as large as the cap: a request in flight while two addresses flood is never reclaimed and is answered 200 once released', { timeout: 90_000 }, async () => {
  const s = await start({ maxConnections: 50, maxConnectionsPerAddress: 50 }, { tls: tlsMaterial() });
  let text = '';
  const holder = tls.connect({ socket: net.connect({ port: s.port, host: '127.0.0.1', localAddress: '127.0.0.3' }), ca: pki.ca, servername: 'localhost' }, () => holder.write(HOLD_REQUEST));
  holder.setEncoding('latin1');
  holder.on('data', (chunk: string) => (text += chunk));
  holder.on('error', () => {});
  const closed = new Promise<void>((resolve) => holder.on('close', () => resolve()));
  await eventually(() => s.holding() === 1, 'the /hold request to reach its handler');
  await flood({
    port: s.port,
    flooders: ['127.0.0.2', '127.0.0.7'],
    held: 60,
    clients: [],
    requests: 0,
    tlsCa: pki.ca,
    flooded: () => s.shell.openConnections === 50,
    during: async () => {
      // The holder is the oldest connection: were it reclaimable, it would have been the first to go.
      await eventually(() => s.reclaimed() > 100, 'the flooders to push each other out');
      assert.equal(holder.destroyed, false, 'the connection with a request in flight is open');
      s.release();
      await eventually(() => text.endsWith('{"held":true}'), 'the held answer');
    },
  });
  assert.match(text, /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n\{"held":true\}$/);
  holder.destroy();
  await within(closed, 'the holder to close');
});
