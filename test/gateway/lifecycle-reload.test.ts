// gateway.reload: the new configuration is built whole, then swapped in; a
// request runs to its end on the configuration it started with; a config that
// cannot be built changes nothing; restart-only settings keep their running
// values and are named.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConfigError } from '../../src/config/config.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { keepRestartOnly, restartOnlyChanges } from '../../src/gateway/restart-settings.ts';
import { reload, request, sseData, startFakeUpstream, type FakeUpstream, type RawResponse } from './harness.ts';
import {
  completionBody,
  contentEvent,
  createGate,
  fakeProvider,
  FINISH_EVENTS,
  openChat,
  startLifecycleGateway,
  streamContents,
  type LifecycleGateway,
} from './lifecycle-fixtures.ts';
import { eventually } from '../support/eventually.ts';

let oldUpstream: FakeUpstream;
let newUpstream: FakeUpstream;
let gw: LifecycleGateway;
let configA: Record<string, unknown>;
let configB: Record<string, unknown>;

before(async () => {
  oldUpstream = await startFakeUpstream(() => {});
  newUpstream = await startFakeUpstream(() => {});
  configA = {
    providers: { old: fakeProvider(oldUpstream.baseUrl) },
    aliases: { 'service-a': { provider: 'old', model: 'model-a' } },
    auto: { default: 'service-a' },
  };
  configB = {
    providers: { new: fakeProvider(newUpstream.baseUrl) },
    aliases: { 'service-a': { provider: 'new', model: 'model-b' }, 'service-b': { provider: 'new', model: 'model-c' } },
    auto: { default: 'service-a' },
  };
  gw = await startLifecycleGateway(configA);
});
after(async () => {
  await gw.close();
  await oldUpstream.close();
  await newUpstream.close();
});

async function modelIds(): Promise<string[]> {
  const res = await request(gw.baseUrl, 'GET', '/v1/models', { headers: { authorization: `Bearer ${gw.key}` } });
  assert.equal(res.status, 200);
  return (res.json() as { data: Array<{ id: string }> }).data.map((m) => m.id);
}

