// What a standalone host gets from the embedded gateway besides requests, as
// `portcullis serve` uses it: status() and openConnections for a banner or a
// watchdog, metrics() and /metrics on the admin routes and the metrics
// listener, the admin listener's one-time bootstrap token, certificates read
// again on reload(), a logger the library made following log.level, the config
// file named by `source`, and listen() failures a host can word itself.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import type { ListenFailure } from '../../src/api/gateway.ts';
import { setAdminPassword } from '../../src/admin/admin-credentials.ts';
import { GatewayConfigError } from '../../src/library/check-config.ts';
import { createGateway } from '../../src/library/create-gateway.ts';
import { createLogger } from '../../src/log/logger.ts';
import { openFileBackend } from '../../src/state/file-backend.ts';
import { eventually } from '../support/eventually.ts';
import { freshDir, memoryTempDir } from '../support/temp-dir.ts';
import { tlsRequest } from '../tls/https-client.ts';
import { createInProcessPki } from '../tls/in-process-pki.ts';
import { DEMO } from './demo-config.ts';

const root = memoryTempDir('library-host-facts');
const pki = createInProcessPki();
after(() => pki.cleanup());

function recordingLogger(level: 'debug' | 'info' = 'info'): { logger: ReturnType<typeof createLogger>; records: Array<Record<string, unknown>> } {
  const records: Array<Record<string, unknown>> = [];
  const logger = createLogger({ level, write: (line) => records.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, records };
}

/** A data directory with `live` API keys and `revoked` revoked ones. */
async function dataDirWithKeys(live: number, revoked: number): Promise<string> {
  const dataDir = path.join(freshDir(root), 'data');
  const state = openFileBackend(dataDir, { watch: false });
  for (let i = 0; i < live; i++) await state.keys.create(`live-${i}`);
  for (let i = 0; i < revoked; i++) {
    const made = await state.keys.create(`gone-${i}`);
    await state.keys.revoke(made.record.id);
  }
  await state.close();
  return dataDir;
}

async function get(url: string): Promise<{ status: number; type: string | null; text: string }> {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

function connected(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('the embedded gateway for a standalone host', () => {
  test('status() and openConnections: the state backend, the keys not revoked, open connections, in flight, draining', async () => {
    const dataDir = await dataDirWithKeys(2, 1);
    const gateway = await createGateway({ config: { ...DEMO, dataDir, admin: { port: 0 } }, logger: recordingLogger().logger, env: {} });
    assert.deepEqual(await gateway.status(), { state: 'memory', keys: 2, openConnections: { api: 0, admin: 0 }, inFlight: 0, draining: false });
    const address = await gateway.listen({ port: 0, host: '127.0.0.1' });
    const api = await connected(address.url);
    const admin = await connected(address.admin?.url ?? assert.fail('no admin listener'));
    await eventually(() => gateway.openConnections.api === 1 && gateway.openConnections.admin === 1, 'both connections counted');
    assert.deepEqual(await gateway.status(), { state: 'memory', keys: 2, openConnections: { api: 1, admin: 1 }, inFlight: 0, draining: false });
    api.destroy();
    admin.destroy();
    await eventually(() => gateway.openConnections.api === 0 && gateway.openConnections.admin === 0, 'both connections closed');
    const closing = gateway.close({ drainTimeoutMs: 0 });
    assert.deepEqual(await gateway.status(), { state: 'memory', keys: 2, openConnections: { api: 0, admin: 0 }, inFlight: 0, draining: true });
    await closing;
    await assert.rejects(gateway.status(), { message: 'status() after close() finished: make a new gateway' });
  });

  test('metrics(): the exposition counts reloads; the admin handler and the metrics listener answer /metrics with it', async () => {
    const dataDir = await dataDirWithKeys(0, 0);
    const config = { ...DEMO, dataDir, metrics: { host: '127.0.0.1', port: 0 } };
    const gateway = await createGateway({ config, logger: recordingLogger().logger, env: {} });
    const host = http.createServer(gateway.admin());
    let metricsUrl = '';
    try {
      assert.equal((await gateway.reload(config)).ok, true);
      assert.equal((await gateway.reload({ ...config, bogus: 1 })).ok, false);
      const text = gateway.metrics();
      assert.ok(text.includes('portcullis_config_reloads_total{result="success"} 1\n'), text);
      assert.ok(text.includes('portcullis_config_reloads_total{result="failure"} 1\n'), text);
      const address = await gateway.listen({ port: 0, host: '127.0.0.1' });
      metricsUrl = address.metrics?.url ?? assert.fail('no metrics listener');
      assert.match(metricsUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
      const scraped = await get(`${metricsUrl}/metrics`);
      assert.equal(scraped.status, 200);
      assert.equal(scraped.type, 'text/plain; version=0.0.4; charset=utf-8');
      assert.ok(scraped.text.includes('portcullis_config_reloads_total{result="success"} 1\n'));
      host.listen(0, '127.0.0.1');
      await new Promise((resolve) => host.once('listening', resolve));
      const viaAdmin = await fetch(`http://127.0.0.1:${(host.address() as AddressInfo).port}/metrics`, { headers: { host: '127.0.0.1' } });
      assert.equal(viaAdmin.status, 200);
      assert.ok((await viaAdmin.text()).includes('portcullis_config_reloads_total{result="failure"} 1\n'));
    } finally {
      host.close();
      await gateway.close();
    }
    // Closed with the gateway.
    await assert.rejects(fetch(`${metricsUrl}/metrics`));
  });

  test('listen(): an admin listener with no password makes a one-time bootstrap token, never logged; with a password, none', async () => {
    const dataDir = await dataDirWithKeys(0, 0);
    const { logger, records } = recordingLogger('debug');
    const fresh = await createGateway({ config: { ...DEMO, dataDir, admin: { port: 0 } }, logger, env: {} });
    let token: string;
    try {
      const address = await fresh.listen({ port: 0, host: '127.0.0.1' });
      token = address.admin?.bootstrapToken ?? assert.fail('no token');
      assert.match(token, /^pcb_[0-9A-Za-z]{32}$/);
      assert.equal(JSON.stringify(records).includes(token), false);
    } finally {
      await fresh.close();
    }
    await setAdminPassword(dataDir, 'a long and unguessable admin password', () => new Date(), { scrypt: { cost: 1024, blockSize: 8, parallelization: 1 } });
    const set = await createGateway({ config: { ...DEMO, dataDir, admin: { port: 0 } }, logger, env: {} });
    try {
      const address = await set.listen({ port: 0, host: '127.0.0.1' });
      assert.deepEqual(address.admin, { url: address.admin?.url, bootstrapToken: null });
      assert.equal((await set.listen({ port: 0 }).catch((err: Error) => err.message)), 'listen() was called already: a gateway has one API listener (serve more addresses from your own server with handle())');
    } finally {
      await set.close();
    }
  });

  test('reload() reads the certificate again: new connections get the renewed one; an unusable file refuses the reload and the old one keeps serving', async () => {
    const dataDir = await dataDirWithKeys(0, 0);
    const dir = freshDir(root);
    const first = pki.server('renew-first', ['127.0.0.1']);
    const renewed = pki.server('renew-second', ['127.0.0.1']);
    const certFile = path.join(dir, 'api.pem');
    const keyFile = path.join(dir, 'api.key');
    copyFileSync(first.certFile, certFile);
    copyFileSync(first.keyFile, keyFile);
    const config = { ...DEMO, dataDir, listen: { host: '127.0.0.1', port: 0, tls: { certFile: 'api.pem', keyFile: 'api.key' } } };
    const gateway = await createGateway({ config, baseDir: dir, logger: recordingLogger().logger, env: {} });
    try {
      const address = await gateway.listen();
      assert.match(address.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      const served = async (): Promise<string> => (await tlsRequest(`${address.url}/healthz`, { ca: pki.ca })).serverSha256;
      const fingerprint = (pem: Buffer): string => new X509Certificate(pem).fingerprint256;
      assert.equal(await served(), fingerprint(first.cert));

      rmSync(keyFile);
      const refused = await gateway.reload(config);
      assert.deepEqual(refused, {
        ok: false,
        issues: [{ code: 'invalid_tls_file', path: 'listen.tls.keyFile', message: `${keyFile} does not exist` }],
        problem: `listen.tls.keyFile: ${keyFile} does not exist`,
      });
      assert.equal(await served(), fingerprint(first.cert));

      copyFileSync(renewed.certFile, certFile);
      copyFileSync(renewed.keyFile, keyFile);
      assert.deepEqual(await gateway.reload(config), { ok: true, aliases: 2, restartNeeded: [] });
      assert.equal(await served(), fingerprint(renewed.cert));
    } finally {
      await gateway.close();
    }
  });

  test('source: GatewayConfigError begins with the file, and its relative apiKeyFile resolves against the file\'s folder', async () => {
    const dir = freshDir(root);
    const source = path.join(dir, 'etc', 'portcullis.json');
    mkdirSync(path.dirname(source), { recursive: true });
    const config = { ...DEMO, dataDir: path.join(dir, 'data'), providers: { up: { type: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKeyFile: 'up.key' } }, aliases: { 'service-chat': { provider: 'up', model: 'm' } } };
    const missing = await createGateway({ config, source, logger: recordingLogger().logger, env: {} }).then(
      () => assert.fail('resolved'),
      (err: unknown) => err,
    );
    assert.ok(missing instanceof GatewayConfigError);
    assert.equal(missing.message, `${source}: providers.up.apiKeyFile: ${path.join(dir, 'etc', 'up.key')} does not exist`);
    assert.equal(missing.problem, `providers.up.apiKeyFile: ${path.join(dir, 'etc', 'up.key')} does not exist`);
    writeFileSync(path.join(dir, 'etc', 'up.key'), 'sk-upstream\n');
    const gateway = await createGateway({ config, source, logger: recordingLogger().logger, env: {} });
    await gateway.close();
  });

  test('providerKey: a provider the host answers for needs no apiKeyEnv, at start and on reload; one it does not, the config problem', async () => {
    const dataDir = await dataDirWithKeys(0, 0);
    const upstream = (name: string) => ({ type: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: `${name.toUpperCase()}_KEY` });
    const config = (names: string[]) => ({
      ...DEMO,
      dataDir,
      providers: Object.fromEntries(names.map((n) => [n, upstream(n)])),
      aliases: Object.fromEntries(names.map((n) => [`service-${n}`, { provider: n, model: 'm' }])),
      auto: { default: `service-${names[0]}` },
    });
    const providerKey = (provider: string): string | undefined => (provider === 'vault' || provider === 'later' ? `sk-${provider}` : undefined);
    const refused = await createGateway({ config: config(['vault', 'plain']), providerKey, logger: recordingLogger().logger, env: {} }).then(
      () => assert.fail('resolved'),
      (err: unknown) => err,
    );
    assert.ok(refused instanceof GatewayConfigError);
    assert.deepEqual(refused.issues, [{ code: 'missing_credential', path: 'providers.plain.apiKeyEnv', message: 'environment variable PLAIN_KEY is not set or empty' }]);
    const gateway = await createGateway({ config: config(['vault']), providerKey, logger: recordingLogger().logger, env: {} });
    try {
      assert.deepEqual(await gateway.reload(config(['vault', 'later'])), { ok: true, aliases: 3, restartNeeded: [] });
      const plain = await gateway.reload(config(['vault', 'plain']));
      assert.equal(plain.ok, false);
      assert.match(plain.ok ? '' : plain.problem, /^providers\.plain\.apiKeyEnv: environment variable PLAIN_KEY is not set or empty/);
    } finally {
      await gateway.close();
    }
  });

  test('a library-made logger follows log.level on each accepted reload', async () => {
    const dataDir = await dataDirWithKeys(0, 0);
    const written: Array<Record<string, unknown>> = [];
    const original = process.stdout.write;
    // The gateway's JSON lines are taken off stdout here; everything else passes.
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      const text = String(chunk);
      const lines = text.split('\n').filter((l) => l.startsWith('{"time"') || l.startsWith('{"level"'));
      if (lines.length > 0 && lines.length === text.split('\n').filter((l) => l !== '').length) {
        for (const line of lines) written.push(JSON.parse(line) as Record<string, unknown>);
        return true;
      }
      return (original as (...args: unknown[]) => boolean).call(process.stdout, chunk, ...rest);
    }) as typeof process.stdout.write;
    try {
      const config = { ...DEMO, dataDir, log: { level: 'warn' } };
      const gateway = await createGateway({ config, env: {} });
      assert.equal((await gateway.reload({ ...config, log: { level: 'info' } })).ok, true);
      assert.equal((await gateway.reload({ ...config, log: { level: 'error' } })).ok, true);
      await gateway.close();
      // At warn the first reload's line is not written; at info the second's is; at error nothing after.
      assert.deepEqual(
        written.filter((l) => l['msg'] === 'configuration reloaded').map((l) => l['aliases']),
        [2],
      );
    } finally {
      process.stdout.write = original;
    }
  });

  test('listen() failures carry what a host words its own message from; what was bound is let go', async () => {
    const dataDir = await dataDirWithKeys(0, 0);
    const taken = createServer();
    taken.listen(0, '127.0.0.1');
    await new Promise((resolve) => taken.once('listening', resolve));
    const takenPort = (taken.address() as AddressInfo).port;
    const gateway = await createGateway({ config: { ...DEMO, dataDir, admin: { port: 0 } }, logger: recordingLogger().logger, env: {} });
    try {
      const failure = await gateway.listen({ port: 0, host: '127.0.0.1', adminPort: takenPort }).then(
        () => assert.fail('listened'),
        (err: Error & ListenFailure) => err,
      );
      assert.equal(failure.message, `the admin listener: 127.0.0.1:${takenPort} is already in use by another process; set admin.port or listen()'s adminPort, or listen({admin: false}) (0 picks a free port)`);
      assert.deepEqual(
        { listener: failure.listener, reason: failure.reason, address: failure.address, host: failure.host, port: failure.port },
        { listener: 'admin', reason: 'in_use', address: `127.0.0.1:${takenPort}`, host: '127.0.0.1', port: takenPort },
      );
      const address = await gateway.listen({ port: 0, host: '127.0.0.1', adminPort: 0 });
      assert.equal((await get(`${address.url}/healthz`)).status, 200);
    } finally {
      await gateway.close();
      taken.close();
    }
  });
});
