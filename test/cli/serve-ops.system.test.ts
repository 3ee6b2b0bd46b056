// The compiled server as a child process, as an operator runs it: sockets
// passed by a socket unit (fds 3 and 4, LISTEN_FDNAMES=api:admin) win over the
// configured ports; /metrics on the admin listener parses as Prometheus text
// and counts exactly what was sent; systemd hears READY=1 only once both
// listeners answer, RELOADING=1/READY=1 around SIGHUP and STOPPING=1 on
// SIGTERM; stdout is JSON lines with a full access line and no key or prompt
// anywhere; /healthz and /readyz answer on both listeners.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openKeyStore } from '../../src/state/file-key-store.ts';
import { SYSTEMD_NOTIFY_COMMAND } from '../../src/ops/systemd-notify.ts';
import { request, sseData, type RawResponse } from '../gateway/harness.ts';
import { parsePrometheusText, type MetricFamily } from '../metrics/prometheus-text.ts';
import { hasPython, startNotifyReceiver } from './notify-receiver.ts';
import { skipUnlessCompiled, spawnServe, type LogLine, type ServeProcess } from './serve-process.ts';
import { tempDir } from '../support/temp-dir.ts';

const skip = skipUnlessCompiled;
const skipNotify = skip || (existsSync(SYSTEMD_NOTIFY_COMMAND) && hasPython ? false : `needs ${SYSTEMD_NOTIFY_COMMAND} and python3`);
const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';
const DEMO_TARGET = 'demo/portcullis-demo';
const READY = { status: 'ready', checks: { config: 'ok', store: 'ok', upstreams: 'ok', shutdown: 'ok' }, openCircuits: [] };

const tmp = tempDir('serve-ops');
const cleanup: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const step of cleanup.reverse()) await step();
});

interface Started {
  server: ServeProcess;
  api: string;
  admin: string;
  key: string;
  keyId: string;
  configFile: string;
}

function demoConfig(dataDir: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    dataDir,
    listen: { host: '127.0.0.1', port: 0 },
    admin: { port: 0 },
    providers: { demo: { type: 'demo' } },
    aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo' } },
    auto: { default: 'service-chat' },
    ...extra,
  };
}

async function createKey(dataDir: string): Promise<{ key: string; keyId: string }> {
  const store = openKeyStore(dataDir, { watch: false });
  const created = await store.create('serve-ops');
  await store.close();
  return { key: created.key, keyId: created.record.id };
}

/** A directory with a key and a demo config; the server started on it, once its `listening` line is out. */
async function startDemo(name: string, options: { args?: string[]; env?: Record<string, string>; extra?: Record<string, unknown> } = {}): Promise<Started> {
  const dir = path.join(tmp, name);
  mkdirSync(dir);
  const dataDir = path.join(dir, 'data');
  const { key, keyId } = await createKey(dataDir);
  const configFile = path.join(dir, 'config.json');
  writeFileSync(configFile, JSON.stringify(demoConfig(dataDir, options.extra)));
  const server = spawnServe({ args: ['--config', configFile, ...(options.args ?? [])], cwd: dir, ...(options.env === undefined ? {} : { env: options.env }) });
  cleanup.push(() => server.kill());
  const listening = await server.line((l) => l['msg'] === 'listening', 'listening');
  return { server, api: String(listening['api']), admin: String(listening['admin']), key, keyId, configFile };
}

async function stop(server: ServeProcess): Promise<void> {
  server.child.kill('SIGTERM');
  assert.deepEqual(await server.bounded(server.exited, 'the exit'), { code: 0, signal: null });
}

function authed(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
}

function chat(base: string, key: string, body: Record<string, unknown>): Promise<RawResponse> {
  return request(base, 'POST', '/v1/chat/completions', { headers: authed(key), body: JSON.stringify(body) });
}

function withoutTime(line: LogLine): LogLine {
  const { time: _t, ...rest } = line;
  return rest;
}

async function listenLocal(): Promise<{ server: net.Server; port: number; fd: number }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // The descriptor a socket unit would pass; node:net keeps it on the handle.
  const fd = (server as unknown as { _handle: { fd: number } })._handle.fd;
  assert.ok(fd > 2, `listening descriptor ${fd}`);
  return { server, port: (server.address() as net.AddressInfo).port, fd };
}

