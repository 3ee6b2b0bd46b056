// gateway.handle() on a host's node:https server that asks for client
// certificates: the access line names a verified client certificate's subject
// and fingerprint, as the standalone listener's does; null without one.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startFakeUpstream, type FakeUpstream } from './harness.ts';
import { startHostedGateway, type HostedGateway } from './handle-fixtures.ts';
import { eventually } from '../support/eventually.ts';
import { sha256Of, tlsRequest } from '../tls/https-client.ts';
import { createTestPki, type IssuedPair, type TestPki } from '../tls/test-pki.ts';

let pki: TestPki;
let alice: IssuedPair;
let upstream: FakeUpstream;
let hosted: HostedGateway;

before(async () => {
  pki = createTestPki();
  const server = pki.server('host');
  alice = pki.client('alice', 'alice');
  upstream = await startFakeUpstream(() => {});
  hosted = await startHostedGateway({
    upstreamUrl: upstream.baseUrl,
    https: { cert: server.cert, key: server.key, ca: pki.ca, requestCert: true, rejectUnauthorized: false },
  });
});
after(async () => {
  await hosted.close();
  await upstream.close();
  pki.cleanup();
});

async function lineOf(requestId: string): Promise<Record<string, unknown>> {
  await eventually(() => hosted.accessLines().some((l) => l['requestId'] === requestId), `the access line of ${requestId}`);
  return hosted.accessLines().find((l) => l['requestId'] === requestId) as Record<string, unknown>;
}

test('a verified client certificate on the host server: clientSubject and clientCertSha256 in the access line', async () => {
  const res = await tlsRequest(`${hosted.hostUrl}/v1/models`, {
    ca: pki.ca,
    cert: alice.cert,
    key: alice.key,
    headers: { authorization: `Bearer ${hosted.key}`, 'x-request-id': 'tls-alice' },
  });
  assert.equal(res.status, 200);
  const line = await lineOf('tls-alice');
  assert.equal(line['clientSubject'], 'CN=alice');
  assert.equal(line['clientCertSha256'], sha256Of(alice.cert).slice(0, 23));
});

test('no client certificate on the host server: both fields null', async () => {
  const res = await tlsRequest(`${hosted.hostUrl}/v1/models`, {
    ca: pki.ca,
    headers: { authorization: `Bearer ${hosted.key}`, 'x-request-id': 'tls-none' },
  });
  assert.equal(res.status, 200);
  const line = await lineOf('tls-none');
  assert.equal(line['clientSubject'], null);
  assert.equal(line['clientCertSha256'], null);
});
