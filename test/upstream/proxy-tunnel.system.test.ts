// The CONNECT tunnel against a real tinyproxy: success with TLS to a fake
// HTTPS upstream inside, 407, 401, 403, 500. Against fake proxies:
// proxy-tunnel.test.ts.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { proxyAuthorization } from '../../src/config/proxy-env.ts';
import { openTunnel, proxyHook, proxyRequestHeaders } from '../../src/upstream/proxy-tunnel.ts';
import { sharedTinyproxy, tinyproxyMissing, TINYPROXY_PASSWORD, TINYPROXY_USER, type TinyproxyHandle } from '../support/tinyproxy.ts';
import { createTestPki, type TestPki } from '../tls/test-pki.ts';
import { listen, portOf, rejection, route, TIMEOUT_MS } from './proxy-fixtures.ts';
import { refusedPort } from './refused-port.ts';

/** TLS through the tunnel to the fake upstream, one GET, the whole answer. */
async function getThrough(socket: Socket, pki: TestPki): Promise<string> {
  const tls = tlsConnect({ socket, servername: 'localhost', ca: pki.ca });
  await once(tls, 'secureConnect');
  // write, not end: tinyproxy closes both directions on the client's FIN.
  tls.write('GET /v1/models HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
  const chunks: Buffer[] = [];
  for await (const chunk of tls) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const skip = tinyproxyMissing();

describe('through a real tinyproxy', { skip }, () => {
  let pki: TestPki;
  let upstream: HttpsServer;
  let upstreamPort: number;
  let deadPort: number;
  let open: TinyproxyHandle;
  let guarded: TinyproxyHandle;
  let closed: TinyproxyHandle;
  const seen: string[] = [];

  before(async () => {
    pki = createTestPki();
    const pair = pki.server('upstream', ['localhost', '127.0.0.1']);
    upstream = await listen(createHttpsServer({ cert: pair.cert, key: pair.key }, (req, res) => {
      seen.push(`${req.method} ${req.url}`);
      const body = '{"object":"list","data":[]}';
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) }).end(body);
    }));
    upstreamPort = portOf(upstream);
    deadPort = await refusedPort();
    open = await sharedTinyproxy('open');
    guarded = await sharedTinyproxy('guarded');
    closed = await sharedTinyproxy('closed');
  });

  after(async () => {
    upstream?.close();
    pki?.cleanup();
  });

  test('2xx: TLS to the fake upstream (private CA) runs inside the tunnel', async () => {
    const socket = await openTunnel(route(open.url), '127.0.0.1', upstreamPort, new AbortController().signal, TIMEOUT_MS);
    const answer = await getThrough(socket, pki);
    assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
    assert.ok(answer.endsWith('\r\n\r\n{"object":"list","data":[]}'), answer);
    assert.deepEqual(seen.splice(0), ['GET /v1/models']);
    assert.match(open.log(), new RegExp(`Request \\(file descriptor \\d+\\): CONNECT 127\\.0\\.0\\.1:${upstreamPort} HTTP/1\\.1`));
  });

  test('proxyHook binds the route: the node transport\'s hook', async () => {
    const hook = proxyHook(route(open.url, 'HTTPS_PROXY', 'Basic x'));
    assert.equal(hook.url.href, `${open.url}/`);
    assert.equal(hook.authorization, 'Basic x');
    const socket = await proxyHook(route(open.url)).openTunnel('localhost', upstreamPort, new AbortController().signal, TIMEOUT_MS);
    assert.match(await getThrough(socket, pki), /^HTTP\/1\.1 200 OK\r\n/);
    assert.deepEqual(seen.splice(0), ['GET /v1/models']);
  });

  test('407: no credentials for a proxy that wants them', async () => {
    const error = await rejection(openTunnel(route(guarded.url), '127.0.0.1', upstreamPort, new AbortController().signal, TIMEOUT_MS));
    assert.equal(error.code, 'ERR_PROXY_REFUSED');
    assert.equal(error.proxyStatus, 407);
    assert.equal(error.message, `The egress proxy 127.0.0.1:${guarded.port} (HTTPS_PROXY) refused CONNECT 127.0.0.1:${upstreamPort} with 407 Proxy Authentication Required. The proxy wants credentials: put them in HTTPS_PROXY as http://user:password@host:port.`);
  });

  test('401 (tinyproxy\'s answer to wrong credentials): the message names the variable, never the password', async () => {
    const error = await rejection(openTunnel(route(guarded.url, 'https_proxy', proxyAuthorization(TINYPROXY_USER, 'wrong-pass')), '127.0.0.1', upstreamPort, new AbortController().signal, TIMEOUT_MS));
    assert.equal(error.code, 'ERR_PROXY_REFUSED');
    assert.equal(error.proxyStatus, 401);
    assert.equal(error.message, `The egress proxy 127.0.0.1:${guarded.port} (https_proxy) refused CONNECT 127.0.0.1:${upstreamPort} with 401 Unauthorized. Check the credentials in https_proxy (http://user:password@host:port; percent-encode special characters).`);
    assert.doesNotMatch(error.message, /wrong-pass|Basic/);
  });

  test('the right credentials open the tunnel', async () => {
    const socket = await openTunnel(route(guarded.url, 'HTTPS_PROXY', proxyAuthorization(TINYPROXY_USER, TINYPROXY_PASSWORD)), '127.0.0.1', upstreamPort, new AbortController().signal, TIMEOUT_MS);
    assert.match(await getThrough(socket, pki), /^HTTP\/1\.1 200 OK\r\n/);
    assert.deepEqual(seen.splice(0), ['GET /v1/models']);
  });

  test('an http:// upstream: absolute form with proxyRequestHeaders passes the guarded proxy; without them, 407', async () => {
    const plain = await listen(createHttpServer((req, res) => res.end(`plain ${req.method} ${req.url}`)));
    const target = `http://127.0.0.1:${portOf(plain)}/v1/models`;
    const ask = (headers: Record<string, string>): Promise<{ status: number | undefined; body: string }> =>
      new Promise((resolve, reject) => {
        // agent: false. tinyproxy closes the client connection after each answer
        // but relays it without "Connection: close", so a keep-alive agent may
        // reuse the closed socket for the next request ("socket hang up").
        const req = httpRequest({ host: '127.0.0.1', port: guarded.port, path: target, agent: false, headers: { host: `127.0.0.1:${portOf(plain)}`, ...headers } }, (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => resolve({ status: res.statusCode, body }));
        });
        req.on('error', reject).end();
      });
    try {
      const withCredentials = await ask(proxyRequestHeaders(route(guarded.url, 'http_proxy', proxyAuthorization(TINYPROXY_USER, TINYPROXY_PASSWORD))));
      assert.deepEqual(withCredentials, { status: 200, body: 'plain GET /v1/models' });
      const without = await ask(proxyRequestHeaders(route(guarded.url, 'http_proxy')));
      assert.equal(without.status, 407);
    } finally {
      plain.closeAllConnections();
      plain.close();
    }
  });

  test('403: CONNECT to a port the proxy does not allow', async () => {
    const error = await rejection(openTunnel(route(closed.url), '127.0.0.1', 443, new AbortController().signal, TIMEOUT_MS));
    assert.equal(error.code, 'ERR_PROXY_REFUSED');
    assert.equal(error.proxyStatus, 403);
    assert.equal(error.message, `The egress proxy 127.0.0.1:${closed.port} (HTTPS_PROXY) refused CONNECT 127.0.0.1:443 with 403 Access violation. Check the proxy's access rules (ACL): the destination host and port must be allowed for CONNECT.`);
  });

  test('500: the proxy cannot reach the upstream', async () => {
    const error = await rejection(openTunnel(route(open.url), '127.0.0.1', deadPort, new AbortController().signal, TIMEOUT_MS));
    assert.equal(error.proxyStatus, 500);
    assert.equal(error.message, `The egress proxy 127.0.0.1:${open.port} (HTTPS_PROXY) refused CONNECT 127.0.0.1:${deadPort} with 500 Unable to connect. The proxy could not reach the upstream: check the upstream's address and the proxy's own connectivity.`);
  });
});

