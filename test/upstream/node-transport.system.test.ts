// What only the node transport does: the proxy hook (an https target through a
// CONNECT tunnel with TLS over it, a plain-http target in absolute form, the
// tunnel's ERR_PROXY_ failures), idle pooled sockets closing by themselves,
// and refusing a content coding it did not ask for. The proxy here is a small
// fake (a net server that answers CONNECT); the real one is tested with the
// tunnel code itself.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { loadClientTls } from '../../src/config/tls-files.ts';
import { failureCauseOf } from '../../src/upstream/failure-cause.ts';
import { createNodeTransport, type ProxyHook } from '../../src/upstream/node-transport.ts';
import { createTestPki, type TestPki } from '../tls/test-pki.ts';
import { answer, call, collect, completion, failure, json, provider, rendered, startUpstream, type TestUpstream } from './transport-fixtures.ts';

/** A forward proxy that answers CONNECT with 200 and then relays bytes. */
async function startConnectProxy(): Promise<{ port: number; connects: string[]; close(): Promise<void> }> {
  const connects: string[] = [];
  const sockets = new Set<Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('error', () => undefined);
    let head = Buffer.alloc(0);
    const onData = (data: Buffer): void => {
      head = Buffer.concat([head, data]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) return;
      client.off('data', onData);
      const line = head.subarray(0, head.indexOf('\r\n')).toString('latin1');
      connects.push(line);
      const [host, port] = (line.split(' ')[1] ?? '').split(':');
      const upstream = net.connect(Number(port), host, () => {
        client.write('HTTP/1.1 200 Connection established\r\n\r\n');
        const rest = head.subarray(end + 4);
        if (rest.length > 0) upstream.write(rest);
        client.pipe(upstream).pipe(client);
      });
      sockets.add(upstream);
      upstream.on('error', () => client.destroy());
    };
    client.on('data', onData);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    connects,
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

/** openTunnel as the proxy module does it, minimal: CONNECT, read the status line, hand over the socket. */
function tunnelThrough(proxyPort: number, calls: Array<{ host: string; port: number; timeoutMs: number; signal: AbortSignal }>): ProxyHook['openTunnel'] {
  return (host, port, signal, timeoutMs) => {
    calls.push({ host, port, timeoutMs, signal });
    return new Promise((resolve, reject) => {
      const socket = net.connect(proxyPort, '127.0.0.1', () => socket.write(`CONNECT ${host}:${port} HTTP/1.1\r\nhost: ${host}:${port}\r\n\r\n`));
      socket.on('error', reject);
      signal.addEventListener('abort', () => socket.destroy(), { once: true });
      let head = '';
      const onData = (data: Buffer): void => {
        head += data.toString('latin1');
        if (!head.includes('\r\n\r\n')) return;
        socket.off('data', onData);
        if (head.startsWith('HTTP/1.1 200')) resolve(socket);
        else reject(Object.assign(new Error('refused'), { code: 'ERR_PROXY_REFUSED', proxyStatus: Number(head.slice(9, 12)) }));
      };
      socket.on('data', onData);
    });
  };
}

function proxyError(code: string, proxyStatus?: number): Error {
  return Object.assign(new Error(`the proxy failed: ${code}`), { code }, proxyStatus === undefined ? {} : { proxyStatus });
}

let pki: TestPki;
let secure: TestUpstream;
let plain: TestUpstream;

before(async () => {
  pki = createTestPki();
  const internal = pki.server('internal', ['upstream.internal']);
  secure = await startUpstream(answer, { cert: internal.cert, key: internal.key });
  plain = await startUpstream(answer);
});

after(async () => {
  await Promise.all([secure.close(), plain.close()]);
  pki.cleanup();
});

const tlsFor = (serverName: string | null, caFile: string | null = pki.caFile) =>
  loadClientTls(null, 'providers.up.tls', { caFile, certFile: null, keyFile: null, serverName, minVersion: 'TLSv1.2' }, process.env);

describe('the proxy hook', () => {
  test('an https target: one CONNECT tunnel, TLS over it with serverName and caFile, reused by the next call', async () => {
    const proxy = await startConnectProxy();
    try {
      const calls: Array<{ host: string; port: number; timeoutMs: number; signal: AbortSignal }> = [];
      const hook: ProxyHook = { url: new URL(`http://127.0.0.1:${proxy.port}`), authorization: undefined, openTunnel: tunnelThrough(proxy.port, calls) };
      const transport = createNodeTransport({ tls: tlsFor('upstream.internal'), proxy: hook, connectTimeoutMs: 1234 });
      const p = provider(transport, secure.baseUrl);
      const before = secure.connections;
      assert.equal((await p.complete(call())).choices[0]?.message.content, 'Hi there');
      assert.equal((await collect(p.stream(call(true)))).length, 2);
      assert.deepEqual(proxy.connects, [`CONNECT 127.0.0.1:${secure.port} HTTP/1.1`]);
      assert.deepEqual(calls.map((c) => [c.host, c.port, c.timeoutMs]), [['127.0.0.1', secure.port, 1234]]);
      assert.equal(secure.connections - before, 1);
    } finally {
      await proxy.close();
    }
  });

  test('the certificate is still checked through the tunnel: without the CA it is upstream_tls_failed', async () => {
    const proxy = await startConnectProxy();
    try {
      const hook: ProxyHook = { url: new URL(`http://127.0.0.1:${proxy.port}`), authorization: undefined, openTunnel: tunnelThrough(proxy.port, []) };
      const error = await failure(provider(createNodeTransport({ tls: tlsFor('upstream.internal', null), proxy: hook }), secure.baseUrl).complete(call()));
      assert.deepEqual(rendered(error).code, 'upstream_tls_failed');
    } finally {
      await proxy.close();
    }
  });

  for (const [code, status, detail] of [
    ['ERR_PROXY_REFUSED', 407, 'status_407'],
    ['ERR_PROXY_REFUSED', 403, 'status_403'],
    ['ERR_PROXY_CLOSED', undefined, 'ERR_PROXY_CLOSED'],
    ['ERR_PROXY_UNREACHABLE', undefined, 'ERR_PROXY_UNREACHABLE'],
    ['ERR_PROXY_TIMEOUT', undefined, 'ERR_PROXY_TIMEOUT'],
  ] as const) {
    test(`a tunnel that fails with ${code}${status === undefined ? '' : ` ${status}`} is 502 upstream_proxy_failed, tried once, logged as proxy ${detail}`, async () => {
      let tries = 0;
      const hook: ProxyHook = {
        url: new URL('http://127.0.0.1:9'),
        authorization: undefined,
        openTunnel: () => {
          tries++;
          return Promise.reject(proxyError(code, status));
        },
      };
      const p = provider(createNodeTransport({ proxy: hook }), secure.baseUrl);
      for (const attempt of [() => p.complete(call()), () => collect(p.stream(call(true)))]) {
        const error = await failure(attempt());
        assert.deepEqual(rendered(error), { status: 502, code: 'upstream_proxy_failed', message: 'The egress proxy did not connect the gateway to the upstream provider.' });
        assert.deepEqual(failureCauseOf(error), { kind: 'proxy', detail, address: `127.0.0.1:${secure.port}` });
      }
      assert.equal(tries, 2);
    });
  }

  test('a tunnel that does not open within connectTimeoutMs is 504; its signal is aborted', async () => {
    let seen: AbortSignal | undefined;
    const hook: ProxyHook = {
      url: new URL('http://127.0.0.1:9'),
      authorization: undefined,
      openTunnel: (_host, _port, signal) => {
        seen = signal;
        return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(proxyError('ERR_PROXY_TIMEOUT')), { once: true }));
      },
    };
    const error = await failure(provider(createNodeTransport({ proxy: hook }), secure.baseUrl, { connectTimeoutMs: 100 }).complete(call()));
    assert.deepEqual(rendered(error), { status: 504, code: 'upstream_timeout', message: 'The upstream provider did not accept a connection within 100 ms.' });
    assert.equal(seen?.aborted, true);
  });

  test('a plain-http target goes to the proxy in absolute form, with Host and proxy-authorization', async () => {
    const received: Array<{ url: string | undefined; host: string | undefined; auth: string | undefined }> = [];
    const proxy = http.createServer((req, res) => {
      received.push({ url: req.url, host: req.headers.host, auth: req.headers['proxy-authorization'] });
      req.resume();
      req.on('end', () => answer(req, res));
    });
    proxy.listen(0, '127.0.0.1');
    await once(proxy, 'listening');
    try {
      const port = (proxy.address() as AddressInfo).port;
      const hook: ProxyHook = {
        url: new URL(`http://127.0.0.1:${port}`),
        authorization: 'Basic dXNlcjpwYXNz',
        openTunnel: () => Promise.reject(new Error('no tunnel for http')),
      };
      const p = provider(createNodeTransport({ proxy: hook }), 'http://upstream.example:8080/v1');
      assert.equal((await p.complete(call())).choices[0]?.message.content, 'Hi there');
      assert.equal((await collect(p.stream(call(true)))).length, 2);
      const expected = { url: 'http://upstream.example:8080/v1/chat/completions', host: 'upstream.example:8080', auth: 'Basic dXNlcjpwYXNz' };
      assert.deepEqual(received, [expected, expected]);
    } finally {
      proxy.closeAllConnections();
      proxy.close();
    }
  });
});

