// gateway.handle(req, res, next?) on a host's own node:http server: the API
// routes beside the host's routes, under a base path or an Express-style
// mount, next() for what the gateway does not serve, and the same access line
// as the standalone listener's for the same request.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, test } from 'node:test';
import { request, startFakeUpstream, type FakeUpstream } from './harness.ts';
import { completionBody, fakeProvider } from './lifecycle-fixtures.ts';
import { hostWithNext, startHostedGateway, withoutIdentity, type HostedGateway, type HostedOptions, type HostListener } from './handle-fixtures.ts';
import { listenLocal } from './harness.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { createGateway } from '../../src/gateway/gateway.ts';
import { createLogger } from '../../src/log/logger.ts';
import { openFileBackend } from '../../src/state/file-backend.ts';
import { eventually } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';

let open: Array<HostedGateway | FakeUpstream> = [];
afterEach(async () => {
  for (const thing of open) await thing.close();
  open = [];
});

async function setup(options: Omit<HostedOptions, 'upstreamUrl'> = {}, answer?: FakeUpstream['handle']): Promise<{ hosted: HostedGateway; upstream: FakeUpstream }> {
  const upstream = await startFakeUpstream(
    answer ??
      ((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(completionBody('hello'));
      }),
  );
  const hosted = await startHostedGateway({ upstreamUrl: upstream.baseUrl, ...options });
  open.push(hosted, upstream);
  return { hosted, upstream };
}

function chat(hosted: HostedGateway, urlPath: string, requestId: string): ReturnType<typeof request> {
  return request(hosted.hostUrl, 'POST', urlPath, {
    headers: { 'content-type': 'application/json', authorization: `Bearer ${hosted.key}`, 'x-request-id': requestId },
    body: JSON.stringify({ model: 'service-a', messages: [{ role: 'user', content: 'hi' }] }),
  });
}

async function lineOf(hosted: HostedGateway, requestId: string): Promise<Record<string, unknown>> {
  await eventually(() => hosted.accessLines().some((l) => l['requestId'] === requestId), `the access line of ${requestId}`);
  return hosted.accessLines().find((l) => l['requestId'] === requestId) as Record<string, unknown>;
}

const unknownUrl = (method: string, path: string): unknown => ({ error: { message: `Unknown request URL: ${method} ${path}.`, type: 'invalid_request_error', param: null, code: 'unknown_url' } });

