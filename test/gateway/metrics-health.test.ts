// The gateway's metrics (src/metrics/gateway-metrics.ts) after real traffic,
// read back through a strict Prometheus text parser, and its health routes
// (src/gateway/health.ts): /healthz, /readyz and the reasons /readyz says 503.
import assert from 'node:assert/strict';
import { chmodSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '../../src/config/config-parser.ts';
import { healthRoutes } from '../../src/gateway/health.ts';
import { createRouter } from '../../src/http/router.ts';
import { createHttpShell } from '../../src/http/server.ts';
import { type RouteHandler } from '../../src/http/request-context.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createGatewayMetrics, type GatewayMetrics } from '../../src/metrics/gateway-metrics.ts';
import { parsePrometheusText, sampleValue, type MetricFamily } from '../metrics/prometheus-text.ts';
import { openStream, postChat, reload, request, sseData, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from './harness.ts';
import { eventually } from '../support/eventually.ts';

const USAGE = { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 };
const STREAM_USAGE = { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 };

const chunk = (delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> => ({
  id: 'chatcmpl-mh',
  object: 'chat.completion.chunk',
  created: 1_720_000_001,
  model: 'upstream-model-1',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

/** Answers like an OpenAI upstream; a stream waits for `gate` before its last frames. */
function openAiAnswer(gate: () => Promise<void>): FakeUpstream['handle'] {
  return async (req, res) => {
    const body = req.body as Record<string, unknown>;
    if (body['stream'] === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'Hel' }))}\n\n`);
      await gate();
      res.write(`data: ${JSON.stringify(chunk({ content: 'lo.' }, 'stop'))}\n\n`);
      res.write(`data: ${JSON.stringify({ ...chunk({}), choices: [], usage: STREAM_USAGE })}\n\n`);
      res.end('data: [DONE]\n\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'chatcmpl-mh',
        object: 'chat.completion',
        created: 1_720_000_000,
        model: 'upstream-model-1',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.' }, finish_reason: 'stop' }],
        usage: USAGE,
      }),
    );
  };
}

/** Metrics whose sources read the gateway once `target.gw` is set, as serve-command wires them. */
function metricsFor(target: { gw?: TestGateway }): GatewayMetrics {
  return createGatewayMetrics({
    targets: () => target.gw?.gateway.targets.health() ?? [],
    isKnownAlias: (alias) => target.gw !== undefined && Object.hasOwn(target.gw.gateway.config.aliases, alias),
    stateBackendUp: () => (target.gw?.state.health() === 'ok' ? 1 : 0),
  });
}

/** Once inFlight is 0, every answer's 'close' ran: access line, metrics and settlement are done. */
async function idle(gw: TestGateway): Promise<void> {
  await eventually(() => gw.gateway.inFlight === 0, 'no request in flight');
}

/** Every sample of a family as `name{labels} value` lines, sorted, to compare whole. */
function seriesOf(families: Map<string, MetricFamily>, family: string): string[] {
  const f = families.get(family);
  if (f === undefined) throw new Error(`no family ${family}`);
  return f.samples
    .map((s) => {
      const labels = Object.keys(s.labels)
        .sort()
        .map((k) => `${k}=${s.labels[k]}`)
        .join(',');
      return `${s.name}{${labels}} ${s.value}`;
    })
    .sort();
}


const hi = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'Hi' }], ...extra });

describe('metrics after traffic', () => {
  let upstream: FakeUpstream;
  const holder: { gw?: TestGateway } = {};
  let metrics: GatewayMetrics;
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));

  before(async () => {
    upstream = await startFakeUpstream(openAiAnswer(() => released));
    metrics = metricsFor(holder);
    holder.gw = await startGateway({ upstreamBaseUrl: upstream.baseUrl, metrics });
  });
  after(async () => {
    release();
    await holder.gw?.close();
    await upstream.close();
  });

  test('requests by alias and status, tokens, rate-limited, in-flight back to 0, circuits, unknown alias folded', async () => {
    const gw = holder.gw!;
    // While a stream is open it counts as one request and one stream in flight.
    const slow = await openStream(gw, gw.key, hi('service-fake', { stream: true }));
    assert.equal(slow.status, 200);
    let families = parsePrometheusText(metrics.expose());
    assert.equal(sampleValue(families, 'portcullis_in_flight_requests'), 1);
    assert.equal(sampleValue(families, 'portcullis_in_flight_streams'), 1);
    release();
    assert.equal(sseData(await slow.body).at(-1), '[DONE]');

    assert.equal((await postChat(gw, hi('service-fake'))).status, 200);
    assert.equal((await postChat(gw, hi('service-fake'))).status, 200);
    const demo = await postChat(gw, hi('service-chat'));
    assert.equal(demo.status, 200);
    const demoUsage = (demo.json() as { usage: { prompt_tokens: number; completion_tokens: number } }).usage;
    // A model that does not exist is a 404 counted under _unknown, not a new series per name.
    const unknown = await postChat(gw, hi('no-such-model-42'));
    assert.equal(unknown.status, 404);
    // An unauthenticated request never names an alias.
    const anonymous = await request(gw.baseUrl, 'POST', '/v1/chat/completions', { headers: { 'content-type': 'application/json' }, body: JSON.stringify(hi('service-fake')) });
    assert.equal(anonymous.status, 401);
    // A key limited to one request a minute: its second is refused.
    const limited = await gw.state.keys.create('metrics-limited', { limits: { requestsPerMinute: 1 } });
    assert.equal((await postChat(gw, hi('service-fake'), { authorization: `Bearer ${limited.key}` })).status, 200);
    assert.equal((await postChat(gw, hi('service-fake'), { authorization: `Bearer ${limited.key}` })).status, 429);
    // Not chat traffic: not counted by alias.
    assert.equal((await request(gw.baseUrl, 'GET', '/v1/models', { headers: { authorization: `Bearer ${gw.key}` } })).status, 200);
    assert.equal((await request(gw.baseUrl, 'GET', '/healthz')).status, 200);
    await idle(gw);

    const text = metrics.expose();
    families = parsePrometheusText(text);
    assert.deepEqual(seriesOf(families, 'portcullis_requests_total'), [
      'portcullis_requests_total{alias=_unknown,endpoint=chat_completions,status=401} 1',
      'portcullis_requests_total{alias=_unknown,endpoint=chat_completions,status=404} 1',
      'portcullis_requests_total{alias=service-chat,endpoint=chat_completions,status=200} 1',
      'portcullis_requests_total{alias=service-fake,endpoint=chat_completions,status=200} 4',
      'portcullis_requests_total{alias=service-fake,endpoint=chat_completions,status=429} 1',
    ]);
    assert.equal(text.includes('no-such-model-42'), false);
    assert.deepEqual(seriesOf(families, 'portcullis_tokens_total'), [
      `portcullis_tokens_total{alias=service-chat,kind=completion} ${demoUsage.completion_tokens}`,
      `portcullis_tokens_total{alias=service-chat,kind=prompt} ${demoUsage.prompt_tokens}`,
      `portcullis_tokens_total{alias=service-fake,kind=completion} ${3 * USAGE.completion_tokens + STREAM_USAGE.completion_tokens}`,
      `portcullis_tokens_total{alias=service-fake,kind=prompt} ${3 * USAGE.prompt_tokens + STREAM_USAGE.prompt_tokens}`,
    ]);
    assert.deepEqual(seriesOf(families, 'portcullis_rate_limited_requests_total'), ['portcullis_rate_limited_requests_total{alias=service-fake,limit=requests} 1']);
    assert.equal(sampleValue(families, 'portcullis_in_flight_requests'), 0);
    assert.equal(sampleValue(families, 'portcullis_in_flight_streams'), 0);
    assert.deepEqual(seriesOf(families, 'portcullis_circuit_state'), [
      'portcullis_circuit_state{state=closed,target=demo/portcullis-demo} 1',
      'portcullis_circuit_state{state=closed,target=fake/upstream-model-1} 1',
      'portcullis_circuit_state{state=half_open,target=demo/portcullis-demo} 0',
      'portcullis_circuit_state{state=half_open,target=fake/upstream-model-1} 0',
      'portcullis_circuit_state{state=open,target=demo/portcullis-demo} 0',
      'portcullis_circuit_state{state=open,target=fake/upstream-model-1} 0',
    ]);
    // One latency observation per counted request, per alias.
    assert.equal(sampleValue(families, 'portcullis_request_duration_seconds_count', { alias: 'service-fake' }), 5);
    assert.equal(sampleValue(families, 'portcullis_request_duration_seconds_count', { alias: '_unknown' }), 2);
    // The upstream part: the four answers the fake upstream gave.
    assert.equal(sampleValue(families, 'portcullis_upstream_duration_seconds_count', { target: 'fake/upstream-model-1' }), 4);
    assert.equal(sampleValue(families, 'portcullis_state_backend_up'), 1);
    assert.equal(upstream.requests.length, 4);
  });
});

test('an alias a reload removed while its request ran is counted as _unknown: labels stay within the serving config', async () => {
  let releaseStream: () => void = () => {};
  const released = new Promise<void>((resolve) => (releaseStream = resolve));
  const upstream = await startFakeUpstream(openAiAnswer(() => released));
  const holder: { gw?: TestGateway } = {};
  const metrics = metricsFor(holder);
  const gw = await startGateway({ upstreamBaseUrl: upstream.baseUrl, metrics });
  holder.gw = gw;
  try {
    const slow = await openStream(gw, gw.key, hi('service-fake', { stream: true }));
    assert.equal(slow.status, 200);
    reload(gw.gateway, 
      parseConfig(
        { dataDir: gw.dataDir, providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo' } }, auto: { default: 'service-chat' } },
        null,
        gw.dataDir,
      ),
    );
    releaseStream();
    assert.equal(sseData(await slow.body).at(-1), '[DONE]');
    await idle(gw);
    const families = parsePrometheusText(metrics.expose());
    assert.deepEqual(seriesOf(families, 'portcullis_requests_total'), ['portcullis_requests_total{alias=_unknown,endpoint=chat_completions,status=200} 1']);
    assert.deepEqual(seriesOf(families, 'portcullis_tokens_total'), [
      `portcullis_tokens_total{alias=_unknown,kind=completion} ${STREAM_USAGE.completion_tokens}`,
      `portcullis_tokens_total{alias=_unknown,kind=prompt} ${STREAM_USAGE.prompt_tokens}`,
    ]);
    // The circuit gauge follows the serving config: only the demo target now.
    assert.deepEqual(seriesOf(families, 'portcullis_circuit_state'), [
      'portcullis_circuit_state{state=closed,target=demo/portcullis-demo} 1',
      'portcullis_circuit_state{state=half_open,target=demo/portcullis-demo} 0',
      'portcullis_circuit_state{state=open,target=demo/portcullis-demo} 0',
    ]);
  } finally {
    releaseStream();
    await gw.close();
    await upstream.close();
  }
});

describe('health routes', () => {
  test('/healthz is 200 {"status":"ok"}; /readyz is 200 with every check ok', async () => {
    const gw = await startGateway();
    try {
      const health = await request(gw.baseUrl, 'GET', '/healthz');
      assert.equal(health.status, 200);
      assert.equal(health.text, '{"status":"ok"}');
      assert.equal(health.headers['cache-control'], 'no-store');
      assert.equal(health.headers['content-type'], 'application/json');
      const ready = await request(gw.baseUrl, 'GET', '/readyz');
      assert.equal(ready.status, 200);
      assert.deepEqual(ready.json(), { status: 'ready', checks: { config: 'ok', store: 'ok', upstreams: 'ok', shutdown: 'ok' }, openCircuits: [] });
      assert.equal(ready.headers['cache-control'], 'no-store');
    } finally {
      await gw.close();
    }
  });

  test('/readyz is 503 once every target circuit is open; the circuit gauge says open', async () => {
    const upstream = await startFakeUpstream((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'boom', type: 'server_error', param: null, code: null } }));
    });
    const holder: { gw?: TestGateway } = {};
    const metrics = metricsFor(holder);
    const gw = await startGateway({
      metrics,
      configValue: {
        providers: {
          fake: {
            type: 'openai',
            baseUrl: upstream.baseUrl,
            apiKeyEnv: 'FAKE_UPSTREAM_KEY',
            retry: { maxAttempts: 1 },
            // One failure opens it, for an hour: longer than the test.
            circuitBreaker: { failureThreshold: 1, openMs: 3_600_000 },
          },
        },
        aliases: { 'service-fake': { provider: 'fake', model: 'upstream-model-1' } },
        auto: { default: 'service-fake' },
      },
    });
    holder.gw = gw;
    try {
      assert.equal((await request(gw.baseUrl, 'GET', '/readyz')).status, 200);
      const failed = await postChat(gw, hi('service-fake'));
      assert.equal(failed.status, 502);
      assert.equal((failed.json() as { error: { code: string } }).error.code, 'upstream_error');
      const ready = await request(gw.baseUrl, 'GET', '/readyz');
      assert.equal(ready.status, 503);
      const body = ready.json() as { openCircuits: Array<{ since: string; until: string; lastFailure: { at: string } }> };
      const since = body.openCircuits[0]?.since ?? '';
      assert.deepEqual(ready.json(), {
        status: 'not_ready',
        checks: { config: 'ok', store: 'ok', upstreams: "every target's circuit is open (fake/upstream-model-1)", shutdown: 'ok' },
        // Which target, since when, until when (why is for the admin listener only).
        openCircuits: [
          {
            target: 'fake/upstream-model-1',
            since,
            until: new Date(Date.parse(since) + 3_600_000).toISOString(),
          },
        ],
      });
      assert.ok(Math.abs(Date.parse(since) - Date.now()) < 60_000, since);
      // /healthz only says the process is alive.
      assert.equal((await request(gw.baseUrl, 'GET', '/healthz')).status, 200);
      await idle(gw);
      const families = parsePrometheusText(metrics.expose());
      assert.deepEqual(seriesOf(families, 'portcullis_circuit_state'), [
        'portcullis_circuit_state{state=closed,target=fake/upstream-model-1} 0',
        'portcullis_circuit_state{state=half_open,target=fake/upstream-model-1} 0',
        'portcullis_circuit_state{state=open,target=fake/upstream-model-1} 1',
      ]);
      assert.equal(upstream.requests.length, 1);
    } finally {
      await gw.close();
      await upstream.close();
    }
  });

  // Root ignores file modes (access(2) grants W_OK to root on a 0500 directory),
  // so this assertion can only be made as an ordinary user.
  const isRoot = process.getuid?.() === 0;
  test('/readyz is 503 when the data directory is not writable (chmod 0500)', { skip: isRoot ? 'running as root, which ignores file modes' : false }, async () => {
    const gw = await startGateway();
    try {
      chmodSync(gw.dataDir, 0o500);
      const ready = await request(gw.baseUrl, 'GET', '/readyz');
      assert.equal(ready.status, 503);
      assert.deepEqual(ready.json(), {
        status: 'not_ready',
        checks: { config: 'ok', store: `data directory ${gw.dataDir} is not writable (EACCES)`, upstreams: 'ok', shutdown: 'ok' },
        openCircuits: [],
      });
      chmodSync(gw.dataDir, 0o700);
      assert.equal((await request(gw.baseUrl, 'GET', '/readyz')).status, 200);
    } finally {
      chmodSync(gw.dataDir, 0o700);
      await gw.close();
    }
  });

  // The same check with a cause root cannot override: the directory is gone.
  test('/readyz is 503 when the data directory has disappeared', async () => {
    const gw = await startGateway();
    try {
      rmSync(gw.dataDir, { recursive: true, force: true });
      const ready = await request(gw.baseUrl, 'GET', '/readyz');
      assert.equal(ready.status, 503);
      assert.deepEqual(ready.json(), {
        status: 'not_ready',
        checks: { config: 'ok', store: `data directory ${gw.dataDir} is not writable (ENOENT)`, upstreams: 'ok', shutdown: 'ok' },
        openCircuits: [],
      });
    } finally {
      await gw.close();
    }
  });

  test('once shutdown starts: the API listener refuses new connections and /readyz on the admin listener is 503 draining', async () => {
    let releaseStream: () => void = () => {};
    const released = new Promise<void>((resolve) => (releaseStream = resolve));
    const upstream = await startFakeUpstream(openAiAnswer(() => released));
    const gw = await startGateway({ upstreamBaseUrl: upstream.baseUrl });
    // serve-command mounts the same health routes on the admin listener, which
    // keeps answering while the API listener drains.
    const router = createRouter<RouteHandler>();
    for (const [method, path, handler] of healthRoutes({ targets: () => gw.gateway.targets.health(), state: gw.state, draining: () => gw.gateway.draining })) {
      router.add(method, path, handler);
    }
    const admin = createHttpShell({ router, limits: gw.gateway.config.limits, logger: createLogger({ level: 'error', write: () => {} }) });
    await new Promise<void>((resolve) => admin.server.listen(0, '127.0.0.1', resolve));
    const adminUrl = `http://127.0.0.1:${(admin.server.address() as AddressInfo).port}`;
    try {
      assert.equal((await request(adminUrl, 'GET', '/readyz')).status, 200);
      // A stream in flight keeps the drain open.
      const slow = await openStream(gw, gw.key, hi('service-fake', { stream: true }));
      assert.equal(slow.status, 200);
      const stopped = gw.gateway.shutdown(60_000);
      assert.equal(gw.gateway.draining, true);

      const ready = await request(adminUrl, 'GET', '/readyz');
      assert.equal(ready.status, 503);
      assert.deepEqual(ready.json(), { status: 'not_ready', checks: { config: 'ok', store: 'ok', upstreams: 'ok', shutdown: 'draining' }, openCircuits: [] });
      await assert.rejects(request(gw.baseUrl, 'GET', '/readyz'), (err: NodeJS.ErrnoException) => err.code === 'ECONNREFUSED');

      // The stream still finishes cleanly, and the drain reports it finished.
      releaseStream();
      assert.equal(sseData(await slow.body).at(-1), '[DONE]');
      assert.deepEqual(await stopped, { finished: 1, endedWithError: 0, refused: 0 });
    } finally {
      releaseStream();
      await admin.drain(0);
      await gw.close();
      await upstream.close();
    }
  });
});
