// `portcullis admin tokens` through main.ts with the Redis backend, against a
// real redis-server: the tokens go to Redis, never to the data directory.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { runCli } from '../../src/cli/main.ts';
import { createRedisClient } from '../../src/redis/client.ts';
import { createRedisAdminTokenStore } from '../../src/state/redis-admin-token-store.ts';
import { sink } from '../support/collect.ts';
import { sharedRedis } from '../support/redis-server.ts';
import { freshPath, tempDir } from '../support/temp-dir.ts';

const root = tempDir('tokens-cli-redis');

test('with the Redis backend the CLI writes to Redis, never to the data directory', async () => {
  const redis = await sharedRedis();
  const dir = freshPath(root);
  const configPath = path.join(root, 'redis-config.json');
  const keyPrefix = 'tokcli:';
  writeFileSync(
    configPath,
    JSON.stringify({
      dataDir: dir,
      providers: { demo: { type: 'demo' } },
      aliases: { 'service-chat': { provider: 'demo' } },
      state: { backend: 'redis', redis: { url: redis.url, keyPrefix } },
    }),
  );
  const out = sink();
  const err = sink();
  const code = await runCli(['--config', configPath, 'admin', 'tokens', 'create', '--name', 'shared', '--scope', 'keys', '--json'], { stdout: out.stream, stderr: err.stream, env: {}, cwd: root });
  assert.equal(code, 0, err.text());
  const { token, id } = JSON.parse(out.text()) as { token: string; id: string };
  const client = createRedisClient({ host: '127.0.0.1', port: redis.port, db: redis.db });
  try {
    assert.equal((await createRedisAdminTokenStore(client, { keyPrefix }).findByToken(token))?.id, id);
    const revoke = await runCli(['--config', configPath, 'admin', 'tokens', 'revoke', id], { stdout: sink().stream, stderr: sink().stream, env: {}, cwd: root });
    assert.equal(revoke, 0);
    assert.notEqual((await createRedisAdminTokenStore(client, { keyPrefix }).findByToken(token))?.revokedAt, null);
  } finally {
    await client.close();
  }
  assert.equal(existsSync(path.join(dir, 'admin-tokens.json')), false);
});
