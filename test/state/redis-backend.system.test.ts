// The Redis backend against a real redis-server: password sources, health, the write
// check, and Redis stopped and restarted under each state.onUnavailable setting.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { RedisStateConfig } from '../../src/config/config.ts';
import { NO_LIMITS, type KeyLimits } from '../../src/limits/key-limits.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createRedisClient } from '../../src/redis/client.ts';
import { openRedisBackend, redisAddress, StateUnavailableError, type RedisBackend, type RedisBackendOptions, type StateOperation } from '../../src/state/redis-backend.ts';
import { eventually } from '../support/eventually.ts';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.ts';
import { tempDir } from '../support/temp-dir.ts';
import { refusedPort } from '../upstream/refused-port.ts';

const T0 = Date.UTC(2026, 10, 22, 12);
const rpm1: KeyLimits = { ...NO_LIMITS, requestsPerMinute: 1 };
const dir = tempDir('redis-backend');

function config(port: number, set: Partial<Omit<RedisStateConfig, 'tls'>> = {}): RedisStateConfig {
  return {
    url: `redis://127.0.0.1:${port}`,
    passwordEnv: null,
    passwordFile: null,
    keyPrefix: `b${randomUUID().slice(0, 8)}:`,
    connectTimeoutMs: 500,
    commandTimeoutMs: 500,
    tls: null,
    ...set,
  };
}

interface Opened {
  backend: RedisBackend;
  logs: { level: string; msg: string; on_unavailable?: string }[];
  counted: StateOperation[];
}

async function open(cfg: RedisStateConfig, set: Partial<RedisBackendOptions> = {}): Promise<Opened> {
  const logs: Opened['logs'] = [];
  const counted: StateOperation[] = [];
  const logger = createLogger({ level: 'info', write: (line) => logs.push(JSON.parse(line)) });
  const backend = await openRedisBackend(cfg, {
    onUnavailable: 'refuse',
    logger,
    reconnect: { baseDelayMs: 10, maxDelayMs: 50 },
    reloadIntervalMs: 3_600_000,
    countUnavailable: (operation) => counted.push(operation),
    ...set,
  });
  return { backend, logs, counted };
}

const admit = (backend: RedisBackend, keyId: string, limits: KeyLimits = rpm1) => backend.limiter.admit({ keyId, limits, reservation: { tokens: 0, costNanos: 0 }, nowMs: T0 });

let server: RedisServerHandle;
before(async () => {
  server = await startRedisServer({ requirepass: 'p@ss:word/%' });
});
after(async () => {
  await server.stop();
});

test('the password comes from passwordEnv or passwordFile; a missing source is a ConfigError naming the setting', async () => {
  const file = join(dir, 'redis-password');
  writeFileSync(file, 'p@ss:word/%\n');
  for (const cfg of [config(server.port, { passwordEnv: 'REDIS_PW' }), config(server.port, { passwordFile: file })]) {
    const { backend } = await open(cfg, { env: { REDIS_PW: 'p@ss:word/%' } });
    assert.equal(backend.health(), 'ok');
    assert.deepEqual(await backend.checkWritable(), { ok: true });
    assert.equal(backend.location, `redis://127.0.0.1:${server.port}/0`);
    await backend.close();
    await backend.close(); // idempotent
  }
  const source = join(dir, 'portcullis.json');
  assert.throws(() => redisAddress(config(server.port, { passwordEnv: 'NOPE' }), {}, source), {
    code: 'invalid_config', path: 'state.redis.passwordEnv', message: `${source}: state.redis.passwordEnv: environment variable NOPE is not set or empty`,
  });
  assert.throws(() => redisAddress(config(server.port, { passwordFile: 'missing-file' }), {}, source), {
    path: 'state.redis.passwordFile', message: `${source}: state.redis.passwordFile: ${join(dir, 'missing-file')} does not exist`,
  });
  assert.throws(() => redisAddress(config(server.port, { passwordFile: '${CREDS}/pw' }), {}, source), { message: /environment variable CREDS \(used in the path\) is not set/ });
  assert.equal(redisAddress(config(server.port, { passwordFile: '${CREDS}/redis-password' }), { CREDS: dir }, null).password, 'p@ss:word/%');
  assert.deepEqual(redisAddress(config(6380, { url: 'redis://app@10.0.0.5:6380/2', passwordEnv: 'PW' }), { PW: 'a b' }, null), {
    host: '10.0.0.5', port: 6380, tls: false, db: 2, username: 'app', password: 'a b',
  });
  // Without the password, or with a wrong one, the backend does not open.
  await assert.rejects(open(config(server.port)), { code: 'NOAUTH' });
  await assert.rejects(open(config(server.port, { passwordEnv: 'PW' }), { env: { PW: 'wrong' } }), { code: 'key_store_io_error', message: /WRONGPASS/ });
});