/** A family's samples, ordered by their labels, so comparisons do not depend on exposition order. */
function samplesOf(families: Map<string, MetricFamily>, name: string, familyName = name): Array<{ labels: Record<string, string>; value: number }> {
  const family = families.get(familyName);
  assert.ok(family !== undefined, `no metric family ${familyName}`);
  return family.samples
    .filter((s) => s.name === name)
    .map((s) => ({ labels: s.labels, value: s.value }))
    .sort((a, b) => JSON.stringify(a.labels).localeCompare(JSON.stringify(b.labels)));
}

describe('socket activation', { skip }, () => {
  test('the sockets passed as fds 3 and 4 (api:admin) are served, not the configured ports', async () => {
    const dir = path.join(tmp, 'sockets');
    mkdirSync(dir);
    const dataDir = path.join(dir, 'data');
    const { key } = await createKey(dataDir);
    // The ports the config asks for are taken: binding them would fail the start.
    const takenApi = await listenLocal();
    const takenAdmin = await listenLocal();
    cleanup.push(() => {
      takenApi.server.close();
      takenAdmin.server.close();
    });
    const configFile = path.join(dir, 'config.json');
    writeFileSync(configFile, JSON.stringify(demoConfig(dataDir, { listen: { host: '127.0.0.1', port: takenApi.port }, admin: { port: takenAdmin.port } })));

    const api = await listenLocal();
    const admin = await listenLocal();
    const server = spawnServe({ args: ['--config', configFile], cwd: dir, listenFds: { fds: [api.fd, admin.fd], names: ['api', 'admin'] } });
    cleanup.push(() => server.kill());
    // The child holds its own copies now; closing ours leaves it the only acceptor.
    api.server.close();
    admin.server.close();

    const listening = await server.line((l) => l['msg'] === 'listening', 'listening');
    assert.deepEqual(withoutTime(listening), {
      level: 'info',
      msg: 'listening',
      api: `http://127.0.0.1:${api.port}`,
      admin: `http://127.0.0.1:${admin.port}`,
      socketActivation: true,
      config: configFile,
      state: 'memory',
    });
    const apiBase = `http://127.0.0.1:${api.port}`;
    const adminBase = `http://127.0.0.1:${admin.port}`;

    const health = await request(apiBase, 'GET', '/healthz');
    assert.equal(health.status, 200);
    assert.deepEqual(health.json(), { status: 'ok' });
    const models = await request(apiBase, 'GET', '/v1/models', { headers: authed(key) });
    assert.equal(models.status, 200, models.text);
    assert.deepEqual(
      (models.json() as { data: Array<{ id: string }> }).data.map((m) => m.id),
      ['service-chat', 'service-auto'],
    );
    const refused = await request(apiBase, 'GET', '/v1/models');
    assert.equal(refused.status, 401);

    const metrics = await request(adminBase, 'GET', '/metrics');
    assert.equal(metrics.status, 200);
    assert.equal(metrics.headers['content-type'], PROMETHEUS_TEXT);
    assert.deepEqual(samplesOf(parsePrometheusText(metrics.text), 'portcullis_state_backend_up'), [{ labels: {}, value: 1 }]);

    await stop(server);
    assert.equal(server.stderr().split('\n')[0], `Portcullis listening on ${apiBase}/v1 (socket from systemd)`);
    assert.equal(server.stderr().split('\n')[1], `  dashboard and admin API: ${adminBase}/`);
    // Each request above reached the child: the parent kept no acceptor.
    assert.deepEqual(
      server.lines().filter((l) => l['msg'] === 'request').map((l) => [l['path'], l['status']]),
      [
        ['/healthz', 200],
        ['/v1/models', 200],
        ['/v1/models', 401],
        ['/metrics', 200],
      ],
    );
  });
});

