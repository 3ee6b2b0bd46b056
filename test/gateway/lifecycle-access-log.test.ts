// The access line: one per request, one shape (every field present, null when
// not known), timings, the resolved target and route, tokens, the error code;
// never the key, the prompt, the completion or the upstream's secret.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { request, startFakeUpstream, type FakeUpstream } from './harness.ts';
import { completionBody, fakeProvider, startLifecycleGateway, UPSTREAM_SECRET, type LifecycleGateway } from './lifecycle-fixtures.ts';
import { eventually } from '../support/eventually.ts';

let upstream: FakeUpstream;
let gw: LifecycleGateway;
before(async () => {
  upstream = await startFakeUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(completionBody('a completion nobody may log'));
  });
  gw = await startLifecycleGateway({
    providers: { up: fakeProvider(upstream.baseUrl) },
    aliases: { 'service-a': { provider: 'up', model: 'model-a' } },
    auto: { default: 'service-a' },
  });
});
after(async () => {
  await gw.close();
  await upstream.close();
});

const FIELDS = ['time', 'level', 'msg', 'requestId', 'method', 'path', 'client', 'status', 'keyId', 'alias', 'target', 'route', 'stream', 'promptTokens', 'completionTokens', 'ttfbMs', 'totalMs', 'completed', 'error'];

async function lineFor(requestId: string): Promise<Record<string, unknown>> {
  await eventually(() => gw.logs.some((l) => l['msg'] === 'request' && l['requestId'] === requestId), `the access line of ${requestId}`);
  return gw.logs.find((l) => l['msg'] === 'request' && l['requestId'] === requestId) as Record<string, unknown>;
}

test('a completion: target, route, tokens and timings; no text and no secret anywhere in the log', async () => {
  const res = await request(gw.baseUrl, 'POST', '/v1/chat/completions?api_key=query-secret', {
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}`, 'x-request-id': 'al-1' },
    body: JSON.stringify({ model: 'service-auto', messages: [{ role: 'user', content: 'a prompt nobody may log' }] }),
  });
  assert.equal(res.status, 200);
  const line = await lineFor('al-1');
  for (const field of FIELDS) assert.ok(Object.hasOwn(line, field), `missing ${field}`);
  const { time, ttfbMs, totalMs, upstreamMs, traceId, ...rest } = line;
  assert.match(String(time), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  assert.match(String(traceId), /^[0-9a-f]{32}$/); // a new trace: no traceparent was sent
  assert.equal(typeof ttfbMs, 'number');
  assert.equal(typeof totalMs, 'number');
  assert.equal(typeof upstreamMs, 'number');
  assert.ok((ttfbMs as number) <= (totalMs as number));
  assert.deepEqual(rest, {
    level: 'info',
    msg: 'request',
    requestId: 'al-1',
    method: 'POST',
    path: '/v1/chat/completions',
    client: '127.0.0.1',
    status: 200,
    keyId: gw.keyId,
    alias: 'service-a',
    target: 'up/model-a',
    route: 'default',
    stream: false,
    promptTokens: 7,
    completionTokens: 2,
    cachedTokens: 0,
    // No price is configured: the tokens count, the cost is 0.
    charge: 'usage',
    chargedTokens: 9,
    costNanos: 0,
    cost: 0,
    completed: true,
    error: null,
  });
  const all = JSON.stringify(gw.logs);
  for (const secret of [gw.key, UPSTREAM_SECRET, 'a prompt nobody', 'a completion nobody', 'query-secret', 'Bearer']) {
    assert.equal(all.includes(secret), false, secret);
  }
});

test('a refused request: the error code, and null for what was never known', async () => {
  await request(gw.baseUrl, 'GET', '/v1/models', { headers: { authorization: 'Bearer pcl_not-a-real-key', 'x-request-id': 'al-2' } });
  const { time: _t, ttfbMs, totalMs: _total, ...rest } = await lineFor('al-2');
  assert.equal(typeof ttfbMs, 'number');
  assert.deepEqual(rest, {
    level: 'info',
    msg: 'request',
    requestId: 'al-2',
    method: 'GET',
    path: '/v1/models',
    client: '127.0.0.1',
    status: 401,
    keyId: null,
    alias: null,
    target: null,
    route: null,
    stream: null,
    promptTokens: null,
    completionTokens: null,
    charge: null,
    chargedTokens: null,
    costNanos: null,
    cost: null,
    completed: true,
    error: 'invalid_api_key',
  });
  assert.equal(JSON.stringify(gw.logs).includes('pcl_not-a-real-key'), false);
});
