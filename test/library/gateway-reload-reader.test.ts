// reload() given a reader in place of the config (sync or async, one that
// fails, one that has not settled yet), and the admin listener's bootstrap
// token when admin() built the admin server before listen().
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { GatewayConfigError } from '../../src/library/check-config.ts';
import { createGateway } from '../../src/library/create-gateway.ts';
import { freshDir, memoryTempDir } from '../support/temp-dir.ts';
import { DEMO, quietLogger } from './demo-config.ts';

const root = memoryTempDir('library-reload-reader');

const SECRET_MESSAGE = "ENOENT: no such file or directory, open '/etc/portcullis/sk-live-reader-secret.json'";

/** The audit chain's records, as { action, detail }. */
function auditRecords(dataDir: string): { action: string; detail: Record<string, unknown> }[] {
  return readFileSync(path.join(dataDir, 'audit.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { action: string; detail: Record<string, unknown> });
}

/** Runs `run`, collecting every unhandled rejection until the turns after it settled. */
async function watchingRejections<T>(run: () => Promise<T>): Promise<{ result: T; unhandled: unknown[] }> {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const result = await run();
    // Node reports an unhandled rejection after the microtasks of the turn drained.
    await new Promise<void>((resolve) => setImmediate(resolve));
    await new Promise<void>((resolve) => setImmediate(resolve));
    return { result, unhandled };
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
}

async function withGateway(run: (gateway: Awaited<ReturnType<typeof createGateway>>, config: typeof DEMO & { dataDir: string }, dataDir: string) => Promise<void>): Promise<void> {
  const dataDir = path.join(freshDir(root), 'data');
  const config = { ...DEMO, dataDir };
  const gateway = await createGateway({ config, env: {}, logger: quietLogger() });
  try {
    await run(gateway, config, dataDir);
  } finally {
    await gateway.close({ drainTimeoutMs: 0 });
  }
}

describe('reload() with a reader', () => {
  test('an async reader: the config it resolves to is checked and swapped in', async () => {
    await withGateway(async (gateway, config, dataDir) => {
      const result = await gateway.reload(async () => ({ ...config, log: { level: 'warn' } }));
      assert.deepEqual(result, { ok: true, aliases: 2, restartNeeded: [] });
      assert.deepEqual(auditRecords(dataDir).map((r) => r.action).slice(-1), ['config.reload']);
    });
  });

  test('an async reader resolving to a bad config is refused with its issues', async () => {
    await withGateway(async (gateway, config) => {
      const result = await gateway.reload(async () => ({ ...config, colour: 'blue' }));
      assert.equal(result.ok, false);
      assert.deepEqual(result.ok ? null : result.issues.map((i) => i.path), ['colour']);
    });
  });

  test('an async reader that rejects with an Error: refused and audited naming its class and code, not its message; no unhandled rejection', async () => {
    await withGateway(async (gateway, _config, dataDir) => {
      const { result, unhandled } = await watchingRejections(() =>
        gateway.reload(async () => {
          throw Object.assign(new Error(SECRET_MESSAGE), { code: 'ENOENT' });
        }),
      );
      assert.deepEqual(unhandled, []);
      const problem = 'the config reader failed with Error (ENOENT) (its message is not shown: it may quote the file); fix the reader or what it reads';
      assert.deepEqual(result, { ok: false, issues: [{ code: 'invalid_value', path: '', message: problem }], problem });
      const last = auditRecords(dataDir).at(-1);
      assert.deepEqual(last, { ...last, action: 'config.reload_refused', detail: { problem, path: null } });
      assert.equal(readFileSync(path.join(dataDir, 'audit.jsonl'), 'utf8').includes('sk-live-reader-secret'), false);
    });
  });

  test('a sync reader that throws a TypeError, and one that rejects with a non-Error: refused naming what was thrown', async () => {
    await withGateway(async (gateway) => {
      const typeError = await gateway.reload(() => {
        throw new TypeError(SECRET_MESSAGE);
      });
      assert.equal(typeError.ok ? null : typeError.problem, 'the config reader failed with TypeError (its message is not shown: it may quote the file); fix the reader or what it reads');
      const { result: text, unhandled } = await watchingRejections(() => gateway.reload(() => Promise.reject(SECRET_MESSAGE)));
      assert.deepEqual(unhandled, []);
      assert.equal(text.ok ? null : text.problem, 'the config reader failed with string (its message is not shown: it may quote the file); fix the reader or what it reads');
    });
  });

  test('an async reader that rejects with a GatewayConfigError: refused with its issues', async () => {
    await withGateway(async (gateway) => {
      const issue = { code: 'invalid_value', path: 'providers', message: 'the host could not read its providers file' } as const;
      const result = await gateway.reload(async () => {
        throw new GatewayConfigError([issue], '/etc/portcullis/config.json');
      });
      assert.deepEqual(result.ok ? null : result.issues, [issue]);
    });
  });

  test('a reader that has not settled: reload() waits for it, and a reload() asked for meanwhile waits its turn', async () => {
    await withGateway(async (gateway, config) => {
      let resolveReader: (value: typeof config) => void = () => {};
      const settled: string[] = [];
      const first = gateway.reload(() => new Promise<typeof config>((resolve) => (resolveReader = resolve))).then((r) => (settled.push('first'), r));
      const second = gateway.reload(config).then((r) => (settled.push('second'), r));
      for (let turn = 0; turn < 5; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
      assert.deepEqual(settled, []);
      resolveReader(config);
      assert.deepEqual(await first, { ok: true, aliases: 2, restartNeeded: [] });
      assert.deepEqual(await second, { ok: true, aliases: 2, restartNeeded: [] });
      assert.deepEqual(settled, ['first', 'second']);
    });
  });
});

describe('admin() before listen()', () => {
  test('listen() still makes the bootstrap token when no admin password is set, and it signs in once', async () => {
    const dataDir = path.join(freshDir(root), 'data');
    const gateway = await createGateway({ config: { ...DEMO, dataDir, admin: { enabled: true, port: 0 } }, env: {}, logger: quietLogger() });
    try {
      gateway.admin();
      const address = await gateway.listen({ port: 0, host: '127.0.0.1' });
      const token = address.admin?.bootstrapToken ?? assert.fail('no token');
      assert.match(token, /^pcb_[0-9A-Za-z]{32}$/);
      const login = (): Promise<Response> =>
        fetch(`${address.admin?.url}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: token }) });
      assert.equal((await login()).status, 200);
      assert.equal((await login()).status, 401);
    } finally {
      await gateway.close({ drainTimeoutMs: 0 });
    }
  });
});
