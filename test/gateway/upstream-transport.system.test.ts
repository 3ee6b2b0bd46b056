// The gateway end to end with a provider on "transport": "node" and TLS
// settings from the config: a fake HTTPS upstream signed by a private test CA
// that requires a client certificate, reached through the real server on port 0.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TLSSocket } from 'node:tls';
import { ConfigError } from '../../src/config/config.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { resolveProviderConnections } from '../../src/providers/provider-connections.ts';
import { startFakeUpstream, type FakeUpstream } from '../../src/testing/fake-upstream.ts';
import { createTestPki, type TestPki } from '../tls/test-pki.ts';
import { openStream, postChat, sseData, startGateway, type TestGateway } from './harness.ts';

let pki: TestPki;
let upstream: FakeUpstream;
const seen: Array<{ path: string | undefined; auth: string | undefined; client: string; body: Record<string, unknown> }> = [];
let gw: TestGateway;

const completion = {
  id: 'chatcmpl-tls1',
  object: 'chat.completion',
  created: 1_720_000_000,
  model: 'upstream-model-1',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Over mutual TLS.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 },
};

const chunk = (content: string, finish: string | null = null): string =>
  `data: ${JSON.stringify({ id: 'chatcmpl-tls2', object: 'chat.completion.chunk', created: 1_720_000_001, model: 'upstream-model-1', choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;

function providerConfig(tls: Record<string, unknown>): Record<string, unknown> {
  return {
    providers: {
      secure: {
        type: 'openai',
        baseUrl: upstream.baseUrl,
        apiKeyEnv: 'FAKE_UPSTREAM_KEY',
        transport: 'node',
        tls,
        retry: { maxAttempts: 1 },
      },
    },
    aliases: { 'service-secure': { provider: 'secure', model: 'upstream-model-1' } },
    auto: { default: 'service-secure' },
  };
}

before(async () => {
  pki = createTestPki();
  const server = pki.server('upstream');
  const tls = { cert: server.cert, key: server.key, ca: pki.ca, requestCert: true, rejectUnauthorized: true };
  upstream = await startFakeUpstream((req, res, received) => {
    const body = JSON.parse(received.text) as Record<string, unknown>;
    seen.push({ path: req.url, auth: req.headers.authorization, client: String((req.socket as TLSSocket).getPeerCertificate().subject?.CN), body });
    if (body['stream'] === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`${chunk('Over ')}${chunk('mutual TLS.')}${chunk('', 'stop')}data: [DONE]\n\n`);
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(completion));
    }
  }, { tls });
  const client = pki.client('gateway', 'portcullis-gateway');
  gw = await startGateway({ configValue: providerConfig({ caFile: pki.caFile, certFile: client.certFile, keyFile: client.keyFile }) });
});

after(async () => {
  await gw.close();
  await upstream.close();
  pki.cleanup();
});

test('a node-transport provider with caFile and a client certificate answers, not streamed', async () => {
  seen.length = 0;
  const res = await postChat(gw, { model: 'service-secure', messages: [{ role: 'user', content: 'Hi' }] });
  assert.equal(res.status, 200);
  const body = res.json() as { model: string; choices: Array<{ message: { content: string } }> };
  assert.equal(body.model, 'service-secure');
  assert.equal(body.choices[0]?.message.content, 'Over mutual TLS.');
  assert.equal(seen.length, 1);
  assert.deepEqual([seen[0]?.path, seen[0]?.auth, seen[0]?.client], ['/v1/chat/completions', 'Bearer sk-upstream-secret', 'portcullis-gateway']);
});

test('... and streamed', async () => {
  seen.length = 0;
  const { status, body } = await openStream(gw, gw.key, { model: 'service-secure', stream: true, messages: [{ role: 'user', content: 'Hi' }] });
  assert.equal(status, 200);
  const data = sseData(await body);
  assert.equal(data.at(-1), '[DONE]');
  const text = data.slice(0, -1).map((d) => (JSON.parse(d) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? '').join('');
  assert.equal(text, 'Over mutual TLS.');
  assert.equal(seen[0]?.client, 'portcullis-gateway');
});

test('without the client certificate the client gets 502 upstream_tls_failed, and the log names the TLS cause', async () => {
  const other = await startGateway({ configValue: providerConfig({ caFile: pki.caFile }) });
  try {
    const res = await postChat(other, { model: 'service-secure', messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(res.status, 502);
    assert.deepEqual(res.json(), {
      error: { message: 'The TLS connection to the upstream provider failed. This is a gateway configuration problem.', type: 'upstream_error', param: null, code: 'upstream_tls_failed' },
    });
    const failed = other.logs.find((line) => line['msg'] === 'upstream failed');
    assert.deepEqual([failed?.['cause'], failed?.['detail']], ['tls', 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED']);
  } finally {
    await other.close();
  }
});

test('a TLS file that cannot be used: one ConfigError naming each setting; a reload with it is refused and the old state serves on', async () => {
  const value = providerConfig({ caFile: `${pki.dir}/missing-ca.pem`, certFile: `${pki.dir}/upstream.pem`, keyFile: `${pki.dir}/ca.key` });
  const config = parseConfig({ ...value, dataDir: gw.dataDir }, null, pki.dir);
  const named = (error: unknown): boolean => {
    assert.ok(error instanceof ConfigError);
    assert.deepEqual(error.issues.map((issue) => issue.path), ['providers.secure.tls.caFile', 'providers.secure.tls.keyFile']);
    return true;
  };
  assert.throws(() => resolveProviderConnections(config, {}), named);
  assert.throws(() => gw.gateway.prepareReload(config), named);
  const res = await postChat(gw, { model: 'service-secure', messages: [{ role: 'user', content: 'Hi' }] });
  assert.equal(res.status, 200);
});
