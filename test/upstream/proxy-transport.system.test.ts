// The proxy as the gateway uses it: the environment resolved as curl does
// (proxy-env), the hook (proxyHook) handed to the node transport, and a real
// tinyproxy in between. An https upstream under a private CA goes through a
// CONNECT tunnel; an http upstream goes in absolute form with the credentials
// from the variable; a refusal reaches the exchange as the proxy's, once.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { after, before, describe, test } from 'node:test';
import { resolveProxy } from '../../src/config/proxy-env.ts';
import { loadClientTls } from '../../src/config/tls-files.ts';
import { classifyNetworkError } from '../../src/upstream/failure-cause.ts';
import { createNodeTransport } from '../../src/upstream/node-transport.ts';
import { proxyHook } from '../../src/upstream/proxy-tunnel.ts';
import type { UpstreamTransport } from '../../src/upstream/transport.ts';
import { createTestPki, type TestPki } from '../tls/test-pki.ts';
import { sharedTinyproxy, tinyproxyMissing, TINYPROXY_PASSWORD, TINYPROXY_USER, type TinyproxyHandle } from '../support/tinyproxy.ts';

interface Seen {
  method: string | undefined;
  url: string | undefined;
  host: string | undefined;
  proxyAuthorization: string | undefined;
  body: string;
}

function answer(seen: Seen[]) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, host: req.headers.host, proxyAuthorization: req.headers['proxy-authorization'], body });
      const text = '{"id":"chatcmpl-1","object":"chat.completion"}';
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(text.length) }).end(text);
    });
  };
}

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  assert.ok(typeof address === 'object' && address !== null);
  return address.port;
}

async function post(transport: UpstreamTransport, url: string): Promise<{ status: number; body: string }> {
  const { response } = transport.send({ url, headers: { 'content-type': 'application/json' }, body: '{"model":"m"}', onConnected: () => {} });
  const res = await response;
  let body = '';
  for (let chunk = await res.body.read(); chunk !== undefined; chunk = await res.body.read()) body += Buffer.from(chunk).toString('utf8');
  return { status: res.status, body };
}

const skip = tinyproxyMissing();