test('Redis stopped with onUnavailable "refuse": health, 503 on admit, settle and authenticate still answer, recovery', async () => {
  const cfg = config(server.port, { passwordEnv: 'PW' });
  const { backend, logs, counted } = await open(cfg, { env: { PW: 'p@ss:word/%' } });
  try {
    const { key } = await backend.keys.create('outage');
    const held = await admit(backend, 'key_refuse');
    assert.ok(held.allowed);
    assert.equal(backend.limiter.leaseMs, 60_000);
    assert.equal(await backend.limiter.renew(held.permit, T0 + 1), true);

    await server.stop();
    await eventually(() => backend.health() === 'unavailable', 'the backend unavailable');
    await assert.rejects(admit(backend, 'key_refuse'), (error: unknown) => {
      assert.ok(error instanceof StateUnavailableError);
      assert.deepEqual([error.status, error.code, error.operation, error.headers], [503, 'state_unavailable', 'admit', { 'retry-after': '2' }]);
      assert.deepEqual(error.toBody().error.type, 'server_error');
      return true;
    });
    // A key without limits never needed Redis: it is admitted as ever.
    assert.deepEqual((await admit(backend, 'key_free', NO_LIMITS)).allowed, true);
    // Whether Redis still holds the permit is unknown: renew rejects (the caller keeps renewing), never a false "gone".
    await assert.rejects(backend.limiter.renew(held.permit, T0 + 2), { name: 'StateUnavailableError', operation: 'renew' });
    await backend.limiter.settle({ permit: held.permit, limits: rpm1, charge: { tokens: 0, costNanos: 0 }, nowMs: T0 });
    await assert.rejects(backend.limiter.budgetUsed('key_refuse', { ...NO_LIMITS, tokenBudget: { tokens: 1, period: 'day' } }, T0), StateUnavailableError);
    assert.notEqual(backend.keys.authenticate(key), null);
    const writable = await backend.checkWritable();
    assert.equal(writable.ok, false);
    assert.deepEqual(counted, ['admit', 'renew', 'settle', 'budgetUsed']);

    await server.restart();
    await eventually(() => backend.health() === 'ok', 'the backend healthy again');
    // The keys are read whole after an outage (the poll interval here is an hour): this
    // Redis came back empty (no persistence in tests), so the key is gone.
    await eventually(() => backend.keys.authenticate(key) === null, 'the key gone after the restart');
    assert.equal((await admit(backend, 'key_refuse')).allowed, true);
    assert.equal((await admit(backend, 'key_refuse')).allowed, false); // counted in Redis again
    const outage = logs.filter((line) => line.level === 'warn' || (line.level === 'info' && line.msg.startsWith('state backend')));
    assert.deepEqual(outage.map((line) => [line.level, line.msg]), [
      ['warn', 'state backend unavailable: Redis cannot be reached; requests of keys with limits are refused (503) until it answers'],
      ['info', 'state backend recovered: Redis answers again'],
    ]);
  } finally {
    await backend.close();
    await server.restart();
  }
});

test('Redis stopped with onUnavailable "local": per-instance limits meanwhile, Redis shared again after the restart', async () => {
  const cfg = config(server.port, { passwordEnv: 'PW' });
  const env = { PW: 'p@ss:word/%' };
  const a = await open(cfg, { env, onUnavailable: 'local' });
  const b = await open(cfg, { env, onUnavailable: 'local' });
  try {
    assert.ok((await admit(a.backend, 'key_local')).allowed);
    assert.equal((await admit(b.backend, 'key_local')).allowed, false); // shared through Redis

    await server.stop();
    await eventually(() => a.backend.health() === 'degraded' && b.backend.health() === 'degraded', 'both backends degraded');
    // Each instance now counts alone, from a full bucket.
    const localA = await admit(a.backend, 'key_local');
    assert.ok(localA.allowed);
    assert.equal((await admit(a.backend, 'key_local')).allowed, false);
    assert.ok((await admit(b.backend, 'key_local')).allowed);
    // A permit admitted locally is renewed and settled by the local limiter that holds it.
    assert.equal(await a.backend.limiter.renew(localA.permit, T0 + 1), true);
    await a.backend.limiter.settle({ permit: localA.permit, limits: rpm1, charge: { tokens: 0, costNanos: 0 }, nowMs: T0 });
    assert.equal(await a.backend.limiter.renew(localA.permit, T0 + 2), false);
    assert.deepEqual(a.counted, ['admit', 'admit']);
    assert.equal(a.logs.filter((line) => line.level === 'warn')[0]?.on_unavailable, 'local');

    await server.restart();
    await eventually(() => a.backend.health() === 'ok' && b.backend.health() === 'ok', 'both backends healthy again');
    // Back on Redis (fresh, no persistence): one admission for both instances together.
    assert.ok((await admit(b.backend, 'key_local')).allowed);
    assert.equal((await admit(a.backend, 'key_local')).allowed, false);
  } finally {
    await a.backend.close();
    await b.backend.close();
  }
});

test('Redis answering with an error of its own (READONLY after a failover) meets the outage policy, and the connection is rebuilt', async () => {
  const cfg = config(server.port, { passwordEnv: 'PW' });
  const { backend, counted } = await open(cfg, { env: { PW: 'p@ss:word/%' } });
  const admin = createRedisClient({ host: '127.0.0.1', port: server.port, password: 'p@ss:word/%' });
  const states: string[] = [];
  try {
    assert.ok((await admit(backend, 'key_ro')).allowed);
    // The primary becomes a replica (of nothing reachable), as a failover leaves the old one.
    await admin.command(['REPLICAOF', '127.0.0.1', '1']);
    await assert.rejects(admit(backend, 'key_ro2'), (error: unknown) => {
      assert.ok(error instanceof StateUnavailableError, String(error));
      assert.deepEqual([error.status, error.code, error.operation], [503, 'state_unavailable', 'admit']);
      return true;
    });
    assert.deepEqual(counted, ['admit']);
    // The READONLY reply dropped the connection: the client reconnects (to follow a moved address).
    states.push(backend.health());
    await admin.command(['REPLICAOF', 'NO', 'ONE']);
    await eventually(() => backend.health() === 'ok', 'the backend healthy again');
    assert.ok((await admit(backend, 'key_ro3')).allowed);
  } finally {
    await admin.command(['REPLICAOF', 'NO', 'ONE']).catch(() => undefined);
    await admin.close();
    await backend.close();
  }
  assert.deepEqual(states, ['unavailable']);
});

test('no Redis at startup: openRedisBackend rejects within connectTimeoutMs', async () => {
  await assert.rejects(open(config(await refusedPort())), { code: 'key_store_io_error', message: /not connected|connect/ });
});
