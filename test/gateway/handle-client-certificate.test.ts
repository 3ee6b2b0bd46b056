// Client certificates through gateway.handle() on a host's node:https server
// that asks for them but accepts unverified ones (requestCert without
// rejectUnauthorized: node's "optional" mTLS, the host deciding per request):
// the host's server owns that policy, so the gateway serves the request and
// hands the Authenticator the certificate with verified: false. The gateway's
// own listener with clientAuth "optional" keeps refusing such a certificate.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { AuthenticationRequest } from '../../src/api/keys.ts';
import { loadListenerTls } from '../../src/config/tls-files.ts';
import { listenLocal, startFakeUpstream, type FakeUpstream } from './harness.ts';
import { startHostedGateway, type HostedGateway } from './handle-fixtures.ts';
import { eventually } from '../support/eventually.ts';
import { sha256Of, tlsRequest } from '../tls/https-client.ts';
import { createInProcessPki } from '../tls/in-process-pki.ts';

const pki = createInProcessPki('Host CA');
/** A CA the host's server does not list: its certificates never verify there. */
const devicePki = createInProcessPki('Device CA');
const serverPair = pki.server('host', ['127.0.0.1']);
const alice = pki.client('alice', 'alice');
const device = devicePki.client('device', 'device-7');
const pinned = sha256Of(device.cert);

const asked: Array<Pick<AuthenticationRequest, 'apiKey' | 'clientCertificate'>> = [];
let upstream: FakeUpstream;
let hosted: HostedGateway;
let listenerUrl: string;

before(async () => {
  upstream = await startFakeUpstream(() => {});
  const tls = loadListenerTls(null, 'listen.tls', { certFile: serverPair.certFile, keyFile: serverPair.keyFile, clientCaFile: pki.caFile, clientAuth: 'optional', minVersion: 'TLSv1.2' }, {});
  hosted = await startHostedGateway({
    upstreamUrl: upstream.baseUrl,
    https: { cert: serverPair.cert, key: serverPair.key, ca: pki.ca, requestCert: true, rejectUnauthorized: false },
    tls,
    authenticate: ({ apiKey, clientCertificate }) => {
      asked.push({ apiKey, clientCertificate });
      // The host pins the device's certificate by its fingerprint; a verified one is known by its subject.
      if (clientCertificate?.verified === false && clientCertificate.fingerprint256 === pinned) return { id: 'device-7' };
      if (clientCertificate?.verified === true && clientCertificate.subject === 'CN=alice') return { id: 'alice' };
      return apiKey === 'host-key' ? { id: 'keyed' } : null;
    },
  });
  listenerUrl = `https://127.0.0.1:${(await listenLocal(hosted.gateway)).port}`;
});
after(async () => {
  await hosted.close();
  await upstream.close();
  pki.cleanup();
  devicePki.cleanup();
});

async function lineOf(requestId: string): Promise<Record<string, unknown>> {
  await eventually(() => hosted.accessLines().some((l) => l['requestId'] === requestId), `the access line of ${requestId}`);
  return hosted.accessLines().find((l) => l['requestId'] === requestId) as Record<string, unknown>;
}

const clientFields = (line: Record<string, unknown>): unknown[] => [line['status'], line['keyId'], line['clientSubject'], line['clientCertSha256'], line['clientCertError']];

test('an unverified certificate the host server let through: served, the Authenticator decides with verified false', async () => {
  asked.length = 0;
  const res = await tlsRequest(`${hosted.hostUrl}/v1/models`, { ca: pki.ca, cert: device.cert, key: device.key, headers: { 'x-request-id': 'host-device' } });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(asked, [{ apiKey: null, clientCertificate: { subject: 'CN=device-7', fingerprint256: pinned, verified: false } }]);
  // Never named in the log unless it verified; the reason it did not is.
  assert.deepEqual(clientFields(await lineOf('host-device')), [200, 'device-7', null, null, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE']);
});

test('an unverified certificate the Authenticator does not know: its 401, not the listener 403', async () => {
  asked.length = 0;
  const stranger = devicePki.client('stranger', 'stranger');
  const res = await tlsRequest(`${hosted.hostUrl}/v1/models`, { ca: pki.ca, cert: stranger.cert, key: stranger.key, headers: { 'x-request-id': 'host-stranger' } });
  assert.equal(res.status, 401);
  assert.equal((res.json() as { error: { code: string } }).error.code, 'invalid_api_key');
  assert.deepEqual(asked, [{ apiKey: null, clientCertificate: { subject: 'CN=stranger', fingerprint256: sha256Of(stranger.cert), verified: false } }]);
});

test('a verified certificate on the host server: verified true, named in the access line', async () => {
  asked.length = 0;
  const res = await tlsRequest(`${hosted.hostUrl}/v1/models`, { ca: pki.ca, cert: alice.cert, key: alice.key, headers: { 'x-request-id': 'host-alice' } });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(asked, [{ apiKey: null, clientCertificate: { subject: 'CN=alice', fingerprint256: sha256Of(alice.cert), verified: true } }]);
  assert.deepEqual(clientFields(await lineOf('host-alice')), [200, 'alice', 'CN=alice', sha256Of(alice.cert).slice(0, 23), undefined]);
});

test('no certificate on the host server: the Authenticator is given null', async () => {
  asked.length = 0;
  const res = await tlsRequest(`${hosted.hostUrl}/v1/models`, { ca: pki.ca, headers: { authorization: 'Bearer host-key', 'x-request-id': 'host-none' } });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(asked, [{ apiKey: 'host-key', clientCertificate: null }]);
  assert.deepEqual(clientFields(await lineOf('host-none')), [200, 'keyed', null, null, undefined]);
});

test('the gateway listener with clientAuth "optional" still refuses the same certificate with a 403, before the Authenticator', async () => {
  asked.length = 0;
  const res = await tlsRequest(`${listenerUrl}/v1/models`, { ca: pki.ca, cert: device.cert, key: device.key, headers: { 'x-request-id': 'listener-device' } });
  assert.equal(res.status, 403);
  assert.deepEqual(res.json(), {
    error: {
      message:
        'The TLS client certificate was refused: it is not issued by a certificate authority this server trusts (UNABLE_TO_VERIFY_LEAF_SIGNATURE). Connect with a valid certificate, or without one.',
      type: 'permission_error',
      param: null,
      code: 'client_certificate_refused',
    },
  });
  assert.equal(res.headers['connection'], 'close');
  assert.deepEqual(asked, []);
  assert.deepEqual(clientFields(await lineOf('listener-device')), [403, null, null, null, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE']);
});

test('the gateway listener with clientAuth "optional": a verified certificate reaches the Authenticator with verified true', async () => {
  asked.length = 0;
  const res = await tlsRequest(`${listenerUrl}/v1/models`, { ca: pki.ca, cert: alice.cert, key: alice.key, headers: { 'x-request-id': 'listener-alice' } });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(asked, [{ apiKey: null, clientCertificate: { subject: 'CN=alice', fingerprint256: sha256Of(alice.cert), verified: true } }]);
});
