// A SIGHUP reload leaves exactly one record: config.reload when accepted,
// config.reload_refused with the problem and the setting or file at fault
// when the config, a certificate or keys.json is bad. The reloader runs
// in-process on a real gateway and file key store with a recording trail;
// that `serve` hands its trail to the reloader is doors-reload.system.test.ts's.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import type { AuditEvent } from '../../src/audit/audit-event.ts';
import { createReloader } from '../../src/cli/serve-reloader.ts';
import { configDigest } from '../../src/config/config-change.ts';
import { ConfigError } from '../../src/config/config.ts';
import { loadConfig } from '../../src/config/config-loader.ts';
import { createGateway } from '../../src/gateway/gateway.ts';
import { createLogger } from '../../src/log/logger.ts';
import { openFileBackend } from '../../src/state/file-backend.ts';
import { recordingAuditTrail } from '../admin/recording-audit-trail.ts';
import type { LogLine } from '../cli/serve-process.ts';
import { freshDir, tempDir } from '../support/temp-dir.ts';

const root = tempDir('audit-reload');
const cleanup: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const step of cleanup.reverse()) await step();
});

const SYSTEM = { kind: 'system', id: 'serve' } as const;
const DEMO = { providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo' } }, auto: { default: 'service-chat' } };

function writeConfig(file: string, dataDir: string, extra: Record<string, unknown> = {}): void {
  writeFileSync(file, JSON.stringify({ admin: { enabled: false }, dataDir, ...DEMO, ...extra }));
}

test('accepted, refused for the config, a certificate and keys.json: one record each, with the problem the log line names', async () => {
  const dir = freshDir(root);
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dir, 'portcullis.json');
  writeConfig(file, dataDir);
  const logs: LogLine[] = [];
  const logger = createLogger({ level: 'info', write: (text) => logs.push(...text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as LogLine)) });
  const load = (): ReturnType<typeof loadConfig> => loadConfig({ configPath: file, env: {}, cwd: dir });
  const state = openFileBackend(dataDir, { watch: false });
  const gateway = createGateway({ config: load(), state, logger, env: {} });
  cleanup.push(async () => {
    await gateway.close();
    await state.close();
  });
  const trail = recordingAuditTrail();
  let badCertificate = false;
  let source: string | null = file;
  let outcome: (ok: boolean) => void = () => undefined;
  const digest = configDigest(load());
  const unchanged = { digest, previousDigest: digest, changes: 0, changed: [], restartNeeded: [] };
  const reloader = createReloader({
    gateway,
    keys: state.keys,
    logger,
    audit: trail,
    load,
    loaded: load(),
    source: () => source,
    levelFromFlag: undefined,
    stopping: () => false,
    certificates: {
      prepare: () => {
        // What loadListenerCertificates throws for an unreadable certificate file.
        if (badCertificate) throw new ConfigError(file, 'listen.tls.certFile', `cannot read ${path.join(dir, 'cert.pem')}: no such file`);
        return { commit: () => undefined };
      },
    },
    onOutcome: (o) => outcome(o.ok),
  });
  /** One SIGHUP's worth: the records it left, once its outcome is told. */
  const reload = async (expectOk: boolean): Promise<AuditEvent[]> => {
    const mark = trail.events.length;
    const done = new Promise<boolean>((resolve) => {
      outcome = resolve;
    });
    reloader.request();
    assert.equal(await done, expectOk);
    return trail.events.slice(mark);
  };
  const refusedLine = (): LogLine => logs.filter((l) => l['msg'] === 'reload refused; keeping the running configuration').at(-1) as LogLine;

  assert.deepEqual(await reload(true), [{ actor: SYSTEM, source: 'signal', action: 'config.reload', target: file, before: null, after: null, detail: unchanged }]);

  writeConfig(file, dataDir, { bogus: true });
  const badConfig = await reload(false);
  assert.match(String(refusedLine()['problem']), /^bogus: unknown setting/);
  assert.deepEqual(badConfig, [
    { actor: SYSTEM, source: 'signal', action: 'config.reload_refused', target: file, before: null, after: null, detail: { problem: refusedLine()['problem'] as string, path: 'bogus' } },
  ]);

  writeConfig(file, dataDir);
  badCertificate = true;
  const badCert = await reload(false);
  assert.equal(refusedLine()['problem'], `listen.tls.certFile: cannot read ${path.join(dir, 'cert.pem')}: no such file`);
  assert.deepEqual(badCert, [
    { actor: SYSTEM, source: 'signal', action: 'config.reload_refused', target: file, before: null, after: null, detail: { problem: refusedLine()['problem'] as string, path: 'listen.tls.certFile' } },
  ]);
  badCertificate = false;

  writeFileSync(path.join(dataDir, 'keys.json'), '{"version": 2, "keys": [');
  const badKeys = await reload(false);
  assert.match(String(refusedLine()['problem']), /keys\.json/);
  assert.deepEqual(badKeys, [
    { actor: SYSTEM, source: 'signal', action: 'config.reload_refused', target: file, before: null, after: null, detail: { problem: refusedLine()['problem'] as string, path: state.keys.location } },
  ]);

  writeFileSync(path.join(dataDir, 'keys.json'), '{"version": 2, "keys": []}');
  source = null;
  assert.deepEqual(await reload(true), [{ actor: SYSTEM, source: 'signal', action: 'config.reload', target: 'embedded', before: null, after: null, detail: unchanged }]);
});

