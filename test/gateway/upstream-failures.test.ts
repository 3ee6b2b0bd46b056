// An unreachable upstream gave a 502 and an access line with `target: null`,
// and nothing said that 127.0.0.1:8000 refused the connection; /readyz then
// answered 503 without the cause. Through the real gateway on port 0: a closed
// port, a server that resets, a name that does not resolve, a server that
// never answers and one that refuses the gateway's key (a self-signed TLS
// server, which needs openssl, is in ./upstream-failures.system.test.ts).
// Each gives one "upstream failed" warn line naming the target, the address
// and the cause; the access line names the target; /readyz lists the open
// circuit with the cause; no secret, path or query string is logged. The
// gateway runs on a ManualScheduler: the silent upstream's timeout, the warn
// lines' rate limit and the circuit's times are exact.
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { readiness } from '../../src/gateway/health.ts';
import { eventually } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { tracked } from '../support/settled.ts';
import { refusedPort as refusedPort_ } from '../upstream/refused-port.ts';
import { postChat, request, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from './harness.ts';

const SECRET = 'sk-upstream-secret';
const hi = (model: string) => ({ model, messages: [{ role: 'user', content: 'Hi' }] });

/** A port that was just free: nothing listens there. */
async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

const provider = (baseUrl: string, extra: Record<string, unknown> = {}) => ({
  type: 'openai',
  baseUrl,
  apiKeyEnv: 'FAKE_UPSTREAM_KEY',
  retry: { maxAttempts: 1 },
  circuitBreaker: { failureThreshold: 1000 },
  ...extra,
});

const scheduler = new ManualScheduler();
let gw: TestGateway;
let refusedPort: number;
let resetPort: number;
let silent: FakeUpstream;
let keyRefused: FakeUpstream;
const resetServer = net.createServer((socket) => socket.once('data', () => socket.resetAndDestroy()));

before(async () => {
  refusedPort = await refusedPort_();
  resetPort = await listen(resetServer);
  silent = await startFakeUpstream(() => {});
  keyRefused = await startFakeUpstream((_req, res) => {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }));
  });
  gw = await startGateway({
    scheduler,
    configValue: {
      providers: {
        refused: provider(`http://127.0.0.1:${refusedPort}/v1`),
        reset: provider(`http://127.0.0.1:${resetPort}/v1`),
        dns: provider('http://upstream.invalid:8000/v1'),
        silent: provider(silent.baseUrl, { firstByteTimeoutMs: 200 }),
        auth: provider(keyRefused.baseUrl),
      },
      aliases: {
        'service-refused': { provider: 'refused', model: 'm' },
        'service-reset': { provider: 'reset', model: 'm' },
        'service-dns': { provider: 'dns', model: 'm' },
        'service-silent': { provider: 'silent', model: 'm' },
        'service-auth': { provider: 'auth', model: 'm' },
      },
      auto: { default: 'service-refused' },
    },
  });
});

after(async () => {
  await gw.close();
  await silent.close();
  await keyRefused.close();
  resetServer.close();
});

const warnLines = (target: string) => gw.logs.filter((l) => l['msg'] === 'upstream failed' && l['target'] === target);

async function accessLine(requestId: string): Promise<Record<string, unknown>> {
  const find = () => gw.logs.find((l) => l['msg'] === 'request' && l['requestId'] === requestId);
  await eventually(() => find() !== undefined, `the access line of ${requestId}`);
  return find() as Record<string, unknown>;
}

/** One request to `alias`; returns its status, error code, warn lines for the target and access line. */
async function fail(alias: string, requestId: string) {
  const res = await postChat(gw, hi(alias), { 'x-request-id': requestId });
  const line = await accessLine(requestId);
  return { status: res.status, code: (res.json() as { error: { code: string } }).error.code, line };
}

function warnLine(requestId: string, target: string, upstream: string, cause: string, detail: string, code: string) {
  return { level: 'warn', msg: 'upstream failed', requestId, target, upstream, cause, detail, code, attempt: 1, outcome: 'fallback', suppressed: 0 };
}

const withoutTime = (line: Record<string, unknown> | undefined) => {
  const { time: _time, ...rest } = line ?? {};
  return rest;
};

