// `portcullis keys` against a config with the Redis backend: the CLI writes
// where the running gateways read, not into the data directory.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { runCli } from '../../src/cli/main.ts';
import { createLogger } from '../../src/log/logger.ts';
import { openRedisBackend, type RedisBackend } from '../../src/state/redis-backend.ts';
import { sink } from '../support/collect.ts';
import { sharedRedis, type SharedRedis } from '../support/redis-server.ts';
import { tempDir } from '../support/temp-dir.ts';

let redis: SharedRedis;
let dir: string;
let configPath: string;
let backend: RedisBackend;

before(async () => {
  redis = await sharedRedis();
  dir = tempDir('redis-cli');
  configPath = path.join(dir, 'config.json');
  writeFileSync(configPath, JSON.stringify({
    dataDir: './data',
    providers: { demo: { type: 'demo' } },
    aliases: { 'service-chat': { provider: 'demo' } },
    state: { backend: 'redis', redis: { url: redis.url, keyPrefix: 'cli-test:' } },
  }));
  backend = await openRedisBackend(
    { url: redis.url, passwordEnv: null, passwordFile: null, keyPrefix: 'cli-test:', connectTimeoutMs: 2000, commandTimeoutMs: 1000, tls: null },
    { onUnavailable: 'refuse', logger: createLogger({ level: 'error', write: () => {} }) },
  );
});

after(async () => {
  await backend.close();
});

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = sink();
  const err = sink();
  const code = await runCli(['--config', configPath, ...args], { stdout: out.stream, stderr: err.stream, env: {}, cwd: dir });
  const stdout = out.text();
  const stderr = err.text();
  // Every keys command first says where the keys are.
  const where = `portcullis keys: keys in Redis (state.backend in ${configPath})\n`;
  assert.ok(stderr.startsWith(where), stderr);
  return { code, stdout, stderr: stderr.slice(where.length) };
}

test('keys create/update/revoke with the Redis backend write to Redis, never to the data directory', async () => {
  const created = await cli(['keys', 'create', '--name', 'shared', '--rpm', '30', '--json']);
  assert.equal(created.code, 0, created.stderr);
  const { id, key } = JSON.parse(created.stdout) as { id: string; key: string };
  assert.equal(existsSync(path.join(dir, 'data', 'keys.json')), false);
  await backend.keys.reload();
  assert.equal(backend.keys.authenticate(key)?.id, id);
  assert.deepEqual(backend.keys.authenticate(key)?.limits, { requestsPerMinute: 30, tokensPerMinute: null, concurrentRequests: null, tokenBudget: null, costBudget: null });

  const updated = await cli(['keys', 'update', id, '--rpm', 'none', '--allow', 'service-chat', '--json']);
  assert.equal(updated.code, 0, updated.stderr);
  await backend.keys.reload();
  assert.deepEqual(backend.keys.authenticate(key)?.allowedAliases, ['service-chat']);
  assert.equal(backend.keys.authenticate(key)?.limits.requestsPerMinute, null);

  const listed = await cli(['keys', 'list', '--json']);
  assert.deepEqual((JSON.parse(listed.stdout) as Array<{ id: string }>).map((k) => k.id), [id]);
  assert.equal(listed.stdout.includes(key), false);

  assert.equal((await cli(['keys', 'revoke', id])).code, 0);
  await backend.keys.reload();
  assert.equal(backend.keys.authenticate(key), null);

  // A revoked key stays revoked, exactly as with the file backend.
  const refused = `Key ${id} is revoked; create a new key instead.\n`;
  assert.deepEqual(await cli(['keys', 'update', id, '--name', 'back']), { code: 1, stdout: '', stderr: `portcullis keys update: ${refused}` });
  assert.deepEqual(await cli(['keys', 'update', id, '--rpm', '5']), { code: 1, stdout: '', stderr: `portcullis keys update: ${refused}` });
  assert.deepEqual(await cli(['keys', 'rotate', id]), { code: 1, stdout: '', stderr: `portcullis keys rotate: ${refused}` });
  const kept = JSON.parse((await cli(['keys', 'list', '--json'])).stdout) as Array<{ name: string; limits: { requestsPerMinute: number | null } }>;
  assert.deepEqual(kept.map((k) => [k.name, k.limits.requestsPerMinute]), [['shared', null]]);
});

test('keys with the Redis backend unreachable: exit 1 with the reason, nothing half-written', async () => {
  const down = path.join(dir, 'down.json');
  writeFileSync(down, JSON.stringify({
    providers: { demo: { type: 'demo' } },
    aliases: { 'service-chat': { provider: 'demo' } },
    // Port 1 on loopback: nothing listens there.
    state: { backend: 'redis', redis: { url: 'redis://127.0.0.1:1/0', connectTimeoutMs: 200 } },
  }));
  const err = sink();
  const code = await runCli(['--config', down, 'keys', 'list'], { stdout: sink().stream, stderr: err.stream, env: {}, cwd: dir });
  const stderr = err.text();
  assert.equal(code, 1, stderr);
  assert.equal(stderr, `portcullis keys: keys in Redis (state.backend in ${down})\n` + 'portcullis keys list: Could not read the keys from redis://127.0.0.1:1/0: Redis at 127.0.0.1:1 is not connected (connecting; last error: connect ECONNREFUSED 127.0.0.1:1).\n');
});
