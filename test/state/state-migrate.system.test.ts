// `portcullis state migrate`: a data directory with keys, tokens, usage and an
// audit chain moved into a real Redis, then served from there (keys, tokens,
// budgets, the chain continued); back again into a new data directory; and the
// refusals, word for word.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { runCli } from '../../src/cli/main.ts';
import { createFileAuditLog } from '../../src/audit/file-audit-log.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createRedisClient, type RedisClient } from '../../src/redis/client.ts';
import { openFileBackend } from '../../src/state/file-backend.ts';
import { openRedisBackend } from '../../src/state/redis-backend.ts';
import { flushPendingUsage } from '../../src/usage/usage-file.ts';
import { HOUR_MS } from '../../src/usage/usage-ledger.ts';
import { keyCreate } from '../audit/audit-fixtures.ts';
import { sink } from '../support/collect.ts';
import { sharedRedis, type SharedRedis } from '../support/redis-server.ts';
import { tempDir } from '../support/temp-dir.ts';

let redis: SharedRedis;
let client: RedisClient;
let root: string;
const quiet = createLogger({ level: 'error', write: () => {} });

before(async () => {
  redis = await sharedRedis();
  client = createRedisClient({ host: '127.0.0.1', port: redis.port, db: redis.db });
  root = tempDir('state-migrate');
});

after(async () => {
  await client.close();
});

function writeConfig(name: string, settings: Record<string, unknown>): string {
  const file = path.join(root, `${name}.json`);
  writeFileSync(file, JSON.stringify({
    listen: { port: 0 },
    admin: { enabled: false },
    providers: { demo: { type: 'demo' } },
    aliases: { 'service-chat': { provider: 'demo' } },
    ...settings,
  }));
  return file;
}

async function cli(config: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = sink();
  const err = sink();
  const code = await runCli(['--config', config, ...args], { stdout: out.stream, stderr: err.stream, env: {}, cwd: root });
  return { code, stdout: out.text(), stderr: err.text() };
}

const redisState = (keyPrefix: string) => ({ url: redis.url, passwordEnv: null, passwordFile: null, keyPrefix, connectTimeoutMs: 2000, commandTimeoutMs: 2000, tls: null });

/** A file-backend gateway's data directory: two keys (one with a daily token budget, one revoked), an admin token, usage of today, a chain. */
async function fileState(name: string): Promise<{ config: string; dataDir: string; budgeted: { id: string; key: string }; revoked: string; token: string }> {
  const dataDir = path.join(root, name);
  const config = writeConfig(name, { dataDir });
  const created = await cli(config, ['keys', 'create', '--name', 'budgeted', '--budget', '1000/day', '--json']);
  assert.equal(created.code, 0, created.stderr);
  const budgeted = JSON.parse(created.stdout) as { id: string; key: string };
  const other = JSON.parse((await cli(config, ['keys', 'create', '--name', 'old', '--json'])).stdout) as { id: string };
  assert.equal((await cli(config, ['keys', 'revoke', other.id])).code, 0);
  const tokens = await cli(config, ['admin', 'tokens', 'create', '--name', 'ci', '--scope', 'keys', '--json']);
  assert.equal(tokens.code, 0, tokens.stderr);
  const nowMs = Date.now();
  const hour = nowMs - (nowMs % HOUR_MS);
  await flushPendingUsage(dataDir, new Map([[budgeted.id, new Map([[hour, { requests: 3, promptTokens: 120, completionTokens: 80, cachedTokens: 0, errors: 1, costNanos: 0, guardBlocked: 1, guardMasked: 2, guardLogged: 0 }]])]]), nowMs);
  return { config, dataDir, budgeted, revoked: other.id, token: (JSON.parse(tokens.stdout) as { token: string }).token };
}

