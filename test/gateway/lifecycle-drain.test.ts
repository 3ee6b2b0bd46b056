// gateway.shutdown: stop accepting, let open requests and streams finish,
// end those still open at the deadline with an error the client sees (a
// final error frame on a stream, a 503 otherwise), answer a request that
// still arrives on a kept-alive connection with 503 and close it.
// Each test shuts its own gateway down.
import assert from 'node:assert/strict';
import net from 'node:net';
import { afterEach, test } from 'node:test';
import { SHUTDOWN_REQUEST_MESSAGE, SHUTDOWN_STREAM_MESSAGE } from '../../src/http/request-context.ts';
import { request, sseData, startFakeUpstream, type FakeUpstream } from './harness.ts';
import {
  contentEvent,
  createGate,
  fakeProvider,
  FINISH_EVENTS,
  openChat,
  startLifecycleGateway,
  streamContents,
  type LifecycleGateway,
} from './lifecycle-fixtures.ts';
import { eventually, within } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';

const STREAM_FRAME = JSON.stringify({ error: { message: SHUTDOWN_STREAM_MESSAGE, type: 'server_error', param: null, code: 'server_shutting_down' } });
const REQUEST_BODY = { error: { message: SHUTDOWN_REQUEST_MESSAGE, type: 'server_error', param: null, code: 'server_shutting_down' } };

let open: Array<LifecycleGateway | FakeUpstream> = [];
afterEach(async () => {
  for (const thing of open) await thing.close();
  open = [];
});

/** The drain deadline of the tests that reach it, on their manual scheduler. */
const DEADLINE_MS = 2000;

async function setup(handle: FakeUpstream['handle'], scheduler?: ManualScheduler): Promise<{ gw: LifecycleGateway; upstream: FakeUpstream }> {
  const upstream = await startFakeUpstream(handle);
  const gw = await startLifecycleGateway(
    {
      providers: { up: fakeProvider(upstream.baseUrl) },
      aliases: { 'service-a': { provider: 'up', model: 'model-a' } },
      auto: { default: 'service-a' },
    },
    scheduler === undefined ? {} : { scheduler },
  );
  open.push(gw, upstream);
  return { gw, upstream };
}

const streamBody = { model: 'service-a', stream: true, messages: [{ role: 'user', content: 'hi' }] };

function connectError(baseUrl: string): Promise<string> {
  return request(baseUrl, 'GET', '/v1/models').then(
    () => 'connected',
    (err: NodeJS.ErrnoException) => err.code ?? 'error',
  );
}

test('a stream that finishes within the deadline ends with [DONE]; new connections are refused meanwhile', async () => {
  const gate = createGate();
  const { gw } = await setup(async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(contentEvent('one'));
    await gate.wait;
    res.end(contentEvent(' two') + FINISH_EVENTS);
  });
  const stream = openChat(gw.baseUrl, gw.key, streamBody);
  await stream.firstBytes;
  const drained = gw.gateway.shutdown(60_000);
  assert.equal(await connectError(gw.baseUrl), 'ECONNREFUSED');
  gate.open();
  const res = await stream.response;
  assert.deepEqual(streamContents(sseData(res.text)), ['one', ' two', '', '[DONE]']);
  assert.deepEqual(await drained, { finished: 1, endedWithError: 0, refused: 0 });
});

