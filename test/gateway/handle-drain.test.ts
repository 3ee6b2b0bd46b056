// shutdown() with requests that came through handle() on a host's server: it
// waits for them, refuses new ones with 503, ends those open at the deadline
// with the stream's error frame, and leaves the host's server serving. A
// client that leaves mid-stream stops the upstream call.
import assert from 'node:assert/strict';
import http from 'node:http';
import { afterEach, test } from 'node:test';
import { SHUTDOWN_REQUEST_MESSAGE, SHUTDOWN_STREAM_MESSAGE } from '../../src/http/request-context.ts';
import { request, sseData, startFakeUpstream, type FakeUpstream } from './harness.ts';
import { contentEvent, createGate, FINISH_EVENTS, openChat, streamContents } from './lifecycle-fixtures.ts';
import { startHostedGateway, type HostedGateway } from './handle-fixtures.ts';
import { eventually, within } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';

const STREAM_FRAME = JSON.stringify({ error: { message: SHUTDOWN_STREAM_MESSAGE, type: 'server_error', param: null, code: 'server_shutting_down' } });
const REFUSED_BODY = { error: { message: SHUTDOWN_REQUEST_MESSAGE, type: 'server_error', param: null, code: 'server_shutting_down' } };
const DEADLINE_MS = 2000;
const streamBody = { model: 'service-a', stream: true, messages: [{ role: 'user', content: 'hi' }] };

let open: Array<HostedGateway | FakeUpstream> = [];
afterEach(async () => {
  for (const thing of open) await thing.close();
  open = [];
});

async function setup(handle: FakeUpstream['handle'], scheduler?: ManualScheduler): Promise<{ hosted: HostedGateway; upstream: FakeUpstream }> {
  const upstream = await startFakeUpstream(handle);
  const hosted = await startHostedGateway({ upstreamUrl: upstream.baseUrl, ...(scheduler === undefined ? {} : { scheduler }) });
  open.push(hosted, upstream);
  return { hosted, upstream };
}

test('a stream through handle() still open at the deadline ends with the error frame; a request during the drain gets 503; the host server keeps serving', async () => {
  const scheduler = new ManualScheduler();
  const { hosted, upstream } = await setup((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(contentEvent('partial'));
    // and nothing more: a long generation
  }, scheduler);
  const stream = openChat(hosted.hostUrl, hosted.key, streamBody);
  await stream.firstBytes;
  const drained = hosted.gateway.shutdown(DEADLINE_MS);
  assert.equal(hosted.gateway.draining, true);
  const late = await request(hosted.hostUrl, 'GET', '/v1/models', { headers: { authorization: `Bearer ${hosted.key}` } });
  assert.equal(late.status, 503);
  assert.equal(late.headers['connection'], 'close');
  assert.deepEqual(late.json(), REFUSED_BODY);
  await scheduler.advance(DEADLINE_MS - 1);
  assert.equal(hosted.gateway.inFlight, 1, 'ended before the deadline');
  await scheduler.advance(1);
  assert.deepEqual(await within(drained, 'the drain'), { finished: 0, endedWithError: 1, refused: 1 });
  const res = await stream.response;
  assert.equal(res.status, 200);
  assert.deepEqual(streamContents(sseData(res.text)), ['partial', STREAM_FRAME]);
  await within(upstream.aborted, 'the upstream call to be aborted');
  await eventually(() => hosted.accessLines().some((l) => l['stream'] === true), 'the stream access line');
  const line = hosted.accessLines().find((l) => l['stream'] === true);
  assert.equal(line?.['status'], 200);
  assert.equal(line?.['error'], 'server_shutting_down');
  // The host's server was never closed: it still listens and its own route still answers.
  assert.equal(hosted.host.listening, true);
  const ping = await request(hosted.hostUrl, 'GET', '/host/ping');
  assert.equal(ping.text, 'host pong');
});

test('shutdown() waits for a stream through handle() that finishes within the deadline', async () => {
  const gate = createGate();
  const { hosted } = await setup(async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(contentEvent('one'));
    await gate.wait;
    res.end(contentEvent(' two') + FINISH_EVENTS);
  });
  const stream = openChat(hosted.hostUrl, hosted.key, streamBody);
  await stream.firstBytes;
  let settled = false;
  const drained = hosted.gateway.shutdown(60_000).finally(() => (settled = true));
  // Two turns of the host's own route: time for a drain that did not wait to end.
  assert.equal((await request(hosted.hostUrl, 'GET', '/host/ping')).status, 200);
  assert.equal((await request(hosted.hostUrl, 'GET', '/host/ping')).status, 200);
  assert.equal(settled, false);
  assert.equal(hosted.gateway.inFlight, 1);
  gate.open();
  const res = await stream.response;
  assert.deepEqual(streamContents(sseData(res.text)), ['one', ' two', '', '[DONE]']);
  assert.deepEqual(await drained, { finished: 1, endedWithError: 0, refused: 0 });
  assert.equal(hosted.host.listening, true);
});

test('a client that leaves mid-stream through handle() aborts the upstream call; its line says clientGone', async () => {
  const { hosted, upstream } = await setup((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(contentEvent('partial'));
  });
  const req = http.request(`${hosted.hostUrl}/v1/chat/completions`, {
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${hosted.key}`, 'x-request-id': 'gone-1' },
  });
  req.on('error', () => {});
  req.end(JSON.stringify(streamBody));
  const [res] = (await new Promise((resolve) => req.once('response', (r) => resolve([r])))) as [http.IncomingMessage];
  res.on('error', () => {});
  await new Promise((resolve) => res.once('data', resolve));
  req.destroy();
  await within(upstream.aborted, 'the upstream call to be aborted');
  await eventually(() => hosted.accessLines().some((l) => l['requestId'] === 'gone-1'), 'the access line');
  const line = hosted.accessLines().find((l) => l['requestId'] === 'gone-1');
  assert.equal(line?.['clientGone'], true);
  assert.equal(line?.['completed'], false);
  assert.equal(hosted.gateway.inFlight, 0);
});
