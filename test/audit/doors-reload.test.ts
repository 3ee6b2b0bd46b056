// A reload leaves exactly one record: config.reload when accepted,
// config.reload_refused with the problem and the setting or file at fault
// when the config file, a certificate or keys.json is bad. The gateway is
// made and reloaded as `serve` does it (createGateway with the file as its
// source, reload() with a reader of the file, as the system "serve" on a
// signal), its records seen through a host audit sink; that `serve` does so on
// SIGHUP is doors-reload.system.test.ts's.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import type { AuditRecord } from '../../src/api/ports.ts';
import type { Gateway, ReloadOptions } from '../../src/api/gateway.ts';
import { configDigest } from '../../src/config/config-change.ts';
import { loadConfig } from '../../src/config/config-loader.ts';
import { GatewayConfigError } from '../../src/library/check-config.ts';
import { createGateway } from '../../src/library/create-gateway.ts';
import { createLogger } from '../../src/log/logger.ts';
import type { LogLine } from '../cli/serve-process.ts';
import { freshDir, tempDir } from '../support/temp-dir.ts';
import { createInProcessPki } from '../tls/in-process-pki.ts';

const root = tempDir('audit-reload');
const pki = createInProcessPki();
const cleanup: Array<() => Promise<unknown> | void> = [];
after(async () => {
  for (const step of cleanup.reverse()) await step();
  pki.cleanup();
});

const SYSTEM = { kind: 'system', id: 'serve' } as const;
const AS_SERVE: ReloadOptions = { actor: 'serve', trigger: 'signal' };
const DEMO = { providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo' } }, auto: { default: 'service-chat' } };

function writeConfig(file: string, dataDir: string, extra: Record<string, unknown> = {}): void {
  writeFileSync(file, JSON.stringify({ admin: { enabled: false }, dataDir, ...DEMO, ...extra }));
}

/** The file's value, as serve reads it on a signal: an unreadable file refuses the reload. */
function reader(file: string): () => unknown {
  return () => {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      throw new GatewayConfigError([{ code: 'unreadable', path: '', message: 'file not found' }], file);
    }
    return JSON.parse(text) as unknown;
  };
}

/** The records the sink got, without the chain's own fields. */
function recording(): { events: Array<Omit<AuditRecord, 'seq' | 'time' | 'prev' | 'hash'>>; append(record: AuditRecord): Promise<void> } {
  const events: Array<Omit<AuditRecord, 'seq' | 'time' | 'prev' | 'hash'>> = [];
  return {
    events,
    append: async ({ seq: _seq, time: _time, prev: _prev, hash: _hash, ...rest }) => {
      events.push(rest);
    },
  };
}

test('accepted, refused for the config, an unreadable file, a certificate and keys.json: one record each, with the problem the log line names', async () => {
  const dir = freshDir(root);
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dir, 'portcullis.json');
  const pair = pki.server('reload-audit', ['127.0.0.1']);
  const tls = { listen: { host: '127.0.0.1', port: 0, tls: { certFile: pair.certFile, keyFile: pair.keyFile } } };
  writeConfig(file, dataDir, tls);
  const logs: LogLine[] = [];
  const logger = createLogger({ level: 'info', write: (text) => logs.push(...text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as LogLine)) });
  const sink = recording();
  const gateway: Gateway = await createGateway({ config: reader(file)(), source: file, env: {}, logger, audit: sink });
  cleanup.push(() => gateway.close());
  const reload = async (expectOk: boolean, options: ReloadOptions = AS_SERVE): Promise<typeof sink.events> => {
    const mark = sink.events.length;
    assert.equal((await gateway.reload(reader(file), options)).ok, expectOk);
    return sink.events.slice(mark);
  };
  const refusedLine = (): LogLine => logs.filter((l) => l['msg'] === 'reload refused; keeping the running configuration').at(-1) as LogLine;
  const digest = configDigest(loadConfig({ configPath: file, env: {}, cwd: dir }));
  const unchanged = { digest, previousDigest: digest, changes: 0, changed: [], restartNeeded: [] };
  const refusal = (detail: { problem: string; path: string | null }, target = file) => [{ actor: SYSTEM, source: 'signal', action: 'config.reload_refused', target, before: null, after: null, detail }];

  assert.deepEqual(await reload(true), [{ actor: SYSTEM, source: 'signal', action: 'config.reload', target: file, before: null, after: null, detail: unchanged }]);

  writeConfig(file, dataDir, { ...tls, bogus: true });
  const badConfig = await reload(false);
  assert.match(String(refusedLine()['problem']), /^bogus: unknown setting/);
  assert.equal(refusedLine()['source'], file);
  assert.deepEqual(badConfig, refusal({ problem: refusedLine()['problem'] as string, path: 'bogus' }));

  rmSync(file);
  assert.deepEqual(await reload(false), refusal({ problem: 'file not found', path: null }));
  assert.equal(refusedLine()['problem'], 'file not found');

  writeConfig(file, dataDir, tls);
  rmSync(pair.certFile);
  const badCert = await reload(false);
  assert.equal(refusedLine()['problem'], `listen.tls.certFile: ${pair.certFile} does not exist`);
  assert.deepEqual(badCert, refusal({ problem: refusedLine()['problem'] as string, path: 'listen.tls.certFile' }));
  writeFileSync(pair.certFile, pair.cert);

  writeFileSync(path.join(dataDir, 'keys.json'), '{"version": 2, "keys": [');
  const badKeys = await reload(false);
  assert.match(String(refusedLine()['problem']), /keys\.json/);
  assert.deepEqual(badKeys, refusal({ problem: refusedLine()['problem'] as string, path: path.join(dataDir, 'keys.json') }, file));

  writeFileSync(path.join(dataDir, 'keys.json'), '{"version": 2, "keys": []}');
  // Without options: the library's own names, the gateway's source as the target.
  assert.deepEqual(await reload(true, {}), [{ actor: { kind: 'system', id: 'library' }, source: 'reload()', action: 'config.reload', target: file, before: null, after: null, detail: unchanged }]);
});

test('an accepted reload says what changed: the digests of the new and the replaced config, the changed settings, those needing a restart; a refused one in between changes nothing', async () => {
  const dir = freshDir(root);
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dir, 'portcullis.json');
  writeConfig(file, dataDir);
  const logger = createLogger({ level: 'error', write: () => undefined });
  const load = (): ReturnType<typeof loadConfig> => loadConfig({ configPath: file, env: {}, cwd: dir });
  const sink = recording();
  // The gateway runs with what it derived at start (maxConnections from the descriptor limit); reloads compare files.
  const gateway = await createGateway({ config: reader(file)(), source: file, env: {}, logger, audit: sink });
  cleanup.push(() => gateway.close());
  const reload = async (expectOk: boolean): Promise<AuditRecord['detail']> => {
    const mark = sink.events.length;
    assert.equal((await gateway.reload(reader(file), AS_SERVE)).ok, expectOk);
    const events = sink.events.slice(mark);
    assert.equal(events.length, 1);
    assert.equal(events[0]?.action, expectOk ? 'config.reload' : 'config.reload_refused');
    return events[0]?.detail;
  };
  const first = configDigest(load());

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
