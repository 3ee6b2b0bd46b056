// The embedded gateway as a host uses it (src/library/create-gateway.ts): a
// config value in, problems as data out; listen on port 0 and answer a chat
// through the demo provider; reload accepted and refused; close drains; two
// gateways in one process leave no process listener behind.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, test } from 'node:test';
import { GatewayConfigError } from '../../src/library/check-config.ts';
import { createGateway } from '../../src/library/create-gateway.ts';
import { createLogger } from '../../src/log/logger.ts';
import { openFileBackend } from '../../src/state/file-backend.ts';
import { eventually } from '../support/eventually.ts';
import { parrotAdapter } from './providers-sample-adapter.ts';
import { freshDir, memoryTempDir } from '../support/temp-dir.ts';
import { DEMO } from './demo-config.ts';

const root = memoryTempDir('library');

/** A data directory with one API key in it. */
async function dataDirWithKey(): Promise<{ dataDir: string; key: string }> {
  const dataDir = path.join(freshDir(root), 'data');
  const state = openFileBackend(dataDir, { watch: false });
  const created = await state.keys.create('library');
  await state.close();
  return { dataDir, key: created.key };
}

function recordingLogger(): { logger: ReturnType<typeof createLogger>; records: Array<Record<string, unknown>> } {
  const records: Array<Record<string, unknown>> = [];
  const logger = createLogger({ level: 'info', write: (line) => records.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, records };
}

async function chat(url: string, key: string, model = 'service-chat'): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }] }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('createGateway', () => {
  test('a bad config rejects with GatewayConfigError and every problem as data', async () => {
    const dataDir = path.join(freshDir(root), 'data');
    const rejection = await createGateway({ config: { ...DEMO, dataDir, listen: { port: 'eighty' }, colour: 'blue' }, logger: recordingLogger().logger }).then(
      () => assert.fail('resolved'),
      (err: unknown) => err,
    );
    assert.ok(rejection instanceof GatewayConfigError);
    assert.deepEqual(rejection.issues, [
      { code: 'unknown_setting', path: 'colour', message: 'unknown setting (allowed here: $schema, listen, admin, shutdown, log, state, dataDir, limits, providers, aliases, auto, currency, telemetry, audit, metrics, requestFields, responses, embeddings, guard, security)' },
      { code: 'not_integer', path: 'listen.port', message: 'must be an integer from 0 to 65535' },
    ]);
    assert.equal(
      rejection.message,
      'gateway config: 2 problems\n' +
        '  colour: unknown setting (allowed here: $schema, listen, admin, shutdown, log, state, dataDir, limits, providers, aliases, auto, currency, telemetry, audit, metrics, requestFields, responses, embeddings, guard, security)\n' +
        '  listen.port: must be an integer from 0 to 65535',
    );
  });

  test('a missing upstream credential is a config problem too', async () => {
    const dataDir = path.join(freshDir(root), 'data');
    const config = { ...DEMO, dataDir, providers: { up: { type: 'openai', baseUrl: 'https://llm.example/v1', apiKeyEnv: 'LIBRARY_TEST_UPSTREAM_KEY' } }, aliases: { 'service-chat': { provider: 'up', model: 'm' } } };
    const rejection = await createGateway({ config, env: {}, logger: recordingLogger().logger }).then(
      () => assert.fail('resolved'),
      (err: unknown) => err,
    );
    assert.ok(rejection instanceof GatewayConfigError);
    assert.deepEqual(rejection.issues, [{ code: 'missing_credential', path: 'providers.up.apiKeyEnv', message: 'environment variable LIBRARY_TEST_UPSTREAM_KEY is not set or empty' }]);
  });

  test('a basePath that cannot be a prefix is refused with what to change', async () => {
    for (const [basePath, message] of [
      ['llm', 'basePath must start with "/" (got "llm")'],
      ['/llm/', 'basePath must not end with "/" (got "/llm/"); "" serves at the root'],
      ['/llm?x', 'basePath must be a path without "?" or "#" (got "/llm?x")'],
    ] as const) {
      await assert.rejects(createGateway({ config: DEMO, basePath }), { name: 'TypeError', message });
    }
  });

  test('providerTypes: a host type is checked by its adapter at start and on reload; without it the type is unknown', async () => {
    const dataDir = path.join(freshDir(root), 'data');
    const parrot = (region: string): Record<string, unknown> => ({
      ...DEMO,
      dataDir,
      providers: { ...DEMO.providers, p: { type: 'parrot', baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: 'PARROT_KEY', region } },
      aliases: { ...DEMO.aliases, 'service-parrot': { provider: 'p', model: 'm' } },
    });
    const env = { PARROT_KEY: 'pk-test' };
    const unknown = await createGateway({ config: parrot('eu'), env, logger: recordingLogger().logger }).then(
      () => assert.fail('resolved'),
      (err: unknown) => err,
    );
    assert.ok(unknown instanceof GatewayConfigError);
    assert.deepEqual(unknown.issues, [{ code: 'not_one_of', path: 'providers.p.type', message: 'must be "openai", "anthropic" or "demo"' }]);
    const gateway = await createGateway({ config: parrot('eu'), env, logger: recordingLogger().logger, providerTypes: [parrotAdapter] });
    try {
      assert.deepEqual(await gateway.reload(parrot('us')), { ok: true, aliases: 3, restartNeeded: [] });
      assert.deepEqual(await gateway.reload(parrot('mars')), { ok: false, issues: [{ code: 'invalid_value', path: 'providers.p.region', message: 'must be "eu" or "us"' }], problem: 'providers.p.region: must be "eu" or "us"' });
    } finally {
      await gateway.close();
    }
  });

  test('listens on port 0 and answers a chat through the demo provider', async () => {
    const { dataDir, key } = await dataDirWithKey();
    const { logger } = recordingLogger();
    const gateway = await createGateway({ config: { ...DEMO, dataDir }, logger, env: {} });
    try {
      const address = await gateway.listen({ port: 0, host: '127.0.0.1' });
      assert.equal(address.host, '127.0.0.1');
      assert.ok(address.port > 0);
      assert.equal(address.url, `http://127.0.0.1:${address.port}`);
      assert.equal(address.admin, null);
      const answer = await chat(address.url, key);
      assert.equal(answer.status, 200);
      assert.equal(answer.body['object'], 'chat.completion');
      assert.equal(answer.body['model'], 'service-chat');
      assert.equal((await chat(address.url, 'pc-not-a-key')).status, 401);
      await assert.rejects(gateway.listen({ port: 0 }), {
        message: 'listen() was called already: a gateway has one API listener (serve more addresses from your own server with handle())',
      });
    } finally {
      await gateway.close();
    }
  });

  test('a taken port names the listener and the setting; the host may listen again elsewhere', async () => {
    const { dataDir } = await dataDirWithKey();
    const taken = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const takenPort = (taken.address() as AddressInfo).port;
    const gateway = await createGateway({ config: { ...DEMO, dataDir }, logger: recordingLogger().logger, env: {} });
    try {
      await assert.rejects(gateway.listen({ port: takenPort, host: '127.0.0.1' }), {
        message: `the API listener: 127.0.0.1:${takenPort} is already in use by another process; set listen.port or listen()'s port (0 picks a free port)`,
      });
      assert.ok((await gateway.listen({ port: 0, host: '127.0.0.1' })).port > 0);
    } finally {
      await gateway.close();
      taken.close();
    }
  });

  test('reload: accepted swaps the config in; refused changes nothing and says why', async () => {
    const { dataDir, key } = await dataDirWithKey();
    const { logger, records } = recordingLogger();
    const gateway = await createGateway({ config: { ...DEMO, dataDir }, logger, env: {} });
    try {
      const { url } = await gateway.listen({ port: 0, host: '127.0.0.1' });
      const twoAliases = { ...DEMO, dataDir, aliases: { ...DEMO.aliases, 'service-two': { provider: 'demo', model: 'portcullis-demo' } } };
      assert.deepEqual(await gateway.reload(twoAliases), { ok: true, aliases: 3, restartNeeded: [] });
      assert.equal((await chat(url, key, 'service-two')).status, 200);

      const refused = await gateway.reload({ ...twoAliases, aliases: { ...DEMO.aliases, 'service-two': { provider: 'nowhere', model: 'm' } } });
      assert.deepEqual(refused, { ok: false, issues: [{ code: 'unknown_reference', path: 'aliases.service-two.provider', message: `names provider 'nowhere', which is not defined under "providers"` }],
        problem: `aliases.service-two.provider: names provider 'nowhere', which is not defined under "providers"`,
      });
      // Nothing changed: both aliases still served.
      assert.equal((await chat(url, key, 'service-chat')).status, 200);
      assert.equal((await chat(url, key, 'service-two')).status, 200);

      assert.deepEqual(await gateway.reload({ ...twoAliases, listen: { port: 1 } }), { ok: true, aliases: 3, restartNeeded: ['listen.port'] });
      assert.deepEqual(
        records.filter((r) => r['msg'] === 'reload refused; keeping the running configuration').map((r) => r['path']),
        ['aliases.service-two.provider'],
      );
    } finally {
      await gateway.close();
    }
  });

  test('reloads never overlap: calls made together run one after another, in order', async () => {
    const { dataDir } = await dataDirWithKey();
    const gateway = await createGateway({ config: { ...DEMO, dataDir }, logger: recordingLogger().logger, env: {} });
    try {
      const order: string[] = [];
      const first = gateway.reload({ ...DEMO, dataDir }).then((r) => order.push(`first ${r.ok}`));
      const second = gateway.reload({ bogus: true }).then((r) => order.push(`second ${r.ok}`));
      const third = gateway.reload({ ...DEMO, dataDir }).then((r) => order.push(`third ${r.ok}`));
      await Promise.all([first, second, third]);
      assert.deepEqual(order, ['first true', 'second false', 'third true']);
    } finally {
      await gateway.close();
    }
  });

  test('close drains: a request open at close is ended by closeNow, the listener is closed, close is idempotent', async () => {
    const { dataDir, key } = await dataDirWithKey();
    const gateway = await createGateway({ config: { ...DEMO, dataDir }, logger: recordingLogger().logger, env: {} });
    const { port } = await gateway.listen({ port: 0, host: '127.0.0.1' });
    // A request whose body never completes: open until the drain ends it.
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    const socketClosed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"mo`);
    await eventually(() => gateway.inFlight === 1, 'the request is in flight');
    assert.equal(gateway.draining, false);
    const closing = gateway.close({ drainTimeoutMs: 60_000 });
    assert.equal(gateway.draining, true);
    assert.equal(gateway.close(), closing);
    gateway.closeNow();
    assert.deepEqual(await closing, { finished: 0, endedWithError: 1, refused: 0 });
    await socketClosed;
    assert.match(Buffer.concat(received).toString('latin1'), /^HTTP\/1\.1 503 /);
    await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`));
  });

  test('two gateways in one process add no process listener and no MaxListeners warning', async () => {
    const events = ['exit', 'SIGTERM', 'SIGINT', 'SIGHUP', 'beforeExit', 'uncaughtException', 'unhandledRejection'] as const;
    const counts = (): number[] => events.map((e) => process.listenerCount(e));
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning.name);
    };
    process.on('warning', onWarning);
    try {
      const before = counts();
      const a = await dataDirWithKey();
      const b = await dataDirWithKey();
      // No logger given: the gateway makes its own (stdout, level error: nothing written here).
      const one = await createGateway({ config: { ...DEMO, dataDir: a.dataDir, log: { level: 'error' } }, env: {} });
      const two = await createGateway({ config: { ...DEMO, dataDir: b.dataDir, log: { level: 'error' } }, env: {} });
      const [u1, u2] = await Promise.all([one.listen({ port: 0, host: '127.0.0.1' }), two.listen({ port: 0, host: '127.0.0.1' })]);
      assert.equal((await chat(u1.url, a.key)).status, 200);
      assert.equal((await chat(u2.url, b.key)).status, 200);
      assert.deepEqual(counts(), before);
      await Promise.all([one.close(), two.close()]);
      assert.deepEqual(counts(), before);
      await assert.rejects(fetch(`${u1.url}/healthz`));
      await assert.rejects(fetch(`${u2.url}/healthz`));
      assert.deepEqual(warnings, []);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