test('a data directory moves into Redis whole, and a gateway on Redis serves its keys, tokens, budgets and chain', async () => {
  const { config, dataDir, budgeted, revoked, token } = await fileState('to-redis');
  const before = readdirSync(dataDir).sort();
  const moved = await cli(config, ['state', 'migrate', '--to', redis.url, '--key-prefix', 'mig1:']);
  assert.equal(moved.code, 0, moved.stderr);
  assert.equal(moved.stderr, '');
  const lines = moved.stdout.split('\n');
  assert.equal(lines[0], `Moved from the data directory ${dataDir}`);
  assert.equal(lines[1], `        to Redis ${redis.url} (key prefix mig1:):`);
  assert.equal(lines[2], '  keys          2 keys (1 revoked), last use of 0');
  assert.equal(lines[3], '  admin tokens  1');
  assert.equal(lines[4], '  usage         1 key: totals, 1 hourly bucket, 1 daily bucket');
  // No budgets.json yet (never served): the count is what usage.json shows spent today.
  assert.equal(lines[5], "  budgets       1 count of the current day or month: budgets.json's, or what usage.json shows the key spent in the window where that is more");
  assert.match(lines[6] as string, /^ {2}audit chain {3}4 records, head seq 4 [0-9a-f]{64}$/);
  // The source is left as it was.
  assert.deepEqual(readdirSync(dataDir).sort(), before);

  const backend = await openRedisBackend(redisState('mig1:'), { onUnavailable: 'refuse', logger: quiet });
  try {
    assert.equal(backend.keys.authenticate(budgeted.key)?.id, budgeted.id);
    assert.equal((await backend.keys.get(revoked)).revokedAt !== null, true);
    assert.equal((await backend.tokens.findByToken(token))?.name, 'ci');
    assert.deepEqual((await backend.usage.totals()).get(budgeted.id), { requests: 3, promptTokens: 120, completionTokens: 80, cachedTokens: 0, errors: 1, costNanos: 0, guardBlocked: 1, guardMasked: 2, guardLogged: 0 });
    const limits = backend.keys.authenticate(budgeted.key)?.limits;
    assert.ok(limits !== undefined);
    // What the key spent today counts against its budget on Redis too.
    assert.deepEqual(await backend.limiter.budgetUsed(budgeted.id, limits, Date.now()), { tokens: 200, costNanos: 0 });
    const verified = await backend.audit.verify();
    assert.equal(verified.ok && verified.count, 4);
    const head = lines[6]?.split(' ').at(-1);
    assert.equal(verified.ok && verified.head.hash, head);
    // The gateway's next record continues the copied chain.
    const next = await backend.audit.append(keyCreate(9));
    assert.equal(next.seq, 5);
    assert.equal((await backend.audit.verify()).ok, true);
  } finally {
    await backend.close();
  }

  // Again into the same prefix: refused, naming what is there.
  const again = await cli(config, ['state', 'migrate', '--to', redis.url, '--key-prefix', 'mig1:']);
  assert.equal(again.code, 1);
  assert.match(again.stderr, new RegExp(`^portcullis state migrate: Redis ${redis.url.replace(/[/.]/g, '\\$&')} \\(key prefix mig1:\\) already holds \\d+ keys under the prefix: mig1:\\{audit\\}:head, mig1:\\{audit\\}:log, mig1:\\{key_[0-9A-Za-z]{16}\\}:budget:\\d{4}-\\d{2}-\\d{2}, and \\d+ more; nothing was copied\\. Migrate into an empty destination \\(another database, or another --key-prefix\\), or remove what it holds if it is not needed\\n$`));
});

test('Redis moves back into a new data directory, and the file backend serves it', async () => {
  const { config, budgeted, token } = await fileState('round-trip');
  assert.equal((await cli(config, ['state', 'migrate', '--to', redis.url, '--key-prefix', 'mig2:'])).code, 0);
  const redisConfig = writeConfig('from-redis', { dataDir: path.join(root, 'unused'), state: { backend: 'redis', redis: { url: redis.url, keyPrefix: 'mig2:' } } });
  const target = path.join(root, 'back');
  const back = await cli(redisConfig, ['state', 'migrate', '--to', `file:${target}`]);
  assert.equal(back.code, 0, back.stderr);
  const lines = back.stdout.split('\n');
  assert.equal(lines[0], `Moved from Redis ${redis.url} (key prefix mig2:)`);
  assert.equal(lines[1], `        to the data directory ${target}:`);
  assert.equal(lines[5], '  budgets       1 count of the current day or month, copied');
  assert.deepEqual(readdirSync(target).sort(), ['admin-tokens.json', 'audit.head', 'audit.jsonl', 'budgets.json', 'keys.json', 'usage.json']);

  const backend = openFileBackend(target, { watch: false });
  try {
    assert.equal(backend.keys.authenticate(budgeted.key)?.id, budgeted.id);
    assert.equal((await backend.tokens.findByToken(token))?.name, 'ci');
    assert.equal((await backend.usage.totals()).get(budgeted.id)?.promptTokens, 120);
    const verified = await backend.audit.verify();
    assert.equal(verified.ok && verified.count, 4);
  } finally {
    await backend.close();
  }
  // The Redis source is unchanged: it still serves.
  const still = await openRedisBackend(redisState('mig2:'), { onUnavailable: 'refuse', logger: quiet });
  try {
    assert.equal(still.keys.authenticate(budgeted.key)?.id, budgeted.id);
  } finally {
    await still.close();
  }
});

