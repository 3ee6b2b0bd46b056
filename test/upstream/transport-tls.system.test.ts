// TLS to an upstream, both transports: a fake HTTPS upstream signed by a
// private test CA (test/tls/test-pki.ts). fetch knows only Node's built-in
// roots, so it fails with upstream_tls_failed; node with the CA file succeeds.
// Client certificates, the server name and the minimum version are node's only
// (the config check refuses them with fetch).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TLSSocket } from 'node:tls';
import type { TlsClientConfig } from '../../src/config/config.ts';
import { loadClientTls, type ClientTlsMaterial } from '../../src/config/tls-files.ts';
import { catalogueEntry } from '../../src/errors/catalogue.ts';
import { failureCauseOf } from '../../src/upstream/failure-cause.ts';
import { createFetchTransport } from '../../src/upstream/fetch-transport.ts';
import { createNodeTransport } from '../../src/upstream/node-transport.ts';
import { classifyFailure, FailureClass } from '../../src/upstream/retry-policy.ts';
import { upstreamProxyFailedError, upstreamTlsFailedError } from '../../src/upstream/upstream-errors.ts';
import { createTestPki, type TestPki } from '../tls/test-pki.ts';
import { answer, call, collect, failure, provider, rendered, startUpstream, type TestUpstream } from './transport-fixtures.ts';

const TLS_FAILED = {
  status: 502,
  code: 'upstream_tls_failed',
  message: 'The TLS connection to the upstream provider failed. This is a gateway configuration problem.',
};

let pki: TestPki;
let other: TestPki;
let upstream: TestUpstream;
/** Requires a client certificate from pki's CA. */
let mutual: TestUpstream;
/** TLS 1.2 at most. */
let old: TestUpstream;
/** A certificate for upstream.internal only. */
let named: TestUpstream;
const clientSubjects: string[] = [];

before(async () => {
  pki = createTestPki();
  other = createTestPki('Another Test CA');
  const server = pki.server('upstream');
  upstream = await startUpstream(answer, { cert: server.cert, key: server.key });
  mutual = await startUpstream((req, res) => {
    clientSubjects.push(String((req.socket as TLSSocket).getPeerCertificate().subject?.CN));
    answer(req, res);
  }, { cert: server.cert, key: server.key, ca: pki.ca, requestCert: true, rejectUnauthorized: true });
  old = await startUpstream(answer, { cert: server.cert, key: server.key, maxVersion: 'TLSv1.2' });
  const internal = pki.server('internal', ['upstream.internal']);
  named = await startUpstream(answer, { cert: internal.cert, key: internal.key });
});

after(async () => {
  await Promise.all([upstream.close(), mutual.close(), old.close(), named.close()]);
  pki.cleanup();
  other.cleanup();
});

/** The material the serving state would load from these files. */
function material(tls: Partial<TlsClientConfig>): ClientTlsMaterial {
  return loadClientTls(null, 'providers.up.tls', { caFile: null, certFile: null, keyFile: null, serverName: null, minVersion: 'TLSv1.2', ...tls }, process.env);
}

async function assertTlsFailure(attempt: Promise<unknown>, detail: RegExp): Promise<void> {
  const error = await failure(attempt);
  assert.deepEqual(rendered(error), TLS_FAILED);
  const cause = failureCauseOf(error);
  assert.equal(cause.kind, 'tls');
  assert.match(cause.detail, detail);
}

describe('an upstream signed by a private CA', () => {
  test('fetch (Node\'s roots only) fails with upstream_tls_failed, logged as tls', async () => {
    const p = provider(createFetchTransport(), upstream.baseUrl);
    await assertTlsFailure(p.complete(call()), /^UNABLE_TO_VERIFY_LEAF_SIGNATURE$/);
    await assertTlsFailure(collect(p.stream(call(true))), /^UNABLE_TO_VERIFY_LEAF_SIGNATURE$/);
  });

  test('node without caFile fails the same way', async () => {
    await assertTlsFailure(provider(createNodeTransport(), upstream.baseUrl).complete(call()), /^UNABLE_TO_VERIFY_LEAF_SIGNATURE$/);
  });

  test('node with caFile succeeds, complete and stream, over one connection', async () => {
    const before = upstream.connections;
    const p = provider(createNodeTransport({ tls: material({ caFile: pki.caFile }) }), upstream.baseUrl);
    assert.equal((await p.complete(call())).choices[0]?.message.content, 'Hi there');
    assert.equal((await collect(p.stream(call(true)))).length, 2);
    assert.equal(upstream.connections - before, 1);
  });

  test('node trusting another CA only fails: caFile replaces the built-in roots', async () => {
    const p = provider(createNodeTransport({ tls: material({ caFile: other.caFile }) }), upstream.baseUrl);
    await assertTlsFailure(p.complete(call()), /^UNABLE_TO_VERIFY_LEAF_SIGNATURE$/);
  });

  test('upstream_tls_failed falls back to another target and is never retried on the same one', () => {
    assert.equal(catalogueEntry('upstream_tls_failed').clientMayRetry, false);
    assert.equal(classifyFailure(upstreamTlsFailedError(new Error('x'))), FailureClass.Fallback);
    assert.equal(catalogueEntry('upstream_proxy_failed').clientMayRetry, true);
    assert.equal(classifyFailure(upstreamProxyFailedError(new Error('x'))), FailureClass.Fallback);
  });
});

