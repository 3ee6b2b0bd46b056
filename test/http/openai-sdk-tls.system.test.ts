// What the OpenAI SDK sees of a TLS API listener with client certificates:
// with a valid certificate, completions and streams as over plain HTTP; with
// one that does not verify ("optional"), a PermissionDeniedError carrying
// client_certificate_refused, not retried; without one where it is
// "required", a connection error (the handshake failed).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { ListenerTlsConfig } from '../../src/config/config.ts';
import { loadListenerTls } from '../../src/config/tls-files.ts';
import { startGateway, type TestGateway } from '../gateway/harness.ts';
import { httpsFetch } from '../tls/https-fetch.ts';
import { createTestPki, type IssuedPair, type TestPki } from '../tls/test-pki.ts';

const TIMEOUT = { timeout: 20_000 };
let pki: TestPki;
let server: IssuedPair;
let alice: IssuedPair;
let expired: IssuedPair;
const gateways: TestGateway[] = [];

before(() => {
  pki = createTestPki();
  server = pki.server('server');
  alice = pki.client('alice', 'alice');
  expired = pki.client('expired', 'old-client', { days: -1 });
});
after(async () => {
  for (const gw of gateways) await gw.close();
  pki.cleanup();
});

async function start(clientAuth: ListenerTlsConfig['clientAuth']): Promise<TestGateway> {
  const tls: ListenerTlsConfig = { certFile: server.certFile, keyFile: server.keyFile, clientCaFile: pki.caFile, clientAuth, minVersion: 'TLSv1.2' };
  const gw = await startGateway({ tls: loadListenerTls(null, 'listen.tls', tls, {}) });
  gateways.push(gw);
  return gw;
}

describe('the OpenAI SDK against clientAuth "optional"', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await start('optional');
  });

  test('with a valid client certificate: a completion and a stream', TIMEOUT, async () => {
    const transport = httpsFetch({ ca: pki.ca, cert: alice.cert, key: alice.key });
    const client = new OpenAI({ baseURL: `${gw.baseUrl}/v1`, apiKey: gw.key, fetch: transport.fetch, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'service-chat', messages: [{ role: 'user', content: 'Hello!' }] });
    const text = completion.choices[0]?.message.content;
    assert.ok(typeof text === 'string' && text.length > 0);
    const stream = await client.chat.completions.create({ model: 'service-chat', stream: true, messages: [{ role: 'user', content: 'Hello!' }] });
    let streamed = '';
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? '';
    assert.equal(streamed, text);
    const lines = gw.logs.filter((l) => l['msg'] === 'request');
    assert.deepEqual(
      lines.map((l) => [l['status'], l['clientSubject']]),
      [
        [200, 'CN=alice'],
        [200, 'CN=alice'],
      ],
    );
  });

  test('with an expired client certificate: PermissionDeniedError, client_certificate_refused, no retry', TIMEOUT, async () => {
    const transport = httpsFetch({ ca: pki.ca, cert: expired.cert, key: expired.key });
    // The SDK's default retries: a 403 is not one it retries.
    const client = new OpenAI({ baseURL: `${gw.baseUrl}/v1`, apiKey: gw.key, fetch: transport.fetch });
    let caught: unknown;
    await client.chat.completions.create({ model: 'service-chat', messages: [{ role: 'user', content: 'Hello!' }] }).catch((err: unknown) => (caught = err));
    assert.ok(caught instanceof OpenAI.PermissionDeniedError, String(caught));
    assert.equal(caught.status, 403);
    assert.equal(caught.code, 'client_certificate_refused');
    assert.equal(caught.type, 'permission_error');
    assert.match(caught.message, /^403 The TLS client certificate was refused: it has expired \(CERT_HAS_EXPIRED\)\./);
    assert.equal(transport.calls, 1);
  });
});

describe('the OpenAI SDK against clientAuth "required"', () => {
  test('without a client certificate: APIConnectionError, the handshake refused', TIMEOUT, async () => {
    const gw = await start('required');
    const transport = httpsFetch({ ca: pki.ca });
    const client = new OpenAI({ baseURL: `${gw.baseUrl}/v1`, apiKey: gw.key, fetch: transport.fetch, maxRetries: 0 });
    let caught: unknown;
    await client.models.list().catch((err: unknown) => (caught = err));
    assert.ok(caught instanceof OpenAI.APIConnectionError, String(caught));
    assert.equal((caught.cause as NodeJS.ErrnoException).code, 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED');
    assert.equal(gw.logs.filter((l) => l['msg'] === 'request').length, 0);

    const withCert = new OpenAI({ baseURL: `${gw.baseUrl}/v1`, apiKey: gw.key, fetch: httpsFetch({ ca: pki.ca, cert: alice.cert, key: alice.key }).fetch, maxRetries: 0 });
    const models = await withCert.models.list();
    assert.deepEqual(
      models.data.map((m) => m.id),
      ['service-chat', 'service-auto'],
    );
  });
});