test('budget counts survive a round trip: budgets.json into Redis, above the usage, and Redis back into budgets.json', async () => {
  const { config, dataDir, budgeted } = await fileState('budget-trip');
  const nowMs = Date.now();
  const today = new Date(nowMs).toISOString().slice(0, 10);
  // budgets.json holds more than usage.json shows (200): requests in flight, charges usage.json has not caught up with.
  // A day that has ended does not move: no gateway takes its count back.
  writeFileSync(path.join(dataDir, 'budgets.json'), JSON.stringify({ version: 1, keys: { [budgeted.id]: { tokens: { [today]: 950, '2020-01-01': 5 } } } }));
  const moved = await cli(config, ['state', 'migrate', '--to', redis.url, '--key-prefix', 'mig6:']);
  assert.equal(moved.code, 0, moved.stderr);
  assert.equal(moved.stdout.split('\n')[5], "  budgets       1 count of the current day or month: budgets.json's, or what usage.json shows the key spent in the window where that is more");
  assert.equal(await client.command(['GET', `mig6:{${budgeted.id}}:budget:${today}`]), '950');
  assert.equal(await client.command(['EXISTS', `mig6:{${budgeted.id}}:budget:2020-01-01`]), 0);
  const onRedis = await openRedisBackend(redisState('mig6:'), { onUnavailable: 'refuse', logger: quiet });
  try {
    const limits = onRedis.keys.authenticate(budgeted.key)?.limits;
    assert.ok(limits !== undefined);
    assert.deepEqual(await onRedis.limiter.budgetUsed(budgeted.id, limits, Date.now()), { tokens: 950, costNanos: 0 });
  } finally {
    await onRedis.close();
  }

  // Spent on Redis after the move: the count goes back as Redis holds it.
  assert.equal(await client.command(['SET', `mig6:{${budgeted.id}}:budget:${today}`, '990', 'KEEPTTL']), 'OK');
  const redisConfig = writeConfig('budget-trip-redis', { dataDir: path.join(root, 'unused3'), state: { backend: 'redis', redis: { url: redis.url, keyPrefix: 'mig6:' } } });
  const target = path.join(root, 'budget-trip-back');
  const back = await cli(redisConfig, ['state', 'migrate', '--to', `file:${target}`]);
  assert.equal(back.code, 0, back.stderr);
  assert.equal(back.stdout.split('\n')[5], '  budgets       1 count of the current day or month, copied');
  assert.equal(readFileSync(path.join(target, 'budgets.json'), 'utf8'), `{"version":1,"keys":{"${budgeted.id}":{"tokens":{"${today}":990}}}}\n`);
  const onFiles = openFileBackend(target, { watch: false });
  try {
    const limits = onFiles.keys.authenticate(budgeted.key)?.limits;
    assert.ok(limits !== undefined);
    assert.deepEqual(await onFiles.limiter.budgetUsed(budgeted.id, limits, Date.now()), { tokens: 990, costNanos: 0 });
  } finally {
    await onFiles.close();
  }
});