test('a stream still open at the deadline ends with the shutdown error frame, never [DONE], and its upstream call is aborted', async () => {
  const scheduler = new ManualScheduler();
  const { gw, upstream } = await setup((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(contentEvent('partial'));
    // and nothing more: a long generation
  }, scheduler);
  const stream = openChat(gw.baseUrl, gw.key, streamBody);
  await stream.firstBytes;
  const drained = gw.gateway.shutdown(DEADLINE_MS);
  await scheduler.advance(DEADLINE_MS - 1);
  assert.equal(gw.gateway.inFlight, 1, 'ended before the deadline');
  await scheduler.advance(1);
  const report = await within(drained, 'the drain');
  assert.deepEqual(report, { finished: 0, endedWithError: 1, refused: 0 });
  const res = await stream.response;
  assert.equal(res.status, 200);
  assert.ok(res.text.endsWith(`\n\ndata: ${STREAM_FRAME}\n\n`), res.text);
  assert.deepEqual(streamContents(sseData(res.text)), ['partial', STREAM_FRAME]);
  await within(upstream.aborted, 'the upstream call to be aborted');
  await eventually(() => gw.logs.some((l) => l['msg'] === 'request' && l['stream'] === true), 'the access line');
  const line = gw.logs.find((l) => l['msg'] === 'request' && l['stream'] === true);
  assert.equal(line?.['status'], 200);
  assert.equal(line?.['error'], 'server_shutting_down');
  assert.equal(line?.['clientGone'], undefined);
});

test('a request still waiting for its upstream at the deadline is answered 503 server_shutting_down with connection: close', async () => {
  const scheduler = new ManualScheduler();
  const { gw, upstream } = await setup(() => {
    // never answers
  }, scheduler);
  const pending = request(gw.baseUrl, 'POST', '/v1/chat/completions', {
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}` },
    body: JSON.stringify({ model: 'service-a', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await eventually(() => upstream.requests.length === 1, 'the upstream call');
  const drained = gw.gateway.shutdown(DEADLINE_MS);
  await scheduler.advance(DEADLINE_MS - 1);
  assert.equal(gw.gateway.inFlight, 1, 'answered before the deadline');
  await scheduler.advance(1);
  const report = await within(drained, 'the drain');
  assert.deepEqual(report, { finished: 0, endedWithError: 1, refused: 0 });
  const res = await pending;
  assert.equal(res.status, 503);
  assert.equal(res.headers['connection'], 'close');
  assert.deepEqual(res.json(), REQUEST_BODY);
  await within(upstream.aborted, 'the upstream call to be aborted');
});

test('endShutdownNow (a second signal) ends the open streams at once instead of at the deadline', async () => {
  const { gw } = await setup((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(contentEvent('partial'));
  });
  const stream = openChat(gw.baseUrl, gw.key, streamBody);
  await stream.firstBytes;
  // A deadline no test would wait for: only endShutdownNow can end this drain.
  const drained = gw.gateway.shutdown(600_000);
  gw.gateway.endShutdownNow();
  assert.deepEqual(await drained, { finished: 0, endedWithError: 1, refused: 0 });
  assert.deepEqual(streamContents(sseData((await stream.response).text)), ['partial', STREAM_FRAME]);
});

test('a request arriving during the drain on a connection kept alive from before is answered 503 with connection: close', async () => {
  const gate = createGate();
  const { gw } = await setup(async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(contentEvent('one'));
    await gate.wait;
    res.end(FINISH_EVENTS);
  });
  const port = Number(new URL(gw.baseUrl).port);
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (text: string) => {
    received += text;
  });
  const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  const body = JSON.stringify(streamBody);
  socket.write(
    `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nauthorization: Bearer ${gw.key}\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  await eventually(() => received.includes('"one"'), 'the first event');
  const drained = gw.gateway.shutdown(60_000);
  socket.write(`GET /v1/models HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${gw.key}\r\nx-request-id: late-1\r\n\r\n`);
  await eventually(() => gw.gateway.inFlight === 2, 'the late request');
  gate.open();
  await ended;
  const second = received.indexOf('HTTP/1.1 503 Service Unavailable\r\n');
  assert.ok(second > 0, received);
  assert.ok(received.slice(0, second).includes('data: [DONE]\n\n'), 'the stream finished first');
  const late = received.slice(second);
  const [head, text] = late.split('\r\n\r\n') as [string, string];
  const headers = head.split('\r\n').slice(1).map((h) => h.toLowerCase());
  assert.ok(headers.includes('connection: close'), head);
  assert.ok(headers.includes('x-request-id: late-1'), head);
  assert.deepEqual(JSON.parse(text), REQUEST_BODY);
  assert.deepEqual(await drained, { finished: 1, endedWithError: 0, refused: 1 });
});