describe('systemd readiness', { skip: skipNotify }, () => {
  test('READY=1 once both listeners answer; RELOADING=1 then READY=1 on SIGHUP; STOPPING=1 on SIGTERM, then a final STATUS; exit 0', async () => {
    const dir = path.join(tmp, 'notify');
    mkdirSync(dir);
    const receiver = await startNotifyReceiver(dir, 'notify');
    cleanup.push(() => {
      receiver.child.kill('SIGKILL');
    });
    const dataDir = path.join(dir, 'data');
    const configFile = path.join(dir, 'config.json');
    writeFileSync(configFile, JSON.stringify(demoConfig(dataDir)));
    const server = spawnServe({ args: ['--config', configFile], cwd: dir, env: { NOTIFY_SOCKET: receiver.socketPath } });
    cleanup.push(() => server.kill());
    const pid = server.child.pid;

    // Both listeners are asked the moment READY=1 arrives, before anything else.
    let atReady: { api: string; apiStatus: number; adminStatus: number } | undefined;
    const [ready] = await receiver.next(1, async (payload) => {
      const api = /^READY=1\nSTATUS=listening on (http:\/\/127\.0\.0\.1:\d+)\/v1\n/.exec(payload)?.[1];
      if (api === undefined) return;
      const apiStatus = (await request(api, 'GET', '/healthz')).status;
      const listening = await server.line((l) => l['msg'] === 'listening', 'listening');
      const adminStatus = (await request(String(listening['admin']), 'GET', '/healthz')).status;
      atReady = { api, apiStatus, adminStatus };
    });
    assert.ok(atReady !== undefined, `the first notification is not READY=1 with the address: ${JSON.stringify(ready)}`);
    const { api } = atReady;
    assert.equal(ready, `READY=1\nSTATUS=listening on ${api}/v1\nMAINPID=${pid}`);
    assert.deepEqual(atReady, { api, apiStatus: 200, adminStatus: 200 });
    const listening = await server.line((l) => l['msg'] === 'listening', 'listening');
    assert.equal(listening['api'], api);

    // A good reload (the same file).
    server.child.kill('SIGHUP');
    const [reloading, reloaded] = await receiver.next(2);
    assert.match(reloading ?? '', /^STATUS=reloading configuration\nRELOADING=1\nMONOTONIC_USEC=[1-9][0-9]*$/);
    assert.equal(reloaded, `READY=1\nSTATUS=listening on ${api}/v1; configuration reloaded\nMAINPID=${pid}`);
    await server.line((l) => l['msg'] === 'configuration reloaded', 'configuration reloaded');

    // A bad one: refused, and systemd hears READY=1 again with the reason.
    writeFileSync(configFile, JSON.stringify({ ...demoConfig(dataDir), bogus: true }));
    server.child.kill('SIGHUP');
    const [reloadingAgain, refused] = await receiver.next(2);
    assert.match(reloadingAgain ?? '', /^STATUS=reloading configuration\nRELOADING=1\nMONOTONIC_USEC=[1-9][0-9]*$/);
    assert.match(refused ?? '', new RegExp(`^READY=1\\nSTATUS=listening on ${api.replace(/[.]/g, '\\.')}/v1; reload refused: bogus: unknown setting [^\\n]*\\nMAINPID=${pid}$`));
    assert.equal((await request(api, 'GET', '/healthz')).status, 200);

    server.child.kill('SIGTERM');
    assert.deepEqual(await receiver.next(1), ['STATUS=draining 0 requests\nSTOPPING=1']);
    // The last word, so the unit's status does not keep saying "draining".
    assert.deepEqual(await receiver.next(1), ['STATUS=stopped: 0 requests finished, 0 ended early']);
    assert.deepEqual(await server.bounded(server.exited, 'the exit'), { code: 0, signal: null });
    assert.deepEqual(receiver.pending(), []);
    assert.deepEqual(
      server.lines().filter((l) => l['msg'] === 'systemd notification failed'),
      [],
    );
  });
});