test('refusals: a data directory that holds state, same kinds, nothing to move, a serving gateway, a bad --to', async () => {
  const { config, dataDir } = await fileState('refusals');
  const occupied = path.join(root, 'occupied');
  mkdirSync(occupied);
  writeFileSync(path.join(occupied, 'keys.json'), '{}');
  const budgetsOnly = path.join(root, 'budgets-only');
  mkdirSync(budgetsOnly);
  writeFileSync(path.join(budgetsOnly, 'budgets.json'), '{"version":1,"keys":{}}');
  const redisConfig = writeConfig('redis-refusals', { dataDir: path.join(root, 'unused2'), state: { backend: 'redis', redis: { url: redis.url, keyPrefix: 'mig3:' } } });
  // An empty prefix: nothing to move.
  assert.deepEqual(await cli(redisConfig, ['state', 'migrate', '--to', `file:${occupied}`]), {
    code: 1,
    stdout: '',
    stderr: `portcullis state migrate: the data directory ${occupied} already holds keys.json; nothing was copied. Migrate into an empty destination (a new directory: --to file:DIR), or remove what it holds if it is not needed\n`,
  });
  assert.deepEqual(await cli(redisConfig, ['state', 'migrate', '--to', `file:${budgetsOnly}`]), {
    code: 1,
    stdout: '',
    stderr: `portcullis state migrate: the data directory ${budgetsOnly} already holds budgets.json; nothing was copied. Migrate into an empty destination (a new directory: --to file:DIR), or remove what it holds if it is not needed\n`,
  });
  assert.deepEqual(await cli(redisConfig, ['state', 'migrate', '--to', `file:${path.join(root, 'fresh')}`]), {
    code: 1,
    stdout: '',
    stderr: `portcullis state migrate: Redis ${redis.url} (key prefix mig3:) holds no keys, admin tokens, usage or audit records: nothing to migrate. Check --config and --data-dir name the gateway's state\n`,
  });
  assert.equal(existsSync(path.join(root, 'fresh')), false);
  assert.deepEqual(await cli(config, ['state', 'migrate', '--to', 'file:elsewhere']), {
    code: 1,
    stdout: '',
    stderr: 'portcullis state migrate: the source and the destination are both data directories: state migrate moves state between the file backend and Redis; to copy a data directory, stop the gateway and copy the directory\n',
  });
  assert.deepEqual(await cli(config, ['state', 'migrate', '--to', 'redis://user:secret@127.0.0.1:6379/0']), {
    code: 2,
    stdout: '',
    stderr: 'portcullis state migrate: the --to URL holds a password, which other users can read in the process list: give it with --password-env NAME or --password-file FILE\nRun "portcullis state migrate --help" for usage.\n',
  });
  assert.deepEqual(await cli(config, ['state', 'migrate']), {
    code: 2,
    stdout: '',
    stderr: 'portcullis state migrate: missing --to: redis://HOST[:PORT][/DB] (from files to Redis) or file:DIR (from Redis to files)\nRun "portcullis state migrate --help" for usage.\n',
  });

  // A gateway serving the data directory holds its listen port: the probe finds it.
  const listener: Server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const port = (listener.address() as { port: number }).port;
  try {
    const serving = writeConfig('serving', { dataDir, listen: { host: '127.0.0.1', port } });
    assert.deepEqual(await cli(serving, ['state', 'migrate', '--to', redis.url, '--key-prefix', 'mig4:']), {
      code: 1,
      stdout: '',
      stderr: `portcullis state migrate: a gateway seems to be serving on the data directory ${dataDir} (something accepts connections on 127.0.0.1:${port}, the listen address in ${serving}): stop every gateway that uses it first (systemctl stop portcullis), so nothing changes during the copy; nothing was copied\n`,
    });
  } finally {
    await new Promise((resolve) => listener.close(resolve));
  }
  assert.deepEqual(await client.command(['KEYS', 'mig4:*']), []);

  // A write-ahead record left open (a change stopped halfway): not copied until a start settles it.
  const opened = await createFileAuditLog({ dataDir }).append(keyCreate(99), { open: true });
  assert.deepEqual(await cli(config, ['state', 'migrate', '--to', redis.url, '--key-prefix', 'mig5:']), {
    code: 1,
    stdout: '',
    stderr: `portcullis state migrate: the audit chain of the data directory ${dataDir} has 1 write-ahead record whose change is not settled (seq ${opened.seq}): a gateway or a command stopped in the middle of a change; nothing was copied. Start the gateway once and stop it (its start settles them, docs/audit.md "Write-ahead"), then migrate\n`,
  });
  assert.deepEqual(await client.command(['KEYS', 'mig5:*']), []);
});
