// The in-process test PKI makes what the openssl one makes: certificates
// node:crypto parses with the subject, names, usages and validity asked for,
// signed by their CA, that node:tls accepts in a handshake both ways.
import assert from 'node:assert/strict';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, test } from 'node:test';
import tls from 'node:tls';
import { createInProcessPki } from './in-process-pki.ts';

const pki = createInProcessPki();
const other = createInProcessPki('Another CA');
after(() => {
  pki.cleanup();
  other.cleanup();
});
const DAY_MS = 86_400_000;

test('the CA: self-signed, CA:TRUE, for 10 years; its key beside it as ca.key', () => {
  const ca = new X509Certificate(pki.ca);
  assert.equal(ca.subject, 'CN=Portcullis Test CA');
  assert.equal(ca.issuer, 'CN=Portcullis Test CA');
  assert.equal(ca.ca, true);
  assert.equal(ca.checkIssued(ca), true);
  assert.equal(ca.verify(ca.publicKey), true);
  assert.equal(ca.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
  const years = (Date.parse(ca.validTo) - Date.parse(ca.validFrom)) / DAY_MS;
  assert.equal(years, 3650);
  assert.match(readFileSync(path.join(pki.dir, 'ca.key'), 'latin1'), /^-----BEGIN PRIVATE KEY-----\n/);
  assert.equal(pki.caFile, path.join(pki.dir, 'ca.pem'));
});

test('a server certificate: CN the first name, every name in subjectAltName, serverAuth, signed by the CA, its key matching', () => {
  const pair = pki.server('web', ['127.0.0.1', 'localhost', '::1', 'llm.internal']);
  const cert = new X509Certificate(pair.cert);
  assert.equal(cert.subject, 'CN=127.0.0.1');
  assert.equal(cert.issuer, 'CN=Portcullis Test CA');
  assert.equal(cert.subjectAltName, 'IP Address:127.0.0.1, DNS:localhost, IP Address:0:0:0:0:0:0:0:1, DNS:llm.internal');
  assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1']);
  assert.equal(cert.ca, false);
  assert.equal(cert.checkIssued(new X509Certificate(pki.ca)), true);
  assert.equal(cert.verify(new X509Certificate(pki.ca).publicKey), true);
  assert.equal(cert.checkPrivateKey(createPrivateKey(pair.key)), true);
  assert.equal(cert.checkPrivateKey(createPrivateKey(pki.server('another').key)), false);
  assert.equal(cert.checkHost('localhost'), 'localhost');
  assert.equal(cert.checkIP('127.0.0.1'), '127.0.0.1');
  assert.deepEqual([pair.certFile, pair.keyFile], [path.join(pki.dir, 'web.pem'), path.join(pki.dir, 'web.key')]);
  assert.deepEqual([readFileSync(pair.certFile), readFileSync(pair.keyFile)], [pair.cert, pair.key]);
});

test('validity: from now for the days asked; negative days ended that many days ago; another CA as the issuer', () => {
  const before = Math.floor(Date.now() / 1000) * 1000;
  const current = new X509Certificate(pki.server('days-10', undefined, { days: 10 }).cert);
  const from = Date.parse(current.validFrom);
  assert.ok(from >= before && from <= Date.now(), current.validFrom);
  assert.equal(Date.parse(current.validTo) - from, 10 * DAY_MS);
  const expired = new X509Certificate(pki.server('expired', ['expired.internal'], { days: -1 }).cert);
  assert.equal(Date.parse(expired.validTo) - Date.parse(expired.validFrom), -DAY_MS);
  const foreign = new X509Certificate(pki.client('foreign', 'mallory', { issuer: other }).cert);
  assert.equal(foreign.issuer, 'CN=Another CA');
  assert.equal(foreign.checkIssued(new X509Certificate(other.ca)), true);
  assert.equal(foreign.checkIssued(new X509Certificate(pki.ca)), false);
});

test('a TLS handshake both ways: the server certificate for 127.0.0.1 and a client certificate, each checked against the CA', async () => {
  const server = pki.server('handshake');
  const client = pki.client('alice', 'alice');
  assert.deepEqual(new X509Certificate(client.cert).keyUsage, ['1.3.6.1.5.5.7.3.2']);
  const listener = tls.createServer({ cert: server.cert, key: server.key, ca: pki.ca, requestCert: true, rejectUnauthorized: true }, (socket) => {
    socket.end(`hello ${socket.getPeerCertificate().subject.CN}`);
  });
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  try {
    const { port } = listener.address() as AddressInfo;
    const socket = tls.connect({ host: '127.0.0.1', port, ca: pki.ca, cert: client.cert, key: client.key });
    await once(socket, 'secureConnect');
    assert.equal(socket.authorized, true, String(socket.authorizationError));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    await once(socket, 'end');
    assert.equal(text, 'hello alice');
  } finally {
    listener.close();
  }
  assert.equal(existsSync(path.join(pki.dir, 'alice.key')), true);
});