describe('an upstream that requires a client certificate', () => {
  test('node with certFile and keyFile is accepted; the upstream sees the client\'s subject', async () => {
    clientSubjects.length = 0;
    const client = pki.client('gateway', 'portcullis-gateway');
    const p = provider(createNodeTransport({ tls: material({ caFile: pki.caFile, certFile: client.certFile, keyFile: client.keyFile }) }), mutual.baseUrl);
    assert.equal((await p.complete(call())).choices[0]?.message.content, 'Hi there');
    assert.equal((await collect(p.stream(call(true)))).length, 2);
    assert.deepEqual(clientSubjects, ['portcullis-gateway', 'portcullis-gateway']);
  });

  test('node without a client certificate is refused: upstream_tls_failed', async () => {
    const p = provider(createNodeTransport({ tls: material({ caFile: pki.caFile }) }), mutual.baseUrl);
    await assertTlsFailure(p.complete(call()), /^ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED$/);
  });

  test('a client certificate from another CA: a Node upstream resets the connection after the handshake, read as unreachable', async () => {
    // Node's TLS server checks the client's certificate after the handshake
    // and destroys the socket without an alert (on every Node line), so the
    // gateway sees only a reset; an upstream that sends the alert (OpenSSL's
    // own verification, nginx) is answered upstream_tls_failed as above.
    const stranger = pki.client('stranger', 'stranger', { issuer: other });
    const p = provider(createNodeTransport({ tls: material({ caFile: pki.caFile, certFile: stranger.certFile, keyFile: stranger.keyFile }) }), mutual.baseUrl);
    const error = await failure(p.complete(call()));
    assert.deepEqual(rendered(error), { status: 502, code: 'upstream_unreachable', message: 'The upstream provider could not be reached.' });
    assert.deepEqual(failureCauseOf(error), { kind: 'reset', detail: 'ECONNRESET', address: `127.0.0.1:${mutual.port}` });
  });
});

describe('serverName and minVersion', () => {
  test('a serverName the certificate does not name fails with upstream_tls_failed', async () => {
    const p = provider(createNodeTransport({ tls: material({ caFile: pki.caFile, serverName: 'wrong.example' }) }), upstream.baseUrl);
    await assertTlsFailure(p.complete(call()), /^ERR_TLS_CERT_ALTNAME_INVALID$/);
  });

  test('the serverName is what the certificate is checked against (and the SNI), not the URL\'s host', async () => {
    await assertTlsFailure(provider(createNodeTransport({ tls: material({ caFile: pki.caFile }) }), named.baseUrl).complete(call()), /^ERR_TLS_CERT_ALTNAME_INVALID$/);
    const p = provider(createNodeTransport({ tls: material({ caFile: pki.caFile, serverName: 'upstream.internal' }) }), named.baseUrl);
    assert.equal((await p.complete(call())).choices[0]?.message.content, 'Hi there');
    assert.equal(((named.sockets.at(-1) as TLSSocket | undefined) as { servername?: unknown } | undefined)?.servername, 'upstream.internal');
  });

  test('minVersion TLSv1.3 against a TLSv1.2-only upstream fails with upstream_tls_failed; TLSv1.2 works', async () => {
    const strict = provider(createNodeTransport({ tls: material({ caFile: pki.caFile, minVersion: 'TLSv1.3' }) }), old.baseUrl);
    // OpenSSL's protocol_version alert reaches node:tls as EPROTO.
    await assertTlsFailure(strict.complete(call()), /^EPROTO$/);
    const lenient = provider(createNodeTransport({ tls: material({ caFile: pki.caFile, minVersion: 'TLSv1.2' }) }), old.baseUrl);
    assert.equal((await lenient.complete(call())).choices[0]?.message.content, 'Hi there');
    assert.equal((old.sockets.at(-1) as TLSSocket | undefined)?.getProtocol(), 'TLSv1.2');
  });
});