describe('one warn line per failure, naming target, address and cause; the access line names the target', () => {
  test('a closed port: refused (ECONNREFUSED)', async () => {
    const { status, code, line } = await fail('service-refused', 'uf-refused');
    assert.equal(status, 502);
    assert.equal(code, 'upstream_unreachable');
    assert.deepEqual(warnLines('refused/m').map(withoutTime), [
      warnLine('uf-refused', 'refused/m', `127.0.0.1:${refusedPort}`, 'refused', 'ECONNREFUSED', 'upstream_unreachable'),
    ]);
    // The access line says where the request went, no longer `target: null`.
    assert.equal(line['target'], 'refused/m');
    assert.equal(line['status'], 502);
    assert.equal(line['error'], 'upstream_unreachable');
  });

  test('a server that resets the connection: reset (ECONNRESET)', async () => {
    const { status, code, line } = await fail('service-reset', 'uf-reset');
    assert.equal(status, 502);
    assert.equal(code, 'upstream_unreachable');
    assert.deepEqual(warnLines('reset/m').map(withoutTime), [
      warnLine('uf-reset', 'reset/m', `127.0.0.1:${resetPort}`, 'reset', 'ECONNRESET', 'upstream_unreachable'),
    ]);
    assert.equal(line['target'], 'reset/m');
  });

  test('a name that does not resolve: dns (ENOTFOUND, or EAI_AGAIN where no resolver answers)', async () => {
    const { status, code, line } = await fail('service-dns', 'uf-dns');
    assert.equal(status, 502);
    assert.equal(code, 'upstream_unreachable');
    const [warn] = warnLines('dns/m').map(withoutTime);
    const detail = String(warn?.['detail']);
    assert.ok(detail === 'ENOTFOUND' || detail === 'EAI_AGAIN', detail);
    assert.deepEqual(warn, warnLine('uf-dns', 'dns/m', 'upstream.invalid:8000', 'dns', detail, 'upstream_unreachable'));
    assert.equal(line['target'], 'dns/m');
  });

  test('no answer at firstByteTimeoutMs: timeout (first_byte)', async () => {
    const failing = tracked(fail('service-silent', 'uf-silent'));
    await eventually(() => silent.requests.length === 1, 'the request at the silent upstream');
    await scheduler.advance(199);
    assert.equal(failing.settled, false);
    assert.deepEqual(warnLines('silent/m'), []);
    await scheduler.advance(1);
    const { status, code, line } = await failing.promise;
    assert.equal(status, 504);
    assert.equal(code, 'upstream_timeout');
    assert.deepEqual(warnLines('silent/m').map(withoutTime), [
      warnLine('uf-silent', 'silent/m', new URL(silent.baseUrl).host, 'timeout', 'first_byte', 'upstream_timeout'),
    ]);
    assert.equal(line['target'], 'silent/m');
  });

  test("the upstream refuses the gateway's key: http (401)", async () => {
    const { status, code, line } = await fail('service-auth', 'uf-auth');
    assert.equal(status, 502);
    assert.equal(code, 'upstream_auth_failed');
    assert.deepEqual(warnLines('auth/m').map(withoutTime), [
      warnLine('uf-auth', 'auth/m', new URL(keyRefused.baseUrl).host, 'http', '401', 'upstream_auth_failed'),
    ]);
    assert.equal(line['target'], 'auth/m');
  });
});

describe('rate limit', () => {
  test('N failures within 10 s: one line; the first after it carries the count of those left out', async () => {
    const before = warnLines('refused/m').length;
    for (let i = 1; i <= 4; i++) assert.equal((await fail('service-refused', `uf-burst-${i}`)).status, 502);
    // The first test's line opened the interval: these four are counted, not logged.
    assert.equal(warnLines('refused/m').length, before);
    await scheduler.advance(10_000);
    await fail('service-refused', 'uf-after');
    assert.deepEqual(warnLines('refused/m').slice(before).map(withoutTime), [
      { ...warnLine('uf-after', 'refused/m', `127.0.0.1:${refusedPort}`, 'refused', 'ECONNREFUSED', 'upstream_unreachable'), suppressed: 4 },
    ]);
    // Every failed request still has its access line, with its target.
    for (let i = 1; i <= 4; i++) assert.equal((await accessLine(`uf-burst-${i}`))['target'], 'refused/m');
  });
});

