// The Redis backend over rediss:// against a real redis-server that requires a
// password and client certificates: state.redis.tls read through
// config/tls-files.ts (paths relative to the config file), keys and limits
// through the TLS connection, refusals that name the setting, an outage over TLS.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { runCli } from '../../src/cli/main.ts';
import { ConfigError, type RedisStateConfig, type TlsClientConfig } from '../../src/config/config.ts';
import { NO_LIMITS, type KeyLimits } from '../../src/limits/key-limits.ts';
import { createLogger } from '../../src/log/logger.ts';
import { RedisUnavailableError } from '../../src/redis/errors.ts';
import { openRedisBackend, type RedisBackend } from '../../src/state/redis-backend.ts';
import { eventually } from '../support/eventually.ts';
import { startRedisServer, type RedisServerHandle, type RedisServerTls } from '../support/redis-server.ts';
import { createTestPki, type TestPki } from '../tls/test-pki.ts';

const T0 = Date.UTC(2026, 10, 22, 12);
const rpm1: KeyLimits = { ...NO_LIMITS, requestsPerMinute: 1 };
const PASSWORD = 'tls-pass';

let pki: TestPki;
let otherPki: TestPki;
let serverTls: RedisServerTls;
let redis: RedisServerHandle;
/** The config file the relative TLS paths are read against. */
let source: string;

before(async () => {
  pki = createTestPki();
  otherPki = createTestPki('Another CA');
  const serverPair = pki.server('redis');
  // The gateway's client certificate, read by the configs below from the PKI's folder.
  pki.client('gateway', 'portcullis-gateway');
  serverTls = { certFile: serverPair.certFile, keyFile: serverPair.keyFile, caFile: pki.caFile, authClients: 'yes' };
  redis = await startRedisServer({ requirepass: PASSWORD, tls: serverTls });
  source = path.join(pki.dir, 'portcullis.json');
});
after(async () => {
  await redis.stop();
  pki.cleanup();
  otherPki.cleanup();
});

const mutualTls: TlsClientConfig = { caFile: 'ca.pem', certFile: 'gateway.pem', keyFile: 'gateway.key', serverName: null, minVersion: 'TLSv1.2' };

function config(tls: TlsClientConfig | null): RedisStateConfig {
  return {
    url: `rediss://127.0.0.1:${redis.port}`,
    passwordEnv: 'REDIS_PW',
    passwordFile: null,
    keyPrefix: `t${randomUUID().slice(0, 8)}:`,
    connectTimeoutMs: 1000,
    commandTimeoutMs: 1000,
    tls,
  };
}

interface LogLine {
  level: string;
  msg: string;
  [field: string]: unknown;
}

async function open(tls: TlsClientConfig | null): Promise<{ backend: RedisBackend; logs: LogLine[] }> {
  const logs: LogLine[] = [];
  const logger = createLogger({ level: 'info', write: (line) => logs.push(JSON.parse(line)) });
  const backend = await openRedisBackend(config(tls), {
    onUnavailable: 'refuse',
    logger,
    env: { REDIS_PW: PASSWORD },
    configSource: source,
    reconnect: { baseDelayMs: 10, maxDelayMs: 50 },
    reloadIntervalMs: 3_600_000,
  });
  return { backend, logs };
}

const admit = (backend: RedisBackend, keyId: string) => backend.limiter.admit({ keyId, limits: rpm1, reservation: { tokens: 0, costNanos: 0 }, nowMs: T0 });

test('rediss:// with caFile and a client certificate: keys, the limiter (Lua) and the write check go over TLS', async () => {
  const { backend } = await open(mutualTls);
  try {
    assert.equal(backend.location, `rediss://127.0.0.1:${redis.port}/0`);
    assert.equal(backend.health(), 'ok');
    const { key } = await backend.keys.create('over-tls');
    assert.equal(backend.keys.authenticate(key)?.name, 'over-tls');
    assert.equal((await admit(backend, 'key_tls')).allowed, true);
    assert.equal((await admit(backend, 'key_tls')).allowed, false);
    assert.deepEqual(await backend.checkWritable(), { ok: true });
  } finally {
    await backend.close();
  }
});

test('a TLS file that cannot be used is a ConfigError naming its setting, before any connection', async () => {
  await assert.rejects(open({ ...mutualTls, caFile: 'missing-ca.pem' }), (error: unknown) => {
    assert.ok(error instanceof ConfigError);
    assert.deepEqual(error.issues.map((issue) => issue.path), ['state.redis.tls.caFile']);
    assert.match(error.message, new RegExp(`state\\.redis\\.tls\\.caFile: .*${path.join(pki.dir, 'missing-ca.pem').replace(/[.]/g, '\\.')}`));
    return true;
  });
});

