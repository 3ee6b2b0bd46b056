// The CONNECT tunnel against a real tinyproxy (success with TLS to a fake
// HTTPS upstream inside, 407, 403, 500) and against fake proxies for what a
// real one does not do on demand: close or reset without answering, say
// nothing, answer with something that is not HTTP. Every failure happens
// exactly once: the fake proxy counts the connections it got.
import assert from 'node:assert/strict';
import { refusedPort } from './refused-port.ts';
import { once } from 'node:events';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { proxyAuthorization, type ProxyRoute } from '../../src/config/proxy-env.ts';
import { openTunnel, proxyHook, ProxyTunnelError, proxyRequestHeaders } from '../../src/upstream/proxy-tunnel.ts';
import { createTestPki, type TestPki } from '../tls/test-pki.ts';
import { startTinyproxy, tinyproxyMissing, type TinyproxyHandle } from './tinyproxy.ts';

const TIMEOUT_MS = 10_000;

function route(url: string, source = 'HTTPS_PROXY', authorization?: string): ProxyRoute {
  return { url: new URL(url), authorization, source };
}

function portOf(server: Server | HttpsServer): number {
  const address = server.address();
  assert.ok(typeof address === 'object' && address !== null);
  return address.port;
}

async function listen<T extends Server | HttpsServer>(server: T): Promise<T> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

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

async function rejection(promise: Promise<unknown>): Promise<ProxyTunnelError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ProxyTunnelError, `expected a ProxyTunnelError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the tunnel to fail');
}

const skip = tinyproxyMissing();

describe('through a real tinyproxy', { skip }, () => {
  let pki: TestPki;
  let upstream: HttpsServer;
  let upstreamPort: number;
  let deadPort: number;
  let open: TinyproxyHandle;
  let guarded: TinyproxyHandle;
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
    // 443 is allowed but never used: the 403 case asks for a port not listed.
    open = await startTinyproxy({ connectPorts: [upstreamPort, deadPort] });
    guarded = await startTinyproxy({ connectPorts: [upstreamPort], basicAuth: { user: 'alice', password: 's3cret' } });
  });

  after(async () => {
    await open?.stop();
    await guarded?.stop();
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
    const error = await rejection(openTunnel(route(guarded.url, 'https_proxy', proxyAuthorization('alice', 'wrong-pass')), '127.0.0.1', upstreamPort, new AbortController().signal, TIMEOUT_MS));
    assert.equal(error.code, 'ERR_PROXY_REFUSED');
    assert.equal(error.proxyStatus, 401);
    assert.equal(error.message, `The egress proxy 127.0.0.1:${guarded.port} (https_proxy) refused CONNECT 127.0.0.1:${upstreamPort} with 401 Unauthorized. Check the credentials in https_proxy (http://user:password@host:port; percent-encode special characters).`);
    assert.doesNotMatch(error.message, /wrong-pass|Basic/);
  });

  test('the right credentials open the tunnel', async () => {
    const socket = await openTunnel(route(guarded.url, 'HTTPS_PROXY', proxyAuthorization('alice', 's3cret')), '127.0.0.1', upstreamPort, new AbortController().signal, TIMEOUT_MS);
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
      const withCredentials = await ask(proxyRequestHeaders(route(guarded.url, 'http_proxy', proxyAuthorization('alice', 's3cret'))));
      assert.deepEqual(withCredentials, { status: 200, body: 'plain GET /v1/models' });
      const without = await ask(proxyRequestHeaders(route(guarded.url, 'http_proxy')));
      assert.equal(without.status, 407);
    } finally {
      plain.closeAllConnections();
      plain.close();
    }
  });

  test('403: CONNECT to a port the proxy does not allow', async () => {
    const error = await rejection(openTunnel(route(open.url), '127.0.0.1', 443, new AbortController().signal, TIMEOUT_MS));
    assert.equal(error.code, 'ERR_PROXY_REFUSED');
    assert.equal(error.proxyStatus, 403);
    assert.equal(error.message, `The egress proxy 127.0.0.1:${open.port} (HTTPS_PROXY) refused CONNECT 127.0.0.1:443 with 403 Access violation. Check the proxy's access rules (ACL): the destination host and port must be allowed for CONNECT.`);
  });

  test('500: the proxy cannot reach the upstream', async () => {
    const error = await rejection(openTunnel(route(open.url), '127.0.0.1', deadPort, new AbortController().signal, TIMEOUT_MS));
    assert.equal(error.proxyStatus, 500);
    assert.equal(error.message, `The egress proxy 127.0.0.1:${open.port} (HTTPS_PROXY) refused CONNECT 127.0.0.1:${deadPort} with 500 Unable to connect. The proxy could not reach the upstream: check the upstream's address and the proxy's own connectivity.`);
  });
});