test('in a plain http.createServer beside a route of the host: the chat route answers, the host route stays the host', async () => {
  const { hosted, upstream } = await setup();
  const ping = await request(hosted.hostUrl, 'GET', '/host/ping');
  assert.equal(ping.status, 200);
  assert.equal(ping.text, 'host pong');
  const res = await chat(hosted, '/v1/chat/completions', 'h-1');
  assert.equal(res.status, 200);
  assert.equal(res.headers['x-request-id'], 'h-1');
  assert.equal((res.json() as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content, 'hello');
  assert.equal(upstream.requests.length, 1);
  const line = await lineOf(hosted, 'h-1');
  assert.equal(line['path'], '/v1/chat/completions');
  assert.equal(line['status'], 200);
  assert.equal(line['keyId'], hosted.keyId);
  assert.equal(line['completed'], true);
  assert.deepEqual(hosted.seen, ['host /host/ping']);
  // The host's route never reached the gateway: one access line, the chat's.
  assert.equal(hosted.accessLines().length, 1);
  assert.equal(hosted.gateway.server.listening, false);
});

test("the client address behind a trusted proxy is X-Forwarded-For's, as on the listener (listen.trustedProxies)", async () => {
  const { hosted } = await setup({ config: { listen: { trustedProxies: ['127.0.0.1'] } } });
  const res = await request(hosted.hostUrl, 'GET', '/healthz', { headers: { 'x-forwarded-for': '203.0.113.9', 'x-request-id': 'xff-1' } });
  assert.equal(res.status, 200);
  assert.equal((await lineOf(hosted, 'xff-1'))['client'], '203.0.113.9');
});

test('a path no route knows, without next(): the gateway 404 JSON naming the path', async () => {
  const { hosted } = await setup();
  const res = await request(hosted.hostUrl, 'GET', '/v1/nothing-here?x=1');
  assert.equal(res.status, 404);
  assert.deepEqual(res.json(), unknownUrl('GET', '/v1/nothing-here'));
  assert.equal(typeof res.headers['x-request-id'], 'string');
});

test('under basePath "/llm" on a raw server: routed with the prefix taken off; the access line and the 404s name the path the client sent', async () => {
  const { hosted } = await setup({ basePath: '/llm' });
  const res = await chat(hosted, '/llm/v1/chat/completions', 'bp-1');
  assert.equal(res.status, 200);
  assert.equal((await lineOf(hosted, 'bp-1'))['path'], '/llm/v1/chat/completions');
  const models = await request(hosted.hostUrl, 'GET', '/llm/v1/models?limit=5', { headers: { authorization: `Bearer ${hosted.key}` } });
  assert.equal(models.status, 200);
  assert.deepEqual(
    (models.json() as { data: Array<{ id: string }> }).data.map((m) => m.id),
    ['service-a', 'service-auto'],
  );
  const health = await request(hosted.hostUrl, 'GET', '/llm/healthz');
  assert.equal(health.status, 200);
  // The API's own paths without the prefix are not the gateway's here.
  const bare = await request(hosted.hostUrl, 'GET', '/v1/models', { headers: { authorization: `Bearer ${hosted.key}` } });
  assert.equal(bare.status, 404);
  assert.deepEqual(bare.json(), unknownUrl('GET', '/v1/models'));
  // A prefix of a segment is not the base path.
  const near = await request(hosted.hostUrl, 'GET', '/llmx/v1/models', { headers: { authorization: `Bearer ${hosted.key}` } });
  assert.equal(near.status, 404);
  assert.deepEqual(near.json(), unknownUrl('GET', '/llmx/v1/models'));
  const inside = await request(hosted.hostUrl, 'GET', '/llm/v1/nothing-here?q=1', { headers: { 'x-request-id': 'bp-404' } });
  assert.equal(inside.status, 404);
  assert.deepEqual(inside.json(), unknownUrl('GET', '/llm/v1/nothing-here'));
  assert.equal((await lineOf(hosted, 'bp-404'))['path'], '/llm/v1/nothing-here');
});

test('with next(): a path outside basePath or one no route knows goes on to the host; a known path with a wrong method is the gateway 405', async () => {
  const { hosted } = await setup({ basePath: '/llm', listener: hostWithNext });
  const elsewhere = await request(hosted.hostUrl, 'GET', '/elsewhere');
  assert.equal(elsewhere.status, 404);
  assert.equal(elsewhere.text, 'the host has no such page');
  const unknown = await request(hosted.hostUrl, 'POST', '/llm/v1/unknown?q=1', { body: '{}' });
  assert.equal(unknown.text, 'the host has no such page');
  const bare = await request(hosted.hostUrl, 'GET', '/v1/models');
  assert.equal(bare.text, 'the host has no such page');
  const models = await request(hosted.hostUrl, 'GET', '/llm/v1/models', { headers: { authorization: `Bearer ${hosted.key}` } });
  assert.equal(models.status, 200);
  const wrongMethod = await request(hosted.hostUrl, 'DELETE', '/llm/v1/models?x=1');
  assert.equal(wrongMethod.status, 405);
  assert.equal(wrongMethod.headers['allow'], 'GET, HEAD');
  assert.equal((wrongMethod.json() as { error: { message: string } }).error.message, 'Method DELETE is not allowed on /llm/v1/models; allowed: GET, HEAD.');
  assert.deepEqual(hosted.seen, ['next GET /elsewhere', 'next POST /llm/v1/unknown?q=1', 'next GET /v1/models']);
  // next() leaves no access line: only the two answers the gateway gave have one.
  await eventually(() => hosted.accessLines().length === 2, 'two access lines');
  assert.deepEqual(
    hosted.accessLines().map((l) => [l['method'], l['path'], l['status']]),
    [
      ['GET', '/llm/v1/models', 200],
      ['DELETE', '/llm/v1/models', 405],
    ],
  );
});

test("OPTIONS on a gateway route under basePath is the gateway's 405, not next(): a host's CORS preflight goes before handle()", async () => {
  const { hosted } = await setup({ basePath: '/llm', listener: hostWithNext });
  const preflight = await request(hosted.hostUrl, 'OPTIONS', '/llm/v1/chat/completions', { headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
  assert.equal(preflight.status, 405);
  assert.equal(preflight.headers['allow'], 'POST');
  assert.equal(preflight.headers['access-control-allow-origin'], undefined);
  assert.equal((preflight.json() as { error: { message: string } }).error.message, 'Method OPTIONS is not allowed on /llm/v1/chat/completions; allowed: POST.');
  assert.deepEqual(hosted.seen, []);
});

test('an Express mount that takes the prefix off req.url itself is served with basePath ""; the log and errors name req.originalUrl', async () => {
  // What Express's app.use('/mounted', ...) does: req.url loses the prefix, req.originalUrl keeps what the client sent.
  const mounted: HostListener = (gateway) => (req, res) => {
    const url = req.url ?? '/';
    if (!url.startsWith('/mounted/')) {
      res.writeHead(404).end();
      return;
    }
    Object.assign(req, { originalUrl: url });
    req.url = url.slice('/mounted'.length);
    gateway.handle(req, res);
  };
  const { hosted } = await setup({ listener: mounted });
  const res = await chat(hosted, '/mounted/v1/chat/completions', 'm-1');
  assert.equal(res.status, 200);
  assert.equal((await lineOf(hosted, 'm-1'))['path'], '/mounted/v1/chat/completions');
  const wrongMethod = await request(hosted.hostUrl, 'PUT', '/mounted/v1/chat/completions?stream=1', { body: '{}', headers: { 'x-request-id': 'm-405' } });
  assert.equal(wrongMethod.status, 405);
  assert.equal((wrongMethod.json() as { error: { message: string } }).error.message, 'Method PUT is not allowed on /mounted/v1/chat/completions; allowed: POST.');
  assert.equal((await lineOf(hosted, 'm-405'))['path'], '/mounted/v1/chat/completions');
  const unknown = await request(hosted.hostUrl, 'GET', '/mounted/v1/nothing-here');
  assert.deepEqual(unknown.json(), unknownUrl('GET', '/mounted/v1/nothing-here'));
});

test('a basePath that is not a path prefix is refused, naming what to write', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-handle-'));
  const state = openFileBackend(dataDir, { watch: false });
  try {
    const config = parseConfig({ dataDir, providers: { up: fakeProvider('http://127.0.0.1:9') }, aliases: { 'service-a': { provider: 'up', model: 'model-a' } } }, null, dataDir);
    const logger = createLogger({ write: () => {} });
    for (const basePath of ['llm', '/llm/', '/llm?x', '/llm#a']) {
      assert.throws(() => createGateway({ config, state, logger, env: { UPSTREAM_KEY: 'k' }, basePath }), {
        message: `basePath "${basePath}" must be "" or a path that starts with "/" and has no trailing "/", "?" or "#" (for example "/llm")`,
      });
    }
  } finally {
    await state.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('the access line of a request through handle() is the standalone listener line for the same request, timings included', async () => {
  const scheduler = new ManualScheduler();
  const { hosted } = await setup({ scheduler }, async (_req, res) => {
    // Time to first byte and total: 7 ms on the gateway's clock, whichever server the request came through.
    await scheduler.advance(7);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(completionBody('hello'));
  });
  const address = await listenLocal(hosted.gateway);
  const standalone = await request(`http://127.0.0.1:${address.port}`, 'POST', '/v1/chat/completions', {
    headers: { 'content-type': 'application/json', authorization: `Bearer ${hosted.key}`, 'x-request-id': 'same-std' },
    body: JSON.stringify({ model: 'service-a', messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(standalone.status, 200);
  const viaHost = await chat(hosted, '/v1/chat/completions', 'same-host');
  assert.equal(viaHost.status, 200);
  const std = await lineOf(hosted, 'same-std');
  const host = await lineOf(hosted, 'same-host');
  assert.equal(std['ttfbMs'], 7);
  assert.equal(std['totalMs'], 7);
  // upstreamMs is the upstream exchange's own wall-clock reading, not the shell's clock.
  const { upstreamMs: hostUpstreamMs, ...hostRest } = withoutIdentity(host);
  const { upstreamMs: stdUpstreamMs, ...stdRest } = withoutIdentity(std);
  assert.equal(typeof hostUpstreamMs, 'number');
  assert.equal(typeof stdUpstreamMs, 'number');
  assert.deepEqual(hostRest, stdRest);
  hosted.gateway.server.closeAllConnections();
});
