// The HTTP shell over TLS, as both listeners use it: certificates read by
// loadListenerTls; client certificates required (refused in the handshake) or
// optional (none: served; one that does not verify: 403 and the connection
// closes); the verified subject and fingerprint in the access log and never
// an unverified one; setTls swapping certificates while a stream is open.
import assert from 'node:assert/strict';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_LIMITS, type ListenerTlsConfig } from '../../src/config/config.ts';
import { loadListenerTls, type ListenerTlsMaterial } from '../../src/config/tls-files.ts';
import { sendJson } from '../../src/http/respond.ts';
import { createRouter } from '../../src/http/router.ts';
import { createHttpShell, type HttpShell } from '../../src/http/server.ts';
import type { RouteHandler } from '../../src/http/request-context.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createGate } from '../gateway/lifecycle-fixtures.ts';
import { eventually } from '../support/eventually.ts';
import { failureOf, sha256Of, tlsRequest, tlsStream } from '../tls/https-client.ts';
import { createTestPki, type IssuedPair, type TestPki } from '../tls/test-pki.ts';

let pki: TestPki;
let other: TestPki;
let first: IssuedPair;
let second: IssuedPair;
let alice: IssuedPair;
let expired: IssuedPair;
let foreign: IssuedPair;
const shells: HttpShell[] = [];

before(() => {
  pki = createTestPki();
  other = createTestPki('Another CA');
  first = pki.server('first');
  second = pki.server('second');
  alice = pki.client('alice', 'alice');
  expired = pki.client('expired', 'old-client', { days: -1 });
  foreign = pki.client('foreign', 'mallory', { issuer: other });
});
after(async () => {
  for (const shell of shells) {
    shell.server.closeAllConnections();
    await new Promise<void>((resolve) => shell.server.close(() => resolve()));
  }
  pki.cleanup();
  other.cleanup();
});

function material(pair: IssuedPair, clientAuth: ListenerTlsConfig['clientAuth']): ListenerTlsMaterial {
  const tls: ListenerTlsConfig = { certFile: pair.certFile, keyFile: pair.keyFile, clientCaFile: clientAuth === 'none' ? null : pki.caFile, clientAuth, minVersion: 'TLSv1.2' };
  return loadListenerTls(null, 'listen.tls', tls, {});
}

interface Started {
  shell: HttpShell;
  base: string;
  logs: Record<string, unknown>[];
  /** Requests the handlers saw. */
  handled: string[];
  /** GET /stream writes its first chunk, then waits for this gate. */
  gate: { wait: Promise<void>; open(): void };
}

async function start(clientAuth: ListenerTlsConfig['clientAuth']): Promise<Started> {
  const logs: Record<string, unknown>[] = [];
  const handled: string[] = [];
  const gate = createGate();
  const router = createRouter<RouteHandler>();
  router.add('GET', '/ok', async (ctx) => {
    handled.push(ctx.requestId);
    sendJson(ctx.res, 200, { ok: true });
  });
  router.add('GET', '/stream', async (ctx) => {
    handled.push(ctx.requestId);
    ctx.res.writeHead(200, { 'content-type': 'text/plain' });
    ctx.res.write('first|');
    await gate.wait;
    ctx.res.end('last');
  });
  const shell = createHttpShell({
    router,
    limits: DEFAULT_LIMITS,
    logger: createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) }),
    tls: material(first, clientAuth),
  });
  shells.push(shell);
  await new Promise<void>((resolve) => shell.server.listen(0, '127.0.0.1', resolve));
  return { shell, base: `https://127.0.0.1:${(shell.server.address() as AddressInfo).port}`, logs, handled, gate };
}

function accessLine(logs: Record<string, unknown>[], requestId: string): Record<string, unknown> {
  const line = logs.find((l) => l['msg'] === 'request' && l['requestId'] === requestId);
  assert.ok(line !== undefined, `no access line for ${requestId}`);
  return line;
}

function handshakeFailures(s: Started): Array<{ code: unknown; remote: unknown }> {
  return s.logs.filter((l) => l['msg'] === 'TLS handshake failed').map((l) => ({ code: l['code'], remote: l['remote'] }));
}

