// `serve` with a metrics listener of its own (config `metrics`): started beside
// the API and admin listeners, named in the listening line, scraped with its
// bearer token over plain HTTP, and closed with the process.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { parsePrometheusText } from '../metrics/prometheus-text.ts';
import { tempDir } from '../support/temp-dir.ts';
import { skipUnlessCompiled, spawnServe, type ServeProcess } from './serve-process.ts';

const tmp = tempDir('serve-metrics');
const TOKEN = 'metrics-token-0123456789abcdef0123456789';
const running: ServeProcess[] = [];
after(() => {
  for (const server of running) server.kill();
});

test('serve starts the metrics listener: 401 without the token, the metrics with it, gone after SIGTERM', { skip: skipUnlessCompiled }, async () => {
  const tokenFile = path.join(tmp, 'metrics-token');
  writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
  const configFile = path.join(tmp, 'config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      dataDir: path.join(tmp, 'data'),
      listen: { host: '127.0.0.1', port: 0 },
      admin: { port: 0 },
      metrics: { host: '127.0.0.1', port: 0, tokenFile },
      providers: { demo: { type: 'demo' } },
      aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo' } },
    }),
  );
  const server = spawnServe({ args: ['--config', configFile], cwd: tmp });
  running.push(server);
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
