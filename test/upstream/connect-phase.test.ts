import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ConnectState, watchConnectPhase } from '../../src/upstream/connect-phase.ts';
import { eventually } from '../support/eventually.ts';
import { startFakeUpstream, type FakeUpstream } from '../../src/testing/fake-upstream.ts';

let upstream: FakeUpstream;
let port = 0;

before(async () => {
  upstream = await startFakeUpstream((req, res) => {
    if (req.url === '/moved') {
      res.writeHead(307, { location: '/a' });
      res.end();
    } else res.end('ok');
  });
  port = upstream.port;
});

after(() => upstream.close());

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('watchConnectPhase', () => {
  test('a fresh connection: Connecting, then onConnected once, before the response', async () => {
    upstream.closeConnections();
    await tick();
    const events: string[] = [];
    const { result, state } = watchConnectPhase(
      () => fetch(`http://127.0.0.1:${port}/a`, { method: 'POST', body: '{}' }),
      () => events.push('connected'),
    );
    assert.equal(state, ConnectState.Connecting);
    assert.equal(events.length, 0);
    const response = await result;
    events.push('response');
    assert.equal(await response.text(), 'ok');
    assert.deepEqual(events, ['connected', 'response']);
  });

  test('a pooled connection: onConnected runs exactly once, during or right after the call', async () => {
    await (await fetch(`http://127.0.0.1:${port}/warm`)).text();
    await tick();
    let connected = 0;
    const { result, state } = watchConnectPhase(
      () => fetch(`http://127.0.0.1:${port}/b`),
      () => connected++,
    );
    assert.ok(state === ConnectState.Connected || state === ConnectState.Connecting, state);
    assert.equal(connected, state === ConnectState.Connected ? 1 : 0);
    await (await result).text();
    assert.equal(connected, 1);
  });

  test('a connection that never completes (TLS to a silent server): onConnected never runs', async () => {
    const sockets: Socket[] = [];
    const silent = createNetServer((socket) => sockets.push(socket));
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    try {
      let connected = 0;
      const controller = new AbortController();
      const { result, state } = watchConnectPhase(
        () => fetch(`https://127.0.0.1:${(silent.address() as AddressInfo).port}/`, { signal: controller.signal }),
        () => connected++,
      );
      assert.equal(state, ConnectState.Connecting);
      // As far as the connection gets: accepted over TCP, the handshake unanswered.
      await eventually(() => sockets.length === 1, 'the TCP connection');
      await tick();
      assert.equal(connected, 0);
      controller.abort();
      await assert.rejects(result, { name: 'AbortError' });
      assert.equal(connected, 0);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
      await once(silent, 'close');
    }
  });

  test('no fetch in start: Unobserved', () => {
    const { result, state, watch } = watchConnectPhase(() => 42, () => assert.fail('not connected'));
    assert.equal(result, 42);
    assert.equal(state, ConnectState.Unobserved);
    assert.equal(watch.responseStatus, undefined);
  });

  test('the response status is recorded once the headers arrive', async () => {
    const { result, watch } = watchConnectPhase(() => fetch(`http://127.0.0.1:${port}/f`, { method: 'POST', body: '{}' }), () => undefined);
    assert.equal(watch.responseStatus, undefined);
    const response = await result;
    assert.equal(watch.responseStatus, 200);
    assert.equal(await response.text(), 'ok');
  });

  test('the status of a redirect that redirect: error refused is still known', async () => {
    const { result, watch } = watchConnectPhase(
      () => fetch(`http://127.0.0.1:${port}/moved`, { method: 'POST', body: '{}', redirect: 'error' }),
      () => undefined,
    );
    await assert.rejects(result, { name: 'TypeError' });
    assert.equal(watch.responseStatus, 307);
  });

  test('a start that throws leaves no watch armed for the next fetch', async () => {
    assert.throws(() => watchConnectPhase(() => {
      throw new Error('boom');
    }, () => assert.fail('must not be called')), /boom/);
    // An unwatched fetch right after is not attributed to the failed call.
    await (await fetch(`http://127.0.0.1:${port}/c`)).text();
    let connected = 0;
    const { result } = watchConnectPhase(() => fetch(`http://127.0.0.1:${port}/d`), () => connected++);
    await (await result).text();
    assert.equal(connected, 1);
  });

  test('only the fetch made inside start is watched', async () => {
    let connected = 0;
    const { result } = watchConnectPhase(() => Promise.resolve(), () => connected++);
    await result;
    await (await fetch(`http://127.0.0.1:${port}/e`)).text();
    assert.equal(connected, 0);
  });
});
