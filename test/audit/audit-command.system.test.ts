// `portcullis audit verify|list` through the real command line (runCli) on
// the Redis backend, against a real redis-server.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, test } from 'node:test';
import type { AuditRecord } from '../../src/audit/audit-record.ts';
import { runCli } from '../../src/cli/main.ts';
import { createRedisClient } from '../../src/redis/client.ts';
import { createRedisAuditLog, redisAuditKeys } from '../../src/audit/redis-audit-log.ts';
import { sink } from '../support/collect.ts';
import { sharedRedis, type SharedRedis } from '../support/redis-server.ts';
import { tempDir } from '../support/temp-dir.ts';
import { keyCreate } from './audit-fixtures.ts';

const root = tempDir('audit-cli-redis');
let redis: SharedRedis;
let configPath: string;

before(async () => {
  redis = await sharedRedis();
  configPath = path.join(root, 'redis-config.json');
  writeFileSync(configPath, JSON.stringify({
    dataDir: './redis-data',
    providers: { demo: { type: 'demo' } },
    aliases: { 'service-chat': { provider: 'demo' } },
    state: { backend: 'redis', redis: { url: redis.url, keyPrefix: 'audit-cli:' } },
  }));
});

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = sink();
  const stderr = sink();
  const code = await runCli(args, { stdout: stdout.stream, stderr: stderr.stream, env: {}, cwd: root });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

test('verify and list read the shared chain; an edit there fails verify', async () => {
  const client = createRedisClient({ host: '127.0.0.1', port: redis.port, db: redis.db });
  try {
    const log = createRedisAuditLog(client, { keyPrefix: 'audit-cli:', location: 'test' });
    for (let i = 1; i <= 3; i++) await log.append(keyCreate(i));
    const where = `portcullis audit: the shared chain in Redis (state.backend in ${configPath})\n`;
    const verified = await cli(['--config', configPath, 'audit', 'verify']);
    assert.equal(verified.code, 0, verified.stderr);
    assert.equal(verified.stderr, where);
    assert.match(verified.stdout, new RegExp(`^audit log in redis://127.0.0.1:${redis.port}/${redis.db} is whole: 3 records, seq 1 to 3\\n`));
    const listed = await cli(['--config', configPath, 'audit', 'list', '--json']);
    assert.deepEqual(listed.stdout.trim().split('\n').map((l) => (JSON.parse(l) as AuditRecord).seq), [3, 2, 1]);
    const keys = redisAuditKeys('audit-cli:');
    const second = (await client.command(['LINDEX', keys.log, 1])) as string;
    await client.command(['LSET', keys.log, 1, second.replace('"app-2"', '"app-x"')]);
    const broken = await cli(['--config', configPath, 'audit', 'verify']);
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /BROKEN \(hash_mismatch\): redis list audit-cli:\{audit\}:log line 2 \(seq 2\): hash does not match its content: the record was edited\n$/);
  } finally {
    await client.close();
  }
});
