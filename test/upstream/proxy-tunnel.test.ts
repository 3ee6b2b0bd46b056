// The CONNECT tunnel against fake proxies, for what a real one does not do on
// demand: close or reset without answering, say nothing, answer with
// something that is not HTTP. Every failure happens exactly once: the fake
// proxy counts the connections it got. Against a real tinyproxy:
// proxy-tunnel.system.test.ts.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { after, describe, test } from 'node:test';
import { proxyAuthorization } from '../../src/config/proxy-env.ts';
import { openTunnel, proxyRequestHeaders } from '../../src/upstream/proxy-tunnel.ts';
import { eventually } from '../support/eventually.ts';
import { listen, portOf, rejection, route, TIMEOUT_MS } from './proxy-fixtures.ts';
import { refusedPort } from './refused-port.ts';

interface FakeProxy {
  port: number;
  /** Connections accepted so far (the marker connections of connectionsSoFar() left out). */
  readonly connections: number;
  /**
   * The connections accepted before now, counted once a connection of the
   * test's own has been accepted: loopback accepts connections in the order
   * they were opened, so one the code under test opened earlier (a retry in
   * a loop) is counted, without waiting for one that may never come.
   */
  connectionsSoFar(): Promise<number>;
  received(): string;
  close(): Promise<void>;
}

const fakes: FakeProxy[] = [];
// Also when a test fails before its own close(): a listening fake would keep the file running.
after(() => Promise.all(fakes.map((fake) => fake.close())));

/** A fake proxy: records each connection's bytes and answers with `behave`. Closed after the file if not before. */
async function fakeProxy(behave: (socket: Socket) => void): Promise<FakeProxy> {
  /** The client port of each connection, in the order accepted. */
  const accepted: number[] = [];
  const markers = new Set<number>();
  const sockets = new Set<Socket>();
  let bytes = '';
  const server = await listen(createServer((socket) => {
    accepted.push(socket.remotePort ?? -1);
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      bytes += chunk.toString('latin1');
    });
    socket.on('close', () => sockets.delete(socket));
    behave(socket);
  }));
  const port = portOf(server);
  const counted = (ports: readonly number[]): number => ports.filter((p) => !markers.has(p)).length;
  let closing: Promise<void> | undefined;
  const fake: FakeProxy = {
    port,
    get connections() {
      return counted(accepted);
    },
    async connectionsSoFar() {
      const marker = connect(port, '127.0.0.1');
      await once(marker, 'connect');
      const markerPort = marker.localPort ?? -1;
      markers.add(markerPort);
      await eventually(() => accepted.includes(markerPort), 'the marker connection at the fake proxy');
      marker.destroy();
      return counted(accepted.slice(0, accepted.indexOf(markerPort)));
    },
    received: () => bytes,
    close() {
      closing ??= new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      });
      return closing;
    },
  };
  fakes.push(fake);
  return fake;
}

describe('against fake proxies', () => {
  test('accepts and closes without answering: ERR_PROXY_CLOSED, one connection, no retry', async () => {
    const proxy = await fakeProxy((socket) => socket.once('data', () => socket.end()));
    const error = await rejection(openTunnel(route(`http://127.0.0.1:${proxy.port}`), 'api.example.com', 443, new AbortController().signal, TIMEOUT_MS));
    assert.equal(error.code, 'ERR_PROXY_CLOSED');
    assert.equal(error.message, `The egress proxy 127.0.0.1:${proxy.port} (HTTPS_PROXY) closed the connection without answering CONNECT api.example.com:443. Check the proxy's log for why it dropped the request (often an access rule or the destination port).`);
    assert.equal(await proxy.connectionsSoFar(), 1);
    await proxy.close();
  });

  test('resets the connection: ERR_PROXY_CLOSED with the cause, one connection', async () => {
    const proxy = await fakeProxy((socket) => socket.once('data', () => socket.resetAndDestroy()));
    const error = await rejection(openTunnel(route(`http://127.0.0.1:${proxy.port}`), 'api.example.com', 443, new AbortController().signal, TIMEOUT_MS));
    assert.equal(error.code, 'ERR_PROXY_CLOSED');
    assert.equal((error.cause as NodeJS.ErrnoException).code, 'ECONNRESET');
    assert.match(error.message, /^The egress proxy 127\.0\.0\.1:\d+ \(HTTPS_PROXY\) reset the connection before answering CONNECT api\.example\.com:443: ECONNRESET/);
    assert.equal(await proxy.connectionsSoFar(), 1);
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
    await eventually(() => proxy.received() !== '', 'the CONNECT at the proxy');
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
    assert.equal(await proxy.connectionsSoFar(), 0);
    await proxy.close();
  });

  test('a target that could inject a header is refused before connecting', async () => {
    const proxy = await fakeProxy(() => {});
    await assert.rejects(openTunnel(route(`http://127.0.0.1:${proxy.port}`), 'evil.com\r\nX-Injected: 1', 443, new AbortController().signal, TIMEOUT_MS), TypeError);
    await assert.rejects(openTunnel(route(`http://127.0.0.1:${proxy.port}`), 'api.example.com', 0, new AbortController().signal, TIMEOUT_MS), TypeError);
    assert.equal(await proxy.connectionsSoFar(), 0);
    await proxy.close();
  });
});

test('proxyRequestHeaders: proxy-authorization only when the route has credentials', () => {
  assert.deepEqual(proxyRequestHeaders(route('http://p:1')), {});
  assert.deepEqual(proxyRequestHeaders(route('http://p:1', 'http_proxy', 'Basic YWxpY2U6czNjcmV0')), { 'proxy-authorization': 'Basic YWxpY2U6czNjcmV0' });
});