/** The fingerprint as the access log shows it: the first 8 bytes. */
function shortSha256(cert: Buffer): string {
  return sha256Of(cert).slice(0, 23);
}

const REFUSED_EXPIRED = {
  error: {
    message: 'The TLS client certificate was refused: it has expired (CERT_HAS_EXPIRED). Connect with a valid certificate, or without one.',
    type: 'permission_error',
    param: null,
    code: 'client_certificate_refused',
  },
};
const REFUSED_FOREIGN = {
  error: {
    message:
      'The TLS client certificate was refused: it is not issued by a certificate authority this server trusts (UNABLE_TO_VERIFY_LEAF_SIGNATURE). Connect with a valid certificate, or without one.',
    type: 'permission_error',
    param: null,
    code: 'client_certificate_refused',
  },
};

describe('a TLS listener without client certificates', () => {
  test('serves HTTPS with the configured certificate; the access line has no client fields', async () => {
    const s = await start('none');
    const res = await tlsRequest(`${s.base}/ok`, { ca: pki.ca, headers: { 'x-request-id': 'plain-1' } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { ok: true });
    assert.equal(res.serverSha256, sha256Of(first.cert));
    const line = accessLine(s.logs, 'plain-1');
    for (const field of ['clientSubject', 'clientCertSha256', 'clientCertError']) assert.equal(Object.hasOwn(line, field), false, field);
    // A client that does not trust the CA fails on its own side.
    assert.equal(await failureOf(tlsRequest(`${s.base}/ok`, { ca: other.ca })), 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  });

  test('minVersion TLSv1.3 refuses a TLS 1.2 client in the handshake', async () => {
    const tls: ListenerTlsConfig = { certFile: first.certFile, keyFile: first.keyFile, clientCaFile: null, clientAuth: 'none', minVersion: 'TLSv1.3' };
    const shell = createHttpShell({ router: createRouter<RouteHandler>(), limits: DEFAULT_LIMITS, logger: createLogger({ write: () => {} }), tls: loadListenerTls(null, 'listen.tls', tls, {}) });
    shells.push(shell);
    await new Promise<void>((resolve) => shell.server.listen(0, '127.0.0.1', resolve));
    const base = `https://127.0.0.1:${(shell.server.address() as AddressInfo).port}`;
    let refused: unknown;
    await tlsRequest(`${base}/ok`, { ca: pki.ca, maxVersion: 'TLSv1.2' }).catch((err: unknown) => (refused = err));
    assert.equal((refused as NodeJS.ErrnoException).code, 'EPROTO');
    assert.match((refused as Error).message, /alert protocol version/);
    assert.equal((await tlsRequest(`${base}/ok`, { ca: pki.ca })).status, 404);
  });
});

describe('clientAuth "required"', () => {
  let s: Started;
  before(async () => {
    s = await start('required');
  });

  test('no certificate: the handshake fails with the "certificate required" alert (TLS 1.3) or "handshake failure" (TLS 1.2)', async () => {
    assert.equal(await failureOf(tlsRequest(`${s.base}/ok`, { ca: pki.ca })), 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED');
    let tls12: unknown;
    await tlsRequest(`${s.base}/ok`, { ca: pki.ca, maxVersion: 'TLSv1.2' }).catch((err: unknown) => (tls12 = err));
    assert.equal((tls12 as NodeJS.ErrnoException).code, 'EPROTO');
    assert.match((tls12 as Error).message, /alert handshake failure/);
    assert.deepEqual(s.handled, []);
    await eventually(() => handshakeFailures(s).length >= 2, 'the handshake failure lines');
    assert.deepEqual(handshakeFailures(s), [
      { code: 'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE', remote: '127.0.0.1' },
      { code: 'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE', remote: '127.0.0.1' },
    ]);
  });

  test('a certificate from another CA, or an expired one: the server ends the connection after the handshake, no request is served', async () => {
    for (const pair of [foreign, expired]) {
      assert.equal(await failureOf(tlsRequest(`${s.base}/ok`, { ca: pki.ca, cert: pair.cert, key: pair.key })), 'ECONNRESET');
      assert.equal(await failureOf(tlsRequest(`${s.base}/ok`, { ca: pki.ca, cert: pair.cert, key: pair.key, maxVersion: 'TLSv1.2' })), 'ECONNRESET');
    }
    assert.deepEqual(s.handled, []);
    assert.equal(s.logs.filter((l) => l['msg'] === 'request').length, 0);
    // Each refusal is a debug line with the verification's reason (the socket is gone: no address).
    await eventually(() => handshakeFailures(s).length >= 6, 'the handshake failure lines');
    assert.deepEqual(handshakeFailures(s).slice(-4), [
      { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', remote: null },
      { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', remote: null },
      { code: 'CERT_HAS_EXPIRED', remote: null },
      { code: 'CERT_HAS_EXPIRED', remote: null },
    ]);
  });

  test('a valid certificate: served, and the access line names its subject and fingerprint', async () => {
    const res = await tlsRequest(`${s.base}/ok`, { ca: pki.ca, cert: alice.cert, key: alice.key, headers: { 'x-request-id': 'req-alice' } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { ok: true });
    const line = accessLine(s.logs, 'req-alice');
    assert.equal(line['clientSubject'], 'CN=alice');
    assert.equal(line['clientCertSha256'], shortSha256(alice.cert));
    assert.match(String(line['clientCertSha256']), /^([0-9A-F]{2}:){7}[0-9A-F]{2}$/);
    assert.equal(Object.hasOwn(line, 'clientCertError'), false);
  });
});

describe('clientAuth "optional"', () => {
  let s: Started;
  before(async () => {
    s = await start('optional');
  });

  test('no certificate: served; the access line has null client fields', async () => {
    const res = await tlsRequest(`${s.base}/ok`, { ca: pki.ca, headers: { 'x-request-id': 'opt-none' } });
    assert.equal(res.status, 200);
    const line = accessLine(s.logs, 'opt-none');
    assert.equal(line['clientSubject'], null);
    assert.equal(line['clientCertSha256'], null);
  });

  test('a valid certificate: served with its subject in the access line', async () => {
    const res = await tlsRequest(`${s.base}/ok`, { ca: pki.ca, cert: alice.cert, key: alice.key, headers: { 'x-request-id': 'opt-alice' } });
    assert.equal(res.status, 200);
    assert.equal(accessLine(s.logs, 'opt-alice')['clientSubject'], 'CN=alice');
  });

  test('a certificate that does not verify: 403 client_certificate_refused, the connection closes, and its subject is never logged', async () => {
    const handledBefore = s.handled.length;
    for (const [pair, id, body, reason] of [
      [expired, 'opt-expired', REFUSED_EXPIRED, 'CERT_HAS_EXPIRED'],
      [foreign, 'opt-foreign', REFUSED_FOREIGN, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'],
    ] as const) {
      const res = await tlsRequest(`${s.base}/ok`, { ca: pki.ca, cert: pair.cert, key: pair.key, headers: { 'x-request-id': id } });
      assert.equal(res.status, 403);
      assert.equal(res.headers['content-type'], 'application/json');
      assert.equal(res.headers['connection'], 'close');
      assert.deepEqual(res.json(), body);
      const line = accessLine(s.logs, id);
      assert.equal(line['status'], 403);
      assert.equal(line['error'], 'client_certificate_refused');
      assert.equal(line['clientCertError'], reason);
      assert.equal(line['clientSubject'], null);
      assert.equal(line['clientCertSha256'], null);
    }
    // A server's certificate (extendedKeyUsage serverAuth only) is not one a client may use.
    const misused = await tlsRequest(`${s.base}/ok`, { ca: pki.ca, cert: second.cert, key: second.key, headers: { 'x-request-id': 'opt-misused' } });
    assert.equal(misused.status, 403);
    assert.equal(
      (misused.json() as { error: { message: string } }).error.message,
      'The TLS client certificate was refused: it is not made for client authentication (its extendedKeyUsage lacks clientAuth) (INVALID_PURPOSE). Connect with a valid certificate, or without one.',
    );
    assert.equal(accessLine(s.logs, 'opt-misused')['clientCertError'], 'INVALID_PURPOSE');
    assert.equal(s.handled.length, handledBefore, 'no handler ran');
    const all = JSON.stringify(s.logs);
    assert.equal(all.includes('mallory'), false);
    assert.equal(all.includes('old-client'), false);
  });
});

describe('setTls: certificates swapped on a running listener', () => {
  test('an open stream finishes intact on the old certificate; new connections get the new one', async () => {
    const s = await start('optional');
    const open = tlsStream(`${s.base}/stream`, { ca: pki.ca, cert: alice.cert, key: alice.key, headers: { 'x-request-id': 'swap-stream' } });
    await open.firstBytes;

    s.shell.setTls(material(second, 'optional'));
    const fresh = await tlsRequest(`${s.base}/ok`, { ca: pki.ca, cert: alice.cert, key: alice.key });
    assert.equal(fresh.status, 200);
    assert.equal(fresh.serverSha256, sha256Of(second.cert));
    assert.notEqual(sha256Of(second.cert), sha256Of(first.cert));

    s.gate.open();
    const streamed = await open.answer;
    assert.equal(streamed.status, 200);
    assert.equal(streamed.text, 'first|last');
    assert.equal(streamed.serverSha256, sha256Of(first.cert));
    const line = accessLine(s.logs, 'swap-stream');
    assert.equal(line['completed'], true);
    assert.equal(line['clientSubject'], 'CN=alice');
  });

  test('new client CAs apply to new connections: a client of the new CA is verified, one of the old CA refused', async () => {
    const s = await start('optional');
    const tls: ListenerTlsConfig = { certFile: first.certFile, keyFile: first.keyFile, clientCaFile: other.caFile, clientAuth: 'optional', minVersion: 'TLSv1.2' };
    s.shell.setTls(loadListenerTls(null, 'listen.tls', tls, {}));
    const theirs = await tlsRequest(`${s.base}/ok`, { ca: pki.ca, cert: foreign.cert, key: foreign.key, headers: { 'x-request-id': 'ca-foreign' } });
    assert.equal(theirs.status, 200);
    assert.equal(accessLine(s.logs, 'ca-foreign')['clientSubject'], 'CN=mallory');
    const ours = await tlsRequest(`${s.base}/ok`, { ca: pki.ca, cert: alice.cert, key: alice.key });
    assert.equal(ours.status, 403);
  });

  test('a TLS session resumed before a swap keeps its verified client; after the swap it is not resumed, the client is verified against the new CA', async () => {
    const s = await start('optional');
    // keepAlive off: each request a new connection, resuming the session the agent cached.
    const agent = new https.Agent({ ca: pki.ca, cert: alice.cert, key: alice.key, keepAlive: false });
    const get = (id: string): Promise<{ status: number; reused: boolean }> =>
      new Promise((resolve, reject) => {
        const req = https.request(`${s.base}/ok`, { agent, headers: { 'x-request-id': id } }, (res) => {
          const reused = (res.socket as TLSSocket).isSessionReused();
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, reused }));
        });
        req.on('error', reject);
        req.end();
      });
    assert.deepEqual(await get('resume-1'), { status: 200, reused: false });
    assert.deepEqual(await get('resume-2'), { status: 200, reused: true });
    assert.equal(accessLine(s.logs, 'resume-2')['clientSubject'], 'CN=alice');

    const tls: ListenerTlsConfig = { certFile: first.certFile, keyFile: first.keyFile, clientCaFile: other.caFile, clientAuth: 'optional', minVersion: 'TLSv1.2' };
    s.shell.setTls(loadListenerTls(null, 'listen.tls', tls, {}));
    assert.deepEqual(await get('resume-3'), { status: 403, reused: false });
    // The client sends its chain up to the CA it trusts itself, a root the listener no longer trusts.
    assert.equal(accessLine(s.logs, 'resume-3')['clientCertError'], 'SELF_SIGNED_CERT_IN_CHAIN');
    agent.destroy();
  });

  test('a listener started without TLS refuses setTls (adding TLS needs a restart)', () => {
    const plain = createHttpShell({ router: createRouter<RouteHandler>(), limits: DEFAULT_LIMITS, logger: createLogger({ write: () => {} }) });
    assert.throws(() => plain.setTls(material(first, 'none')), { message: 'this listener was started without TLS; adding TLS needs a restart' });
  });
});