describe('pooled sockets', () => {
  test('an idle pooled socket closes after idleSocketMs; the next call opens a new one', async () => {
    const own = await startUpstream(answer);
    try {
      const p = provider(createNodeTransport({ idleSocketMs: 100 }), own.baseUrl);
      await p.complete(call());
      const first = own.sockets[0] as Socket;
      const started = performance.now();
      await once(first, 'close');
      const waited = performance.now() - started;
      assert.ok(waited >= 50 && waited < 5000, String(waited));
      await p.complete(call());
      assert.equal(own.connections, 2);
    } finally {
      await own.close();
    }
  });

  test('a socket in use is not closed by the idle timeout: a slow answer still arrives', async () => {
    const own = await startUpstream((req, res) => {
      setTimeout(() => answer(req, res), 300);
    });
    try {
      const p = provider(createNodeTransport({ idleSocketMs: 100 }), own.baseUrl);
      assert.equal((await p.complete(call())).choices[0]?.message.content, 'Hi there');
    } finally {
      await own.close();
    }
  });
});

test('a compressed answer the node transport did not ask for is 502 bad_upstream_response', async () => {
  plain.received.length = 0;
  plain.handle = (_req, res) => json(res, 200, completion, { 'content-encoding': 'gzip' });
  try {
    const error = await failure(provider(createNodeTransport(), plain.baseUrl).complete(call()));
    assert.deepEqual(rendered(error), {
      status: 502,
      code: 'bad_upstream_response',
      message: 'The upstream provider answered with content-encoding "gzip" though the gateway asked for none.',
    });
    assert.equal(plain.received[0]?.headers['accept-encoding'], 'identity');
  } finally {
    plain.handle = answer;
  }
});
