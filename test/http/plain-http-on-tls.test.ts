// Plain HTTP sent to a TLS listener: a 400 in plain HTTP saying to use
// https://, a log line, the connection closed; TLS clients are served as
// before, the TLS record's first byte handed on to the handshake; a connection
// that sends nothing is closed at the handshake's deadline.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadListenerTls, type ListenerTlsMaterial } from '../../src/config/tls-files.ts';
import { plainHttpAnswer } from '../../src/http/plain-http-on-tls.ts';
import { eventually } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { tlsRequest } from '../tls/https-client.ts';
import { createInProcessPki } from '../tls/in-process-pki.ts';
import type { TestPki } from '../tls/test-pki.ts';
import { closeShells, connect, OK_REQUEST, start } from './connection-limit-fixtures.ts';

const ANSWER =
  'HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 154\r\nconnection: close\r\n\r\n' +
  '{"error":{"message":"This port speaks TLS: use https:// instead of http://.","type":"invalid_request_error","param":null,"code":"plain_http_on_tls_port"}}';

let pki: TestPki;
let material: ListenerTlsMaterial;
before(() => {
  pki = createInProcessPki();
  const pair = pki.server('plain-http');
  material = loadListenerTls(null, 'listen.tls', { certFile: pair.certFile, keyFile: pair.keyFile, clientCaFile: null, clientAuth: 'none', minVersion: 'TLSv1.2' }, {});
});
after(async () => {
  await closeShells();
  pki.cleanup();
});

describe('a TLS listener', () => {
  test('plain HTTP gets a 400 in plain HTTP saying to use https://, a log line, and the connection closes', async () => {
    const { port, logs } = await start({}, { tls: material });
    const raw = await connect(port, OK_REQUEST);
    assert.equal(await raw.closed, ANSWER);
    const line = logs.find((l) => l['msg'] === 'plain HTTP on a TLS port');
    assert.deepEqual({ level: line?.['level'], listener: line?.['listener'], remoteAddress: line?.['remoteAddress'] }, { level: 'info', listener: 'api', remoteAddress: '127.0.0.1' });
  });

  test('plain HTTP arriving a byte at a time gets the same answer', async () => {
    const { port } = await start({}, { tls: material });
    const raw = await connect(port, 'G');
    await eventually(() => raw.text() !== '' || raw.socket.destroyed, 'the answer to the first byte');
    raw.socket.write('ET /ok HTTP/1.1\r\n');
    assert.equal(await raw.closed, ANSWER);
  });

  test('a TLS client is served as before', async () => {
    const { port, logs } = await start({}, { tls: material });
    const answer = await tlsRequest(`https://127.0.0.1:${port}/ok`, { ca: pki.ca });
    assert.deepEqual({ status: answer.status, body: answer.json() }, { status: 200, body: { ok: true } });
    assert.equal(logs.some((l) => l['msg'] === 'plain HTTP on a TLS port'), false);
  });

  test('a connection that sends nothing is closed at the handshake deadline, not before', async () => {
    const scheduler = new ManualScheduler();
    const { port, accepted } = await start({ headersTimeoutMs: 7000 }, { tls: material, scheduler });
    const raw = await connect(port);
    await eventually(() => scheduler.pending().includes(7000), 'the first-byte deadline');
    const serverSide = accepted[0];
    assert.ok(serverSide !== undefined);
    await scheduler.advance(6999);
    // The server's side: destroy() marks it at once, whatever the client has seen yet.
    assert.equal(serverSide.destroyed, false);
    await scheduler.advance(1);
    assert.equal(serverSide.destroyed, true);
    assert.equal(await raw.closed, '');
  });
});

test('the answer carries the listener headers (the admin listener security headers)', () => {
  const text = plainHttpAnswer('x-frame-options: DENY\r\n').toString('latin1');
  assert.equal(text, ANSWER.replace('connection: close', 'x-frame-options: DENY\r\nconnection: close'));
});