test('an accepted reload says what changed: the digests of the new and the replaced config, the changed settings, those needing a restart; a refused one in between changes nothing', async () => {
  const dir = freshDir(root);
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dir, 'portcullis.json');
  writeConfig(file, dataDir);
  const logger = createLogger({ level: 'error', write: () => undefined });
  const load = (): ReturnType<typeof loadConfig> => loadConfig({ configPath: file, env: {}, cwd: dir });
  const state = openFileBackend(dataDir, { watch: false });
  // As serve: the gateway runs with what it derived at start (maxConnections from the descriptor limit), the reloader compares files.
  const started = load();
  const gateway = createGateway({ config: { ...started, limits: { ...started.limits, maxConnections: 1024 } }, state, logger, env: {} });
  cleanup.push(async () => {
    await gateway.close();
    await state.close();
  });
  const trail = recordingAuditTrail();
  let outcome: (ok: boolean) => void = () => undefined;
  const reloader = createReloader({ gateway, keys: state.keys, logger, audit: trail, load, loaded: started, source: () => file, levelFromFlag: undefined, stopping: () => false, onOutcome: (o) => outcome(o.ok) });
  const reload = async (expectOk: boolean): Promise<AuditEvent['detail']> => {
    const mark = trail.events.length;
    const done = new Promise<boolean>((resolve) => {
      outcome = resolve;
    });
    reloader.request();
    assert.equal(await done, expectOk);
    const events = trail.events.slice(mark);
    assert.equal(events.length, 1);
    assert.equal(events[0]?.action, expectOk ? 'config.reload' : 'config.reload_refused');
    return events[0]?.detail;
  };
  const first = configDigest(started);

  const chat = { targets: [{ provider: 'demo', model: 'portcullis-demo' }, { provider: 'demo', model: 'portcullis-demo', priority: 2 }] };
  writeConfig(file, dataDir, { limits: { maxConnections: 500 }, listen: { port: 9999 }, aliases: { 'service-chat': chat } });
  const second = configDigest(load());
  assert.notEqual(second, first);
  assert.deepEqual(await reload(true), {
    digest: second,
    previousDigest: first,
    changes: 3,
    changed: ['listen.port', 'limits.maxConnections', 'aliases.service-chat.targets'],
    restartNeeded: ['listen.port'],
  });
  assert.equal(gateway.config.limits.maxConnections, 500);

  writeConfig(file, dataDir, { bogus: true });
  const refused = await reload(false);
  assert.equal(refused?.['path'], 'bogus');
  assert.match(String(refused?.['problem']), /^bogus: unknown setting/);

  // Compared with the last accepted config, not with the refused file: only the weight changed since.
  writeConfig(file, dataDir, { limits: { maxConnections: 500 }, listen: { port: 9999 }, aliases: { 'service-chat': { targets: [chat.targets[0], { ...chat.targets[1], weight: 5 }] } } });
  const third = configDigest(load());
  assert.deepEqual(await reload(true), { digest: third, previousDigest: second, changes: 1, changed: ['aliases.service-chat.targets[1].weight'], restartNeeded: ['listen.port'] });

  // Nothing changed: says so.
  assert.deepEqual(await reload(true), { digest: third, previousDigest: third, changes: 0, changed: [], restartNeeded: ['listen.port'] });
});