test('refused at start: no client certificate, or no caFile (Node\'s roots); the error and one log line name the setting', async () => {
  const cases = [
    [{ ...mutualTls, certFile: null, keyFile: null }, 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', 'state.redis.tls.certFile'],
    [null, 'SELF_SIGNED_CERT_IN_CHAIN', 'state.redis.tls.caFile'],
  ] as const;
  for (const [tls, code, setting] of cases) {
    const logs: LogLine[] = [];
    const logger = createLogger({ level: 'info', write: (line) => logs.push(JSON.parse(line)) });
    await assert.rejects(
      openRedisBackend(config(tls), { onUnavailable: 'refuse', logger, env: { REDIS_PW: PASSWORD }, configSource: source }),
      (error: unknown) => {
        // The first read of the keys is what meets the refusal: serve prints this message and exits 1.
        assert.equal((error as { code?: unknown }).code, 'key_store_io_error');
        assert.ok((error as { cause?: unknown }).cause instanceof RedisUnavailableError);
        assert.match((error as Error).message, new RegExp(`^Could not read the keys from rediss://127\\.0\\.0\\.1:${redis.port}/0: Redis at 127\\.0\\.0\\.1:${redis.port} ` +
          `is not connected \\(connecting; last error: TLS ${code} \\([a-z0-9 -]+\\): .*${setting.replace(/[.]/g, '\\.')}.*\\)\\.$`));
        return true;
      },
    );
    assert.deepEqual(logs.map((line) => [line.level, line.msg, line['code'], line['setting']]), [['error', 'redis TLS connection refused', code, setting]]);
  }
});

test('an outage over TLS: Redis restarted with a certificate of another CA, then with the right one', async () => {
  const { backend, logs } = await open(mutualTls);
  const foreign = otherPki.server('foreign-redis');
  try {
    assert.equal((await admit(backend, 'key_outage')).allowed, true);
    await redis.restart({ ...serverTls, certFile: foreign.certFile, keyFile: foreign.keyFile });
    await eventually(() => logs.some((line) => line.level === 'error'), 'the TLS refusal logged');
    assert.equal(backend.health(), 'unavailable');
    await redis.restart(serverTls);
    await eventually(() => backend.health() === 'ok', 'the backend healthy again');
    // The restarted Redis is empty (no persistence in tests): the bucket is full again, counted in Redis.
    assert.equal((await admit(backend, 'key_outage')).allowed, true);
    assert.equal((await admit(backend, 'key_outage')).allowed, false);
    assert.deepEqual(logs.map((line) => [line.level, line.msg, line['setting'] ?? null]), [
      ['warn', 'state backend unavailable: Redis cannot be reached; requests of keys with limits are refused (503) until it answers', null],
      ['error', 'redis TLS connection refused', 'state.redis.tls.caFile'],
      ['info', 'state backend recovered: Redis answers again', null],
    ]);
  } finally {
    await backend.close();
    await redis.restart(serverTls);
  }
});

test('portcullis keys with a rediss:// config file: the key is created over TLS; without the client certificate the error names the setting', async () => {
  const configPath = path.join(pki.dir, 'cli-config.json');
  const keyPrefix = `cli${randomUUID().slice(0, 8)}:`;
  const write = (tls: Record<string, string>): void => writeFileSync(configPath, JSON.stringify({
    providers: { demo: { type: 'demo' } },
    aliases: { 'service-chat': { provider: 'demo' } },
    state: { backend: 'redis', redis: { url: `rediss://127.0.0.1:${redis.port}/0`, passwordEnv: 'REDIS_PW', keyPrefix, tls } },
  }));
  async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const sink = (add: (s: string) => void) => new Writable({ write(chunk: Buffer, _e, cb) { add(chunk.toString()); cb(); } });
    const code = await runCli(['--config', configPath, ...args], { stdout: sink((t) => (stdout += t)), stderr: sink((t) => (stderr += t)), env: { REDIS_PW: PASSWORD }, cwd: pki.dir });
    return { code, stdout, stderr };
  }

  write({ caFile: 'ca.pem', certFile: 'gateway.pem', keyFile: 'gateway.key' });
  const created = await cli(['keys', 'create', '--name', 'via-cli', '--json']);
  assert.equal(created.code, 0, created.stderr);
  const { key } = JSON.parse(created.stdout) as { key: string };
  const reader = await openRedisBackend({ ...config(mutualTls), keyPrefix }, {
    onUnavailable: 'refuse', logger: createLogger({ level: 'error', write: () => {} }), env: { REDIS_PW: PASSWORD }, configSource: source,
  });
  try {
    assert.equal(reader.keys.authenticate(key)?.name, 'via-cli');
  } finally {
    await reader.close();
  }

  write({ caFile: 'ca.pem' });
  const refused = await cli(['keys', 'list']);
  assert.equal(refused.code, 1);
  const lines = refused.stderr.split('\n');
  assert.equal(lines.length, 4); // where the keys are, the one TLS log line, the error, and the final newline
  assert.equal(JSON.parse(lines[1] as string).setting, 'state.redis.tls.certFile');
  assert.equal(lines[2], `portcullis keys list: Could not read the keys from rediss://127.0.0.1:${redis.port}/0: Redis at 127.0.0.1:${redis.port} is not connected ` +
    '(connecting; last error: TLS ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED (tlsv13 alert certificate required): Redis requires a client certificate: ' +
    'set state.redis.tls.certFile and state.redis.tls.keyFile).');
});