test('no upstream path, query, key or header, and no client query string, in any line', async () => {
  await request(gw.baseUrl, 'POST', '/v1/chat/completions?api_key=query-secret', {
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}`, 'x-request-id': 'uf-query' },
    body: JSON.stringify(hi('service-auth')),
  });
  await accessLine('uf-query');
  const all = JSON.stringify(gw.logs);
  for (const secret of [SECRET, gw.key, 'query-secret', 'Bearer', 'chat/completions?', 'Incorrect API key']) {
    assert.equal(all.includes(secret), false, secret);
  }
  for (const line of gw.logs.filter((l) => l['msg'] === 'upstream failed')) {
    assert.equal(JSON.stringify(line).includes('/v1'), false, JSON.stringify(line));
  }
});

test('/readyz: the open circuit, since and until when, and the last failure’s cause', async () => {
  const port = await refusedPort_();
  const clock = new ManualScheduler({ startMs: Date.UTC(2026, 4, 1, 12, 0, 0) });
  const breaking = await startGateway({
    scheduler: clock,
    configValue: {
      providers: { down: provider(`http://127.0.0.1:${port}/v1`, { circuitBreaker: { failureThreshold: 2, openMs: 60_000 } }) },
      aliases: { 'service-down': { provider: 'down', model: 'm' } },
      auto: { default: 'service-down' },
    },
  });
  try {
    const first = await request(breaking.baseUrl, 'GET', '/readyz');
    assert.equal(first.status, 200);
    assert.deepEqual(first.json(), { status: 'ready', checks: { config: 'ok', store: 'ok', upstreams: 'ok', shutdown: 'ok' }, openCircuits: [] });
    assert.equal((await postChat(breaking, hi('service-down'))).status, 502);
    await clock.advance(1500);
    // The second failure opens the circuit: since is its time on the gateway's clock.
    assert.equal((await postChat(breaking, hi('service-down'))).status, 502);
    const since = '2026-05-01T12:00:01.500Z';
    const until = '2026-05-01T12:01:01.500Z';
    const ready = await request(breaking.baseUrl, 'GET', '/readyz');
    assert.equal(ready.status, 503);
    const body = ready.json();
    // The API listener answers anyone who reaches it: which target and until
    // when, never the upstream's address or the failure's detail.
    assert.deepEqual(body, {
      status: 'not_ready',
      checks: { config: 'ok', store: 'ok', upstreams: "every target's circuit is open (down/m)", shutdown: 'ok' },
      openCircuits: [{ target: 'down/m', since, until }],
    });
    assert.equal(ready.text.includes(`127.0.0.1:${port}`), false);
    assert.equal(ready.text.includes("127.0.0.1"), false);
    // The admin listener's /readyz (failureDetail) says why.
    const admin = await readiness({ targets: () => breaking.gateway.targets.health(), state: breaking.state, draining: () => false, failureDetail: true });
    assert.deepEqual(admin.openCircuits, [
      {
        target: 'down/m',
        since,
        until,
        lastFailure: { cause: 'refused', detail: 'ECONNREFUSED', upstream: `127.0.0.1:${port}`, at: since },
      },
    ]);
    // While it is open the target is not tried: a 503 with no new warn line,
    // up to 1 ms before `until`; at `until` one probe goes out.
    const paused = await postChat(breaking, hi('service-down'));
    assert.equal(paused.status, 503);
    assert.equal(paused.headers['retry-after'], '60');
    await clock.advance(59_999);
    const last = await postChat(breaking, hi('service-down'));
    assert.equal(last.status, 503);
    assert.equal(last.headers['retry-after'], '1');
    assert.equal(breaking.logs.filter((l) => l['msg'] === 'upstream failed').length, 1);
    await clock.advance(1);
    const probe = await postChat(breaking, hi('service-down'));
    assert.equal(probe.status, 502);
    assert.equal((probe.json() as { error: { code: string } }).error.code, 'upstream_unreachable');
  } finally {
    await breaking.close();
  }
});
