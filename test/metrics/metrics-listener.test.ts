// The metrics listener: a scrape over loopback from a plain HTTP client, byte
// for byte where it matters, and every refusal (no token, a wrong token, another
// path, another method). Config: off by default, a token file required off
// loopback, port conflicts.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { ConfigError } from '../../src/config/config.ts';
import { metricsToken } from '../../src/config/metrics-config.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { createGatewayMetrics } from '../../src/metrics/gateway-metrics.ts';
import { createMetricsListener } from '../../src/metrics/metrics-listener.ts';
import { createLogger } from '../../src/log/logger.ts';

const TOKEN = 'f'.repeat(40);
const metrics = createGatewayMetrics({ targets: () => [], isKnownAlias: () => false, stateBackendUp: () => 1 });
const logger = createLogger({ write: () => {} });
const open = createMetricsListener({ expose: () => metrics.expose(), token: null, logger });
const guarded = createMetricsListener({ expose: () => metrics.expose(), token: TOKEN, logger });

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}
let openPort = 0;
let guardedPort = 0;
before(async () => {
  openPort = await listen(open);
  guardedPort = await listen(guarded);
});
after(async () => {
  for (const server of [open, guarded]) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

function get(port: number, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('a scrape of /metrics over loopback gets the exposition format with the gateway\'s families', async () => {
  const res = await get(openPort, '/metrics');
  assert.equal(res.status, 200);
  assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(Number(res.headers['content-length']), Buffer.byteLength(res.body));
  assert.ok(res.body.includes('# TYPE portcullis_state_backend_up gauge\nportcullis_state_backend_up 1\n'), res.body);
  assert.equal(res.body, metrics.expose());
  const health = await get(openPort, '/healthz');
  assert.deepEqual([health.status, health.body], [200, '{"status":"ok"}']);
});

test('with a token: a scrape without it, or with another, is refused with 401 and the envelope', async () => {
  const missing = await get(guardedPort, '/metrics');
  assert.equal(missing.status, 401);
  assert.equal(missing.headers['www-authenticate'], 'Bearer realm="metrics"');
  assert.equal(missing.headers['content-type'], 'application/json');
  assert.deepEqual(JSON.parse(missing.body), { error: { message: 'The metrics listener needs its bearer token: send Authorization: Bearer <the token in metrics.tokenFile>.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } });
  const wrong = await get(guardedPort, '/metrics', { authorization: `Bearer ${'e'.repeat(40)}` });
  assert.equal(wrong.status, 401);
  assert.equal((JSON.parse(wrong.body) as { error: { message: string } }).error.message, 'The bearer token is not the metrics listener\'s (metrics.tokenFile).');
  const basic = await get(guardedPort, '/metrics', { authorization: `Basic ${TOKEN}` });
  assert.equal(basic.status, 401);
  const right = await get(guardedPort, '/metrics', { authorization: `Bearer ${TOKEN}` });
  assert.equal(right.status, 200);
  assert.ok(right.body.includes('# TYPE portcullis_requests_total counter'));
  // /healthz needs no token: a probe learns nothing from it.
  assert.equal((await get(guardedPort, '/healthz')).status, 200);
});

test('only GET /metrics and GET /healthz: another path is 404, another method 405 with Allow', async () => {
  const other = await get(openPort, '/api/keys');
  assert.equal(other.status, 404);
  assert.deepEqual(JSON.parse(other.body), { error: { message: 'This listener serves GET /metrics and GET /healthz only; /api/keys is not one of them.', type: 'invalid_request_error', param: null, code: 'unknown_url' } });
  const post = await get(openPort, '/metrics', {}, 'POST');
  assert.equal(post.status, 405);
  assert.equal(post.headers['allow'], 'GET, HEAD');
  assert.equal((JSON.parse(post.body) as { error: { code: string } }).error.code, 'method_not_allowed');
});

const base = { providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo' } } };
function problem(metricsSection: unknown): string {
  try {
    parseConfig({ ...base, metrics: metricsSection }, '/etc/portcullis.json', '/etc');
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  return 'accepted';
}

test('config: off by default; loopback by default; a token file required off loopback; ports must not collide', () => {
  assert.equal(parseConfig(base, null, '/etc').metrics, null);
  assert.deepEqual(parseConfig({ ...base, metrics: { port: 9464 } }, null, '/etc').metrics, { host: '127.0.0.1', port: 9464, tls: null, tokenFile: null });
  assert.deepEqual(parseConfig({ ...base, metrics: { host: '0.0.0.0', port: 9464, tokenFile: 'metrics-token' } }, '/etc/p.json', '/etc').metrics, { host: '0.0.0.0', port: 9464, tls: null, tokenFile: '/etc/metrics-token' });
  assert.equal(problem({ host: '0.0.0.0', port: 9464 }), '/etc/portcullis.json: metrics.tokenFile: is required when metrics.host ("0.0.0.0") is not a loopback address: anyone who can reach the port could read the metrics. Put a token in a file (openssl rand -hex 32 > /etc/portcullis/metrics-token) and name it here');
  assert.equal(problem({}), '/etc/portcullis.json: metrics.port: is required (the port Prometheus scrapes, e.g. 9464)');
  assert.equal(problem({ port: 8081 }), '/etc/portcullis.json: metrics.port: must differ from admin.port (8081): the metrics listener is a separate socket');
  assert.equal(problem({ port: 9464, path: '/m' }).startsWith('/etc/portcullis.json: metrics.path: '), true, problem({ port: 9464, path: '/m' }));
});

test('a token file holds one token of at least 32 characters', () => {
  assert.deepEqual(metricsToken(`${TOKEN}\n`), { token: TOKEN });
  assert.deepEqual(metricsToken('\n'), { problem: 'is empty' });
  assert.deepEqual(metricsToken('short'), { problem: 'holds a token of 5 characters; use at least 32 (openssl rand -hex 32)' });
  assert.deepEqual(metricsToken(`${TOKEN} ${TOKEN}`), { problem: 'must hold the token on one line, without spaces' });
});
