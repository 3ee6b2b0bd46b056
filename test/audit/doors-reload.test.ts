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
  const reloader = createReloader({
    gateway,
    keys: state.keys,
    logger,
    audit: trail,
    load,
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

  assert.deepEqual(await reload(true), [{ actor: SYSTEM, source: 'signal', action: 'config.reload', target: file, before: null, after: null }]);

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
  assert.deepEqual(await reload(true), [{ actor: SYSTEM, source: 'signal', action: 'config.reload', target: 'embedded', before: null, after: null }]);
});
