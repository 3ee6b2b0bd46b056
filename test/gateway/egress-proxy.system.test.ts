// The gateway behind a real egress proxy (tinyproxy on loopback), configured
// the way operators do it: only the environment's proxy variables, no
// transport set. The provider then uses the node transport; a proxy that
// refuses is answered once with 502 upstream_proxy_failed, never retried in a loop.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createTestPki, type TestPki } from '../tls/test-pki.ts';
import { sharedTinyproxy, tinyproxyMissing, TINYPROXY_PASSWORD, TINYPROXY_USER, type TinyproxyHandle } from '../support/tinyproxy.ts';
import { refusedPort } from '../upstream/refused-port.ts';
import { postChat, startGateway, type TestGateway } from './harness.ts';

const completion = {
  id: 'chatcmpl-proxy1',
  object: 'chat.completion',
  created: 1_720_000_000,
  model: 'upstream-model-1',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Through the proxy.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 },
};

function answer(seen: string[]): http.RequestListener {
  return (req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(`${req.method} ${req.url} ${req.headers.host}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(completion));
    });
  };
}

async function listen(server: http.Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

const alias = { 'service-up': { provider: 'up', model: 'upstream-model-1' } };
const chat = { model: 'service-up', messages: [{ role: 'user', content: 'Hi' }] };

describe('the gateway behind a real egress proxy', { skip: tinyproxyMissing() }, () => {
  let pki: TestPki;
  let plain: http.Server;
  let secure: https.Server;
  let plainPort = 0;
  let securePort = 0;
  let proxy: TinyproxyHandle;
  let guarded: TinyproxyHandle;
  const seen: string[] = [];
  const gateways: TestGateway[] = [];

  before(async () => {
    pki = createTestPki();
    const pair = pki.server('upstream', ['localhost']);
    plain = http.createServer(answer(seen));
    plainPort = await listen(plain);
    secure = https.createServer({ cert: pair.cert, key: pair.key }, answer(seen));
    securePort = await listen(secure);
    proxy = await sharedTinyproxy('open');
    guarded = await sharedTinyproxy('guarded');
  });

  after(async () => {
    for (const gw of gateways) await gw.close();
    plain?.closeAllConnections();
    plain?.close();
    secure?.closeAllConnections();
    secure?.close();
    pki?.cleanup();
  });

  test('http_proxy alone: a provider without "transport" goes through the proxy on the node transport, and the start log says so', async () => {
    const gw = await startGateway({
      env: { http_proxy: proxy.url },
      configValue: { providers: { up: { type: 'openai', baseUrl: `http://127.0.0.1:${plainPort}/v1`, retry: { maxAttempts: 1 } } }, aliases: alias, auto: { default: 'service-up' } },
    });
    gateways.push(gw);
    const res = await postChat(gw, chat);
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content, 'Through the proxy.');
    assert.deepEqual(seen.splice(0), [`POST /v1/chat/completions 127.0.0.1:${plainPort}`]);
    assert.match(proxy.log(), new RegExp(`POST http://127\\.0\\.0\\.1:${plainPort}/v1/chat/completions HTTP/1\\.1`));
    const line = gw.logs.find((l) => l['msg'] === 'upstream connection');
    assert.deepEqual(line === undefined ? undefined : [line['provider'], line['transport'], line['route']], [
      'up',
      'node (chosen: fetch cannot use a proxy)',
      `proxy ${proxy.url} (http_proxy)`,
    ]);
  });

  test('plain http through a proxy: its 407 and its absence are the proxy\'s failures, not the upstream\'s', async () => {
    const closedPort = await refusedPort();
    const config = { providers: { up: { type: 'openai', baseUrl: `http://127.0.0.1:${plainPort}/v1`, retry: { maxAttempts: 3, baseDelayMs: 0 } } }, aliases: alias, auto: { default: 'service-up' } };
    for (const [proxyUrl, detail] of [
      [guarded.url, 'status_407'],
      [`http://127.0.0.1:${closedPort}`, 'ERR_PROXY_UNREACHABLE'],
    ] as const) {
      const gw = await startGateway({ env: { http_proxy: proxyUrl }, configValue: config });
      gateways.push(gw);
      const res = await postChat(gw, chat);
      assert.equal(res.status, 502);
      const body = (await res.json()) as { error: { code: string } };
      assert.equal(body.error.code, 'upstream_proxy_failed');
      const failed = gw.logs.filter((l) => l['msg'] === 'upstream failed');
      // Once: a proxy failure is not retried on the same target.
      assert.deepEqual(failed.map((l) => [l['cause'], l['detail']]), [['proxy', detail]]);
      assert.deepEqual(seen.splice(0), []);
    }
  });

  test('a proxy that accepts and never answers CONNECT: upstream_proxy_failed ERR_PROXY_TIMEOUT after connectTimeoutMs', async () => {
    const silent = net.createServer(() => undefined);
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    try {
      const gw = await startGateway({
        env: { HTTPS_PROXY: `http://127.0.0.1:${(silent.address() as AddressInfo).port}` },
        configValue: {
          providers: { up: { type: 'openai', baseUrl: `https://localhost:${securePort}/v1`, transport: 'node', tls: { caFile: pki.caFile }, connectTimeoutMs: 300, retry: { maxAttempts: 1 } } },
          aliases: alias,
          auto: { default: 'service-up' },
        },
      });
      gateways.push(gw);
      const res = await postChat(gw, chat);
      assert.equal(res.status, 502);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'upstream_proxy_failed');
      const failed = gw.logs.find((l) => l['msg'] === 'upstream failed');
      assert.deepEqual(failed === undefined ? undefined : [failed['cause'], failed['detail']], ['proxy', 'ERR_PROXY_TIMEOUT']);
    } finally {
      silent.close();
    }
  });

  test('a proxy that refuses (407): one CONNECT, 502 upstream_proxy_failed, the cause logged as proxy status_407', async () => {
    const gw = await startGateway({
      env: { HTTPS_PROXY: guarded.url },
      configValue: {
        providers: { up: { type: 'openai', baseUrl: `https://localhost:${securePort}/v1`, transport: 'node', tls: { caFile: pki.caFile }, retry: { maxAttempts: 3, baseDelayMs: 0 } } },
        aliases: alias,
        auto: { default: 'service-up' },
      },
    });
    gateways.push(gw);
    const connects = (): number => guarded.log().split(`CONNECT localhost:${securePort} `).length - 1;
    const connectsBefore = connects();
    const res = await postChat(gw, chat);
    assert.equal(res.status, 502);
    const body = (await res.json()) as { error: { code: string; type: string } };
    assert.deepEqual([body.error.type, body.error.code], ['upstream_error', 'upstream_proxy_failed']);
    // Not retried on the same target, never in a loop.
    assert.equal(connects() - connectsBefore, 1);
    assert.deepEqual(seen.splice(0), []);
    const failed = gw.logs.find((l) => l['msg'] === 'upstream failed');
    assert.deepEqual(failed === undefined ? undefined : [failed['cause'], failed['detail']], ['proxy', 'status_407']);
  });

  test('the same proxy with the credentials in HTTPS_PROXY: through the CONNECT tunnel to the private-CA upstream', async () => {
    const gw = await startGateway({
      env: { HTTPS_PROXY: `http://${TINYPROXY_USER}:${TINYPROXY_PASSWORD}@127.0.0.1:${guarded.port}` },
      configValue: {
        providers: { up: { type: 'openai', baseUrl: `https://localhost:${securePort}/v1`, transport: 'node', tls: { caFile: pki.caFile }, retry: { maxAttempts: 1 } } },
        aliases: alias,
        auto: { default: 'service-up' },
      },
    });
    gateways.push(gw);
    const res = await postChat(gw, chat);
    assert.equal(res.status, 200);
    assert.deepEqual(seen.splice(0), [`POST /v1/chat/completions localhost:${securePort}`]);
    // The credentials never reach a log line, neither as written nor as the Basic value.
    assert.equal(JSON.stringify(gw.logs).includes(TINYPROXY_PASSWORD), false);
    assert.equal(JSON.stringify(gw.logs).includes(Buffer.from(`${TINYPROXY_USER}:${TINYPROXY_PASSWORD}`).toString('base64')), false);
  });
});