describe('logs', { skip }, () => {
  test('stdout is one JSON object a line, with a full access line; no line carries the key or the prompt', async () => {
    const PROMPT = 'the heron flies at midnight over Quillfeather bridge';
    const WRONG_KEY = `pcl_${'Wr0ngKey'.repeat(6)}X`;
    const { server, api, key, keyId } = await startDemo('logs', { args: ['--log-level', 'debug'] });

    const plain = await chat(api, key, { model: 'service-chat', messages: [{ role: 'user', content: PROMPT }] });
    assert.equal(plain.status, 200, plain.text);
    const usage = (plain.json() as { usage: { prompt_tokens: number; completion_tokens: number } }).usage;
    const streamed = await chat(api, key, { model: 'service-chat', stream: true, messages: [{ role: 'user', content: PROMPT }] });
    assert.equal(streamed.status, 200);
    // Refused requests with the prompt and a key in them: their lines must not echo either.
    const invalid = await chat(api, key, { model: 'service-chat', messages: [{ role: 'wizard', content: PROMPT }] });
    assert.equal(invalid.status, 400, invalid.text);
    const unknownModel = await chat(api, key, { model: PROMPT, messages: [{ role: 'user', content: PROMPT }] });
    assert.equal(unknownModel.status, 404, unknownModel.text);
    const wrongKey = await chat(api, WRONG_KEY, { model: 'service-chat', messages: [{ role: 'user', content: PROMPT }] });
    assert.equal(wrongKey.status, 401);
    await server.linesCount((l) => l['msg'] === 'request' && l['path'] === '/v1/chat/completions', 5, 'five access lines');
    await stop(server);

    const lines = server.lines();
    assert.equal(lines.length, server.stdoutLines().length);
    assert.ok(server.stdout().endsWith('\n'));
    for (const line of lines) {
      assert.equal(new Date(String(line['time'])).toISOString(), line['time'], JSON.stringify(line));
      assert.ok(['debug', 'info', 'warn', 'error'].includes(String(line['level'])), JSON.stringify(line));
      assert.equal(typeof line['msg'], 'string', JSON.stringify(line));
    }
    const access = lines.find((l) => l['requestId'] === plain.headers['x-request-id']);
    assert.ok(access !== undefined, 'no access line for the request');
    assert.deepEqual(Object.keys(access).sort(), [
      'alias',
      'cachedTokens',
      'charge',
      'chargedTokens',
      'client',
      'completed',
      'completionTokens',
      'cost',
      'costNanos',
      'error',
      'keyId',
      'level',
      'method',
      'msg',
      'path',
      'promptTokens',
      'requestId',
      'route',
      'status',
      'stream',
      'target',
      'time',
      'totalMs',
      'traceId',
      'ttfbMs',
      'upstreamMs',
    ]);
    const { time, ttfbMs, totalMs, upstreamMs, traceId, ...fixed } = access;
    assert.match(String(traceId), /^[0-9a-f]{32}$/);
    assert.deepEqual(fixed, {
      level: 'info',
      msg: 'request',
      requestId: plain.headers['x-request-id'],
      method: 'POST',
      path: '/v1/chat/completions',
      client: '127.0.0.1',
      status: 200,
      keyId,
      alias: 'service-chat',
      target: DEMO_TARGET,
      route: 'requested',
      stream: false,
      promptTokens: usage.prompt_tokens,
      completionTokens: usage.completion_tokens,
      cachedTokens: 0,
      // A demo target is free: the tokens count, the cost is 0.
      charge: 'usage',
      chargedTokens: usage.prompt_tokens + usage.completion_tokens,
      costNanos: 0,
      cost: 0,
      completed: true,
      error: null,
    });
    assert.equal(typeof time, 'string');
    for (const [name, value] of [['ttfbMs', ttfbMs], ['totalMs', totalMs], ['upstreamMs', upstreamMs]] as const) {
      assert.ok(typeof value === 'number' && Number.isFinite(value) && value >= 0, `${name} is ${String(value)}`);
    }
    assert.ok((ttfbMs as number) <= (totalMs as number), 'the first byte came after the end');
    assert.deepEqual(
      lines.filter((l) => l['msg'] === 'request' && l['path'] === '/v1/chat/completions').map((l) => [l['status'], l['keyId'], l['error']]),
      [
        [200, keyId, null],
        [200, keyId, null],
        [400, keyId, 'invalid_value'],
        [404, keyId, 'model_not_found'],
        [401, null, 'invalid_api_key'],
      ],
    );

    // The one secret printed is the one-time bootstrap token, once, in the stderr banner.
    const token = /\bpcb_[0-9A-Za-z]+\b/.exec(server.stderr())?.[0];
    assert.ok(token !== undefined, `no bootstrap token in the banner:\n${server.stderr()}`);
    const printed = (text: string, what: string): string[] => text.split('\n').filter((line) => line.includes(what));
    assert.deepEqual(printed(server.stderr(), token), [`    ${token}`]);
    assert.deepEqual(printed(server.stdout(), token), []);
    const secrets: Array<[string, string]> = [
      ['the API key', key],
      ['the start of the API key', key.slice(0, 16)],
      ['the middle of the API key', key.slice(20, 36)],
      ['the wrong key', WRONG_KEY],
      ['the prompt', PROMPT],
      ['a word of the prompt', 'Quillfeather'],
    ];
    for (const [what, secret] of secrets) {
      assert.deepEqual(printed(server.stdout(), secret), [], `${what} is on stdout`);
      assert.deepEqual(printed(server.stderr(), secret), [], `${what} is on stderr`);
    }
  });
});

