// `portcullis serve` hands its audit trail to the reloader: a SIGHUP to the
// compiled server leaves its config.reload record in the log stream. What a
// reload records is doors-reload.test.ts's (in-process).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { skipUnlessCompiled, spawnServe } from '../cli/serve-process.ts';
import { freshDir, tempDir } from '../support/temp-dir.ts';

const root = tempDir('audit-reload');
const cleanup: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const step of cleanup.reverse()) await step();
});

const DEMO = { providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo' } }, auto: { default: 'service-chat' } };

function writeConfig(file: string, dataDir: string): void {
  writeFileSync(file, JSON.stringify({ admin: { enabled: false }, dataDir, ...DEMO }));
}

describe('portcullis serve', { skip: skipUnlessCompiled }, () => {
  test('hands its trail to the reloader: a SIGHUP leaves its record in the log stream', async () => {
    const dir = freshDir(root);
    const file = path.join(dir, 'portcullis.json');
    writeConfig(file, path.join(dir, 'data'));
    const server = spawnServe({ args: ['--config', file, '--port', '0'], cwd: dir });
    cleanup.push(() => server.kill());
    await server.line((l) => l['msg'] === 'listening', 'listening');
    server.child.kill('SIGHUP');
    await server.line((l) => l['msg'] === 'configuration reloaded', 'configuration reloaded');
    // The record's shape in the stream is the trail's; what matters here is that this reload's event is in it.
    const audit = await server.line((l) => JSON.stringify(l).includes('config.reload'), 'the reload record');
    const text = JSON.stringify(audit);
    for (const part of ['"kind":"system"', '"id":"serve"', '"source":"signal"', '"action":"config.reload"', `"target":${JSON.stringify(file)}`]) {
      assert.ok(text.includes(JSON.stringify(part).slice(1, -1)) || text.includes(part), `${part} in ${text}`);
    }
    server.child.kill('SIGTERM');
    assert.deepEqual(await server.bounded(server.exited, 'the exit'), { code: 0, signal: null });
  });
});
