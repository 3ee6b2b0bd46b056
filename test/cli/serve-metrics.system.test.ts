// `serve` with a metrics listener of its own (config `metrics`): started beside
// the API and admin listeners, named in the listening line, scraped with its
// bearer token over plain HTTP, and closed with the process.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { parsePrometheusText } from '../metrics/prometheus-text.ts';
import { eventually } from '../support/eventually.ts';
import { freePort, terminate } from '../support/processes.ts';
import { tempDir } from '../support/temp-dir.ts';
import { skipUnlessCompiled, spawnServe, type ServeProcess } from './serve-process.ts';

const tmp = tempDir('serve-metrics');
const TOKEN = 'metrics-token-0123456789abcdef0123456789';
const running: ServeProcess[] = [];
after(() => {
  for (const server of running) server.kill();
});

function startServe(name: string): { server: ServeProcess; tokenFile: string } {
  const dir = path.join(tmp, name);
  const tokenFile = path.join(tmp, `${name}-token`);
  writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
  const configFile = path.join(tmp, `${name}.json`);
  writeFileSync(
    configFile,
    JSON.stringify({
      dataDir: dir,
      listen: { host: '127.0.0.1', port: 0 },
      admin: { port: 0 },
      metrics: { host: '127.0.0.1', port: 0, tokenFile },
      providers: { demo: { type: 'demo' } },
      aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo' } },
    }),
  );
  const server = spawnServe({ args: ['--config', configFile], cwd: tmp });
  running.push(server);
  return { server, tokenFile };
}

const hasPrometheus = spawnSync('prometheus', ['--version'], { stdio: 'ignore' }).status === 0;

test('a real Prometheus scrapes the metrics listener with its bearer token: the target is up and its series are stored', { skip: skipUnlessCompiled || (hasPrometheus ? false : 'prometheus is not installed (.ci/install-system-packages installs it)') }, async (t) => {
  const { server, tokenFile } = startServe('prometheus');
  const listening = await server.line((l) => l['msg'] === 'listening', 'listening');
  const target = new URL(String(listening['metrics'])).host;
  const port = await freePort();
  const config = path.join(tmp, 'prometheus.yml');
  writeFileSync(
    config,
    [
      'global: { scrape_interval: 1s, scrape_timeout: 1s }',
      'scrape_configs:',
      '  - job_name: portcullis',
      '    scheme: http',
      `    authorization: { type: Bearer, credentials_file: ${JSON.stringify(tokenFile)} }`,
      `    static_configs: [ { targets: [${JSON.stringify(target)}] } ]`,
      '',
    ].join('\n'),
  );
  const prometheus = spawn('prometheus', [`--config.file=${config}`, `--storage.tsdb.path=${path.join(tmp, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: 'ignore' });
  t.after(() => terminate(prometheus));
  const api = `http://127.0.0.1:${port}/api/v1`;
  let targets: Array<{ health: string; lastError: string; scrapeUrl: string }> = [];
  await eventually(
    async () => {
      const answer = await fetch(`${api}/targets`).catch(() => null);
      if (answer === null || answer.status !== 200) return false;
      targets = ((await answer.json()) as { data: { activeTargets: typeof targets } }).data.activeTargets;
      return targets.length === 1 && targets[0]?.health === 'up';
    },
    'Prometheus to scrape the target',
    { boundMs: 30_000, everyMs: 200 },
  );
  assert.equal(targets[0]?.scrapeUrl, `http://${target}/metrics`);
  assert.equal(targets[0]?.lastError, '');
  const query = await fetch(`${api}/query?query=${encodeURIComponent('portcullis_state_backend_up{job="portcullis"}')}`);
  const result = ((await query.json()) as { data: { result: Array<{ value: [number, string] }> } }).data.result;
  assert.deepEqual(result.map((r) => r.value[1]), ['1']);
});

test('serve starts the metrics listener: 401 without the token, the metrics with it, gone after SIGTERM', { skip: skipUnlessCompiled }, async () => {
  const { server } = startServe('plain');
  const listening = await server.line((l) => l['msg'] === 'listening', 'listening');
  const address = String(listening['metrics']);
  assert.match(address, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.notEqual(address, String(listening['admin']));

  const refused = await fetch(`${address}/metrics`);
  assert.equal(refused.status, 401);
  assert.equal(refused.headers.get('www-authenticate'), 'Bearer realm="metrics"');
  await refused.arrayBuffer();

  const scraped = await fetch(`${address}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(scraped.status, 200);
  assert.equal(scraped.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  const families = parsePrometheusText(await scraped.text());
  assert.deepEqual(families.get('portcullis_state_backend_up')?.samples.map((s) => s.value), [1]);

  const other = await fetch(`${address}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(other.status, 404);
  await other.arrayBuffer();

  server.child.kill('SIGTERM');
  assert.deepEqual(await server.bounded(server.exited, 'the exit after SIGTERM'), { code: 0, signal: null });
  await assert.rejects(fetch(`${address}/metrics`), TypeError);
});