// One server for the checks that only read it: the metrics first (they count
// every request the server has seen), then health.
describe('metrics and health', { skip }, () => {
  let demo: Started;
  before(async () => {
    demo = await startDemo('metrics');
  });

  test('/metrics on the admin listener parses as Prometheus text and counts the requests by alias and status', async () => {
    const { server, api, admin, key } = demo;
    const body = { model: 'service-chat', messages: [{ role: 'user', content: 'count me' }] };
    const first = await chat(api, key, body);
    assert.equal(first.status, 200, first.text);
    const usage = (first.json() as { usage: { prompt_tokens: number; completion_tokens: number } }).usage;
    assert.equal((await chat(api, key, body)).status, 200);
    const streamed = await chat(api, key, { ...body, stream: true });
    assert.equal(streamed.status, 200);
    assert.equal(sseData(streamed.text).at(-1), '[DONE]');
    const unauthorized = await chat(api, 'pcl_not-a-key', body);
    assert.equal(unauthorized.status, 401);
    // A request is counted when its access line is written: wait for all four.
    await server.linesCount((l) => l['msg'] === 'request' && l['path'] === '/v1/chat/completions', 4, 'four access lines');

    const res = await request(admin, 'GET', '/metrics');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], PROMETHEUS_TEXT);
    assert.equal(res.headers['content-length'], String(Buffer.byteLength(res.text)));
    const families = parsePrometheusText(res.text);

    assert.equal(families.get('portcullis_requests_total')?.type, 'counter');
    assert.deepEqual(samplesOf(families, 'portcullis_requests_total'), [
      { labels: { endpoint: 'chat_completions', alias: '_unknown', status: '401' }, value: 1 },
      { labels: { endpoint: 'chat_completions', alias: 'service-chat', status: '200' }, value: 3 },
    ]);
    assert.deepEqual(samplesOf(families, 'portcullis_in_flight_requests'), [{ labels: {}, value: 0 }]);
    assert.deepEqual(samplesOf(families, 'portcullis_in_flight_streams'), [{ labels: {}, value: 0 }]);
    assert.deepEqual(samplesOf(families, 'portcullis_tokens_total'), [
      { labels: { alias: 'service-chat', kind: 'completion' }, value: 3 * usage.completion_tokens },
      { labels: { alias: 'service-chat', kind: 'prompt' }, value: 3 * usage.prompt_tokens },
    ]);
    assert.deepEqual(samplesOf(families, 'portcullis_request_duration_seconds_count', 'portcullis_request_duration_seconds'), [
      { labels: { alias: '_unknown' }, value: 1 },
      { labels: { alias: 'service-chat' }, value: 3 },
    ]);
    assert.deepEqual(samplesOf(families, 'portcullis_time_to_first_byte_seconds_count', 'portcullis_time_to_first_byte_seconds'), [
      { labels: { alias: '_unknown' }, value: 1 },
      { labels: { alias: 'service-chat' }, value: 3 },
    ]);
    assert.deepEqual(samplesOf(families, 'portcullis_upstream_duration_seconds_count', 'portcullis_upstream_duration_seconds'), [{ labels: { target: DEMO_TARGET }, value: 3 }]);
    assert.deepEqual(samplesOf(families, 'portcullis_upstream_attempts_total'), [{ labels: { target: DEMO_TARGET, outcome: 'ok' }, value: 3 }]);
    assert.deepEqual(samplesOf(families, 'portcullis_circuit_state'), [
      { labels: { target: DEMO_TARGET, state: 'closed' }, value: 1 },
      { labels: { target: DEMO_TARGET, state: 'half_open' }, value: 0 },
      { labels: { target: DEMO_TARGET, state: 'open' }, value: 0 },
    ]);
    assert.deepEqual(samplesOf(families, 'portcullis_rate_limited_requests_total'), []);
  });

  test('/healthz and /readyz answer 200 on both listeners, every readiness check ok', async () => {
    const { api, admin } = demo;
    for (const base of [api, admin]) {
      const alive = await request(base, 'GET', '/healthz');
      assert.equal(alive.status, 200, base);
      assert.equal(alive.headers['cache-control'], 'no-store');
      assert.deepEqual(alive.json(), { status: 'ok' });
      const ready = await request(base, 'GET', '/readyz');
      assert.equal(ready.status, 200, `${base}: ${ready.text}`);
      assert.equal(ready.headers['content-type'], 'application/json');
      assert.equal(ready.headers['cache-control'], 'no-store');
      assert.deepEqual(ready.json(), READY);
    }
  });

  test('SIGTERM: exits 0', async () => {
    await stop(demo.server);
  });
});