describe('the node transport through tinyproxy, routed by the environment', { skip }, () => {
  let pki: TestPki;
  const seen: Seen[] = [];
  let secure: Server;
  let plain: Server;
  let securePort: number;
  let plainPort: number;
  let proxy: TinyproxyHandle;
  /** CONNECTs to that port in the proxy's log (shared with the other files of this process). */
  const connects = (port: number): number => proxy.log().split(`CONNECT localhost:${port} `).length - 1;
  const tls = () => loadClientTls(null, 'providers.up.tls', { caFile: pki.caFile, certFile: null, keyFile: null, serverName: null, minVersion: 'TLSv1.2' }, process.env);

  before(async () => {
    pki = createTestPki();
    const pair = pki.server('upstream', ['localhost', '127.0.0.1']);
    secure = createHttpsServer({ cert: pair.cert, key: pair.key }, answer(seen));
    securePort = await listen(secure);
    plain = createHttpServer(answer(seen));
    plainPort = await listen(plain);
    proxy = await sharedTinyproxy('guarded');
    // The credentials as the tests below write them, "-" percent-encoded.
    assert.deepEqual([TINYPROXY_USER, TINYPROXY_PASSWORD], ['gw', 's3cret-w0rd']);
  });

  after(async () => {
    secure?.closeAllConnections();
    secure?.close();
    plain?.closeAllConnections();
    plain?.close();
    pki?.cleanup();
  });

  test('https: HTTPS_PROXY with credentials, CONNECT then TLS to the private-CA upstream', async () => {
    const url = `https://localhost:${securePort}/v1/chat/completions`;
    const env = { HTTPS_PROXY: `http://gw:s3cret%2Dw0rd@127.0.0.1:${proxy.port}`, NO_PROXY: 'example.com' };
    const { route, description } = resolveProxy(new URL(url), env, null);
    assert.ok(route !== null);
    assert.equal(description, `proxy http://127.0.0.1:${proxy.port} (HTTPS_PROXY, with credentials)`);
    const transport = createNodeTransport({ tls: tls(), proxy: proxyHook(route), connectTimeoutMs: 5000 });
    assert.deepEqual(await post(transport, url), { status: 200, body: '{"id":"chatcmpl-1","object":"chat.completion"}' });
    // Inside the tunnel the upstream sees the request itself, never the proxy's credentials.
    assert.deepEqual(seen.splice(0), [{ method: 'POST', url: '/v1/chat/completions', host: `localhost:${securePort}`, proxyAuthorization: undefined, body: '{"model":"m"}' }]);
    assert.match(proxy.log(), new RegExp(`CONNECT localhost:${securePort} HTTP/1\\.1`));
  });

  test('http: http_proxy with credentials, absolute form through the proxy', async () => {
    const url = `http://127.0.0.1:${plainPort}/v1/chat/completions`;
    const { route } = resolveProxy(new URL(url), { http_proxy: `gw:s3cret%2Dw0rd@127.0.0.1:${proxy.port}` }, null);
    assert.ok(route !== null);
    const transport = createNodeTransport({ proxy: proxyHook(route) });
    assert.deepEqual(await post(transport, url), { status: 200, body: '{"id":"chatcmpl-1","object":"chat.completion"}' });
    // tinyproxy strips Proxy-Authorization before passing the request on.
    assert.deepEqual(seen.splice(0), [{ method: 'POST', url: '/v1/chat/completions', host: `127.0.0.1:${plainPort}`, proxyAuthorization: undefined, body: '{"model":"m"}' }]);
    assert.match(proxy.log(), new RegExp(`POST http://127\\.0\\.0\\.1:${plainPort}/v1/chat/completions HTTP/1\\.1`));
  });

  test('http through the proxy, request after request: each on a connection of its own (tinyproxy closes after every answer)', async () => {
    const url = `http://127.0.0.1:${plainPort}/v1/chat/completions`;
    const { route } = resolveProxy(new URL(url), { http_proxy: `gw:s3cret%2Dw0rd@127.0.0.1:${proxy.port}` }, null);
    assert.ok(route !== null);
    const transport = createNodeTransport({ proxy: proxyHook(route) });
    const statuses: number[] = [];
    // A pooled connection failed every second request with ECONNRESET here.
    for (let i = 0; i < 6; i++) statuses.push((await post(transport, url)).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200]);
    assert.equal(seen.splice(0).length, 6);
  });

  test('https through the proxy, request after request: one tunnel, reused', async () => {
    const url = `https://localhost:${securePort}/v1/chat/completions`;
    const { route } = resolveProxy(new URL(url), { https_proxy: `http://gw:s3cret%2Dw0rd@127.0.0.1:${proxy.port}` }, null);
    assert.ok(route !== null);
    const before = connects(securePort);
    const transport = createNodeTransport({ tls: tls(), proxy: proxyHook(route), connectTimeoutMs: 5000 });
    for (let i = 0; i < 4; i++) assert.equal((await post(transport, url)).status, 200);
    assert.equal(seen.splice(0).length, 4);
    assert.equal(connects(securePort) - before, 1);
  });

  test('NO_PROXY exempts the upstream: no route, direct', () => {
    const { route, description } = resolveProxy(new URL(`https://localhost:${securePort}/v1`), { HTTPS_PROXY: `http://127.0.0.1:${proxy.port}`, NO_PROXY: 'localhost' }, null);
    assert.equal(route, null);
    assert.equal(description, 'direct (NO_PROXY matches "localhost")');
  });

  test('without the credentials: 407 reaches the exchange as the proxy\'s failure, with one CONNECT', async () => {
    const url = `https://localhost:${securePort}/v1/chat/completions`;
    const { route } = resolveProxy(new URL(url), { https_proxy: `http://127.0.0.1:${proxy.port}` }, null);
    assert.ok(route !== null);
    const before = connects(securePort);
    const transport = createNodeTransport({ tls: tls(), proxy: proxyHook(route), connectTimeoutMs: 5000 });
    const error = await post(transport, url).then(() => assert.fail('expected the proxy to refuse'), (e: unknown) => e);
    assert.deepEqual(classifyNetworkError(error), { kind: 'proxy', detail: 'status_407' });
    assert.match(String((error as Error).message), /refused CONNECT localhost:\d+ with 407 Proxy Authentication Required\. The proxy wants credentials: put them in https_proxy/);
    assert.equal(connects(securePort) - before, 1);
    assert.deepEqual(seen, []);
  });
});