function chat(body: unknown): Promise<RawResponse> {
  return request(gw.baseUrl, 'POST', '/v1/chat/completions', {
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}` },
    body: JSON.stringify(body),
  });
}

const hello = { messages: [{ role: 'user', content: 'hi' }] };

describe('a good reload', () => {
  test('new aliases and targets serve new requests; a stream begun before it finishes on the old target', async () => {
    const gate = createGate();
    oldUpstream.handle = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(contentEvent('old-1'));
      await gate.wait;
      res.write(contentEvent(' old-2'));
      res.end(FINISH_EVENTS);
    };
    newUpstream.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(completionBody('from the new target'));
    };
    assert.deepEqual(await modelIds(), ['service-a', 'service-auto']);

    const stream = openChat(gw.baseUrl, gw.key, { model: 'service-a', stream: true, ...hello });
    await stream.firstBytes;

    const summary = reload(gw.gateway, gw.configFor(configB));
    assert.deepEqual(summary, { source: null, aliases: 3, restartNeeded: [] });
    assert.deepEqual(await modelIds(), ['service-a', 'service-b', 'service-auto']);

    const fresh = await chat({ model: 'service-a', ...hello });
    assert.equal(fresh.status, 200);
    assert.equal((fresh.json() as { choices: [{ message: { content: string } }] }).choices[0].message.content, 'from the new target');
    assert.equal(newUpstream.requests.length, 1);
    assert.equal((newUpstream.requests[0]?.body as { model: string }).model, 'model-b');

    gate.open();
    const res = await stream.response;
    assert.equal(res.status, 200);
    assert.deepEqual(streamContents(sseData(res.text)), ['old-1', ' old-2', '', '[DONE]']);
    assert.equal(oldUpstream.requests.length, 1);
    assert.equal((oldUpstream.requests[0]?.body as { model: string }).model, 'model-a');

    await eventually(() => gw.logs.some((l) => l['msg'] === 'request' && l['stream'] === true), 'the stream access line');
    const line = gw.logs.find((l) => l['msg'] === 'request' && l['stream'] === true);
    assert.equal(line?.['target'], 'old/model-a');
    assert.equal(line?.['alias'], 'service-a');
    assert.equal(line?.['error'], null);
    const reloaded = gw.logs.filter((l) => l['msg'] === 'configuration reloaded');
    assert.deepEqual(
      reloaded.map(({ time: _t, ...rest }) => rest),
      [{ level: 'info', msg: 'configuration reloaded', source: 'embedded', aliases: 3, restartNeeded: 0 }],
    );
  });

  test('an alias the new configuration drops is unknown at once', async () => {
    reload(gw.gateway, gw.configFor(configA));
    const res = await chat({ model: 'service-b', ...hello });
    assert.equal(res.status, 404);
    assert.equal((res.json() as { error: { code: string } }).error.code, 'model_not_found');
  });
});

describe('a refused reload', () => {
  test('a missing upstream credential throws ConfigError naming it, and nothing is swapped', async () => {
    reload(gw.gateway, gw.configFor(configA));
    const running = gw.gateway.config;
    const logsBefore = gw.logs.length;
    const broken = gw.configFor({
      ...configB,
      providers: { new: { ...fakeProvider(newUpstream.baseUrl), apiKeyEnv: 'LIFECYCLE_UNSET_VARIABLE' } },
    });
    assert.throws(
      () => reload(gw.gateway, broken),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.path, 'providers.new.apiKeyEnv');
        assert.equal(err.message, 'embedded config: providers.new.apiKeyEnv: environment variable LIFECYCLE_UNSET_VARIABLE is not set or empty');
        return true;
      },
    );
    assert.equal(gw.gateway.config, running);
    assert.deepEqual(await modelIds(), ['service-a', 'service-auto']);
    assert.equal(gw.logs.slice(logsBefore).some((l) => l['msg'] === 'configuration reloaded'), false);
  });

  test('prepareReload builds without serving; only commit swaps', async () => {
    const prepared = gw.gateway.prepareReload(gw.configFor(configB));
    assert.deepEqual(await modelIds(), ['service-a', 'service-auto']);
    prepared.commit();
    assert.deepEqual(await modelIds(), ['service-a', 'service-b', 'service-auto']);
    reload(gw.gateway, gw.configFor(configA));
  });
});

describe('restart-only settings', () => {
  test('a changed port and header limit keep their running values and are named; the timeouts apply', () => {
    const logsBefore = gw.logs.length;
    const summary = reload(gw.gateway, 
      gw.configFor({ ...configA, listen: { host: '127.0.0.1', port: 9099 }, limits: { maxHeaderBytes: 8192, keepAliveTimeoutMs: 1234 }, log: { level: 'warn' } }),
    );
    assert.deepEqual(summary.restartNeeded, [
      { setting: 'listen.port', running: 8080, configured: 9099 },
      { setting: 'limits.maxHeaderBytes', running: 16384, configured: 8192 },
    ]);
    assert.equal(gw.gateway.config.listen.port, 8080);
    assert.equal(gw.gateway.config.limits.maxHeaderBytes, 16384);
    assert.equal(gw.gateway.config.limits.keepAliveTimeoutMs, 1234);
    assert.equal(gw.gateway.config.log.level, 'warn');
    assert.equal(gw.gateway.server.keepAliveTimeout, 1234);
    const lines = gw.logs.slice(logsBefore).map(({ time: _t, ...rest }) => rest);
    assert.deepEqual(lines, [
      { level: 'warn', msg: 'needs a restart; still using the running value', setting: 'listen.port', running: 8080, configured: 9099 },
      { level: 'warn', msg: 'needs a restart; still using the running value', setting: 'limits.maxHeaderBytes', running: 16384, configured: 8192 },
      { level: 'info', msg: 'configuration reloaded', source: 'embedded', aliases: 2, restartNeeded: 2 },
    ]);
    reload(gw.gateway, gw.configFor(configA));
  });

  test('metrics: a listener turned on by a reload stays off until a restart, and the reload names it', () => {
    // The gateway started without a metrics listener: turning it on is named, and it stays off.
    assert.equal(gw.gateway.config.metrics, null);
    const logsBefore = gw.logs.length;
    const summary = reload(gw.gateway, gw.configFor({ ...configA, metrics: { host: '0.0.0.0', port: 9465, tokenFile: '/etc/portcullis/metrics-token' } }));
    assert.deepEqual(summary.restartNeeded, [{ setting: 'metrics', running: null, configured: '(set)' }]);
    assert.equal(gw.gateway.config.metrics, null);
    assert.deepEqual(
      gw.logs.slice(logsBefore).map(({ time: _t, ...rest }) => rest),
      [
        { level: 'warn', msg: 'needs a restart; still using the running value', setting: 'metrics', running: null, configured: '(set)' },
        { level: 'info', msg: 'configuration reloaded', source: 'embedded', aliases: 2, restartNeeded: 1 },
      ],
    );
    reload(gw.gateway, gw.configFor(configA));
  });

  test('restartOnlyChanges names each changed metrics setting', () => {
    const base = { providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo', model: 'x' } }, auto: { default: 'service-chat' } };
    const running = parseConfig({ ...base, metrics: { port: 9464 } }, '/etc/portcullis/portcullis.json', '/etc/portcullis');
    const next = parseConfig({ ...base, metrics: { host: '0.0.0.0', port: 9465, tokenFile: 'metrics-token' } }, '/etc/portcullis/portcullis.json', '/etc/portcullis');
    assert.deepEqual(restartOnlyChanges(running, next), [
      { setting: 'metrics.host', running: '127.0.0.1', configured: '0.0.0.0' },
      { setting: 'metrics.port', running: 9464, configured: 9465 },
      { setting: 'metrics.tokenFile', running: null, configured: '/etc/portcullis/metrics-token' },
    ]);
    assert.deepEqual(restartOnlyChanges(next, parseConfig(base, '/etc/portcullis/portcullis.json', '/etc/portcullis')), [{ setting: 'metrics', running: '(set)', configured: null }]);
    assert.deepEqual(keepRestartOnly(running, next).metrics, running.metrics);
  });

  test('restartOnlyChanges names each changed leaf, and an object set or removed without its contents', () => {
    const base = { providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo', model: 'x' } }, auto: { default: 'service-chat' } };
    const running = parseConfig({ ...base, dataDir: '/srv/a' }, null, '/');
    const next = parseConfig(
      {
        ...base,
        dataDir: '/srv/b',
        listen: { host: '0.0.0.0', port: 8080 },
        admin: { port: 9000, tls: { certFile: '/c.pem', keyFile: '/k.pem' }, allowedHosts: ['gw.internal'] },
        state: { backend: 'redis', redis: { url: 'redis://127.0.0.1:6379' } },
        shutdown: { drainTimeoutMs: 5 },
      },
      null,
      '/',
    );
    assert.deepEqual(restartOnlyChanges(running, next), [
      { setting: 'listen.host', running: '127.0.0.1', configured: '0.0.0.0' },
      { setting: 'dataDir', running: '/srv/a', configured: '/srv/b' },
      { setting: 'admin.port', running: 8081, configured: 9000 },
      { setting: 'admin.tls', running: null, configured: '(set)' },
      { setting: 'admin.secureCookies', running: false, configured: true },
      { setting: 'admin.allowedHosts', running: '[]', configured: '["gw.internal"]' },
      { setting: 'state.backend', running: 'memory', configured: 'redis' },
      { setting: 'state.redis', running: null, configured: '(set)' },
    ]);
    assert.deepEqual(restartOnlyChanges(running, running), []);
    // Equal arrays from two parses are no change.
    assert.deepEqual(restartOnlyChanges(running, parseConfig({ ...base, dataDir: '/srv/a' }, null, '/')), []);
  });
});