/** A fake proxy: records each connection's bytes and answers with `behave`. */
async function fakeProxy(behave: (socket: Socket) => void): Promise<{ port: number; connections: number; received: () => string; close: () => Promise<void> }> {
  let connections = 0;
  const sockets = new Set<Socket>();
  let bytes = '';
  const server = await listen(createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      bytes += chunk.toString('latin1');
    });
    socket.on('close', () => sockets.delete(socket));
    behave(socket);
  }));
  return {
    port: portOf(server),
    get connections() {
      return connections;
    },
    received: () => bytes,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Waits a little so a retry, if there were one, would have arrived. */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 300));

describe('against fake proxies', () => {
  test('accepts and closes without answering: ERR_PROXY_CLOSED, one connection, no retry', async () => {
    const proxy = await fakeProxy((socket) => socket.once('data', () => socket.end()));
    const error = await rejection(openTunnel(route(`http://127.0.0.1:${proxy.port}`), 'api.example.com', 443, new AbortController().signal, TIMEOUT_MS));
    assert.equal(error.code, 'ERR_PROXY_CLOSED');
    assert.equal(error.message, `The egress proxy 127.0.0.1:${proxy.port} (HTTPS_PROXY) closed the connection without answering CONNECT api.example.com:443. Check the proxy's log for why it dropped the request (often an access rule or the destination port).`);
    await settle();
    assert.equal(proxy.connections, 1);
    await proxy.close();
  });

  test('resets the connection: ERR_PROXY_CLOSED with the cause, one connection', async () => {
    const proxy = await fakeProxy((socket) => socket.once('data', () => socket.resetAndDestroy()));
    const error = await rejection(openTunnel(route(`http://127.0.0.1:${proxy.port}`), 'api.example.com', 443, new AbortController().signal, TIMEOUT_MS));
    assert.equal(error.code, 'ERR_PROXY_CLOSED');
    assert.equal((error.cause as NodeJS.ErrnoException).code, 'ECONNRESET');
    assert.match(error.message, /^The egress proxy 127\.0\.0\.1:\d+ \(HTTPS_PROXY\) reset the connection before answering CONNECT api\.example\.com:443: ECONNRESET/);
    await settle();
    assert.equal(proxy.connections, 1);
    await proxy.close();
  });

  test('nothing listens: ERR_PROXY_UNREACHABLE with the cause', async () => {
    const port = await refusedPort();
    const error = await rejection(openTunnel(route(`http://127.0.0.1:${port}`, 'config'), 'api.example.com', 443, new AbortController().signal, TIMEOUT_MS));
    assert.equal(error.code, 'ERR_PROXY_UNREACHABLE');
    assert.equal((error.cause as NodeJS.ErrnoException).code, 'ECONNREFUSED');
    assert.equal(error.message, `Could not connect to the egress proxy 127.0.0.1:${port} (the provider's "proxy" setting): ECONNREFUSED (connect ECONNREFUSED 127.0.0.1:${port}). Check the proxy's address and that it is running.`);
  });

  test('says nothing: ERR_PROXY_TIMEOUT after timeoutMs, the socket closed', async () => {
    let closed: Promise<unknown> = Promise.resolve();
    const proxy = await fakeProxy((socket) => {
      closed = once(socket, 'close');
    });
    const error = await rejection(openTunnel(route(`http://127.0.0.1:${proxy.port}`), 'api.example.com', 443, new AbortController().signal, 200));
    assert.equal(error.code, 'ERR_PROXY_TIMEOUT');
    assert.equal(error.message, `The egress proxy 127.0.0.1:${proxy.port} (HTTPS_PROXY): no answer to CONNECT api.example.com:443 within 200 ms. Check that the proxy is reachable and not overloaded.`);
    await closed;
    assert.equal(proxy.connections, 1);
    await proxy.close();
  });

  test('answers with something that is not HTTP: ERR_PROXY_BAD_RESPONSE', async () => {
    const proxy = await fakeProxy((socket) => socket.write('SSH-2.0-OpenSSH_9.2\r\n'));
    const error = await rejection(openTunnel(route(`http://127.0.0.1:${proxy.port}`), 'api.example.com', 443, new AbortController().signal, TIMEOUT_MS));
    assert.equal(error.code, 'ERR_PROXY_BAD_RESPONSE');
    assert.equal(error.message, `The egress proxy 127.0.0.1:${proxy.port} (HTTPS_PROXY) did not answer CONNECT api.example.com:443 with HTTP: it does not start with "HTTP/". Check that the address is an HTTP proxy.`);
    await proxy.close();
  });

  test('a header block past 16 KiB: ERR_PROXY_BAD_RESPONSE', async () => {
    const proxy = await fakeProxy((socket) => socket.write(`HTTP/1.1 200 OK\r\nx-filler: ${'a'.repeat(17 * 1024)}`));
    const error = await rejection(openTunnel(route(`http://127.0.0.1:${proxy.port}`), 'api.example.com', 443, new AbortController().signal, TIMEOUT_MS));
    assert.equal(error.code, 'ERR_PROXY_BAD_RESPONSE');
    assert.match(error.message, /its header block exceeds 16384 bytes/);
    await proxy.close();
  });

  test('407 for the config\'s proxy: credentials belong in the environment', async () => {
    const proxy = await fakeProxy((socket) => socket.once('data', () => socket.write('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n')));
    const error = await rejection(openTunnel(route(`http://127.0.0.1:${proxy.port}`, 'config'), 'api.example.com', 443, new AbortController().signal, TIMEOUT_MS));
    assert.equal(error.proxyStatus, 407);
    assert.equal(error.message, `The egress proxy 127.0.0.1:${proxy.port} (the provider's "proxy" setting) refused CONNECT api.example.com:443 with 407 Proxy Authentication Required. The proxy wants credentials: put them in HTTPS_PROXY (http://user:password@host:port) and set "proxy" to null.`);
    await proxy.close();
  });

  test('another status: refused, with the status and the general advice', async () => {
    const proxy = await fakeProxy((socket) => socket.once('data', () => socket.write('HTTP/1.1 405 Method Not Allowed\r\n\r\n')));
    const error = await rejection(openTunnel(route(`http://127.0.0.1:${proxy.port}`), 'api.example.com', 443, new AbortController().signal, TIMEOUT_MS));
    assert.equal(error.code, 'ERR_PROXY_REFUSED');
    assert.equal(error.proxyStatus, 405);
    assert.equal(error.message, `The egress proxy 127.0.0.1:${proxy.port} (HTTPS_PROXY) refused CONNECT api.example.com:443 with 405 Method Not Allowed. Check the proxy's configuration and log.`);
    await proxy.close();
  });

  test('the exact CONNECT bytes; bytes after the header block are unshifted onto the socket', async () => {
    const proxy = await fakeProxy((socket) => socket.once('data', () => socket.write('HTTP/1.1 200 Connection established\r\nVia: fake\r\n\r\nHELLO')));
    const authorization = proxyAuthorization('alice', 's3cret');
    const socket = await openTunnel(route(`http://127.0.0.1:${proxy.port}`, 'HTTPS_PROXY', authorization), 'api.example.com', 443, new AbortController().signal, TIMEOUT_MS);
    assert.equal(proxy.received(), `CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\nProxy-Authorization: ${authorization}\r\n\r\n`);
    const [first] = (await once(socket.resume(), 'data')) as [Buffer];
    assert.equal(first.toString('latin1'), 'HELLO');
    socket.destroy();
    await proxy.close();
  });

  test('an IPv6 target is bracketed in the request line and Host', async () => {
    const proxy = await fakeProxy((socket) => socket.once('data', () => socket.write('HTTP/1.0 200 OK\r\n\r\n')));
    const socket = await openTunnel(route(`http://127.0.0.1:${proxy.port}`), 'fd00::7', 8443, new AbortController().signal, TIMEOUT_MS);
    assert.equal(proxy.received(), 'CONNECT [fd00::7]:8443 HTTP/1.1\r\nHost: [fd00::7]:8443\r\n\r\n');
    socket.destroy();
    await proxy.close();
  });

  test('the abort signal destroys the socket and rejects with its reason, once', async () => {
    let closed: Promise<unknown> = Promise.resolve();
    const proxy = await fakeProxy((socket) => {
      closed = once(socket, 'close');
    });
    const controller = new AbortController();
    const pending = openTunnel(route(`http://127.0.0.1:${proxy.port}`), 'api.example.com', 443, controller.signal, TIMEOUT_MS);
    while (proxy.received() === '') await new Promise((resolve) => setTimeout(resolve, 10));
    const reason = new Error('client left');
    controller.abort(reason);
    await assert.rejects(pending, (error) => error === reason);
    await closed;
    assert.equal(proxy.connections, 1);
    await proxy.close();
  });

  test('an aborted signal makes no connection', async () => {
    const proxy = await fakeProxy(() => {});
    const reason = new Error('gone');
    await assert.rejects(openTunnel(route(`http://127.0.0.1:${proxy.port}`), 'api.example.com', 443, AbortSignal.abort(reason), TIMEOUT_MS), (error) => error === reason);
    await settle();
    assert.equal(proxy.connections, 0);
    await proxy.close();
  });

  test('a target that could inject a header is refused before connecting', async () => {
    const proxy = await fakeProxy(() => {});
    await assert.rejects(openTunnel(route(`http://127.0.0.1:${proxy.port}`), 'evil.com\r\nX-Injected: 1', 443, new AbortController().signal, TIMEOUT_MS), TypeError);
    await assert.rejects(openTunnel(route(`http://127.0.0.1:${proxy.port}`), 'api.example.com', 0, new AbortController().signal, TIMEOUT_MS), TypeError);
    await settle();
    assert.equal(proxy.connections, 0);
    await proxy.close();
  });
});

test('proxyRequestHeaders: proxy-authorization only when the route has credentials', () => {
  assert.deepEqual(proxyRequestHeaders(route('http://p:1')), {});
  assert.deepEqual(proxyRequestHeaders(route('http://p:1', 'http_proxy', 'Basic YWxpY2U6czNjcmV0')), { 'proxy-authorization': 'Basic YWxpY2U6czNjcmV0' });
});
