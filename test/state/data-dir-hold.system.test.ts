// Two `portcullis serve` processes on one data directory: the second is refused
// at start, naming dataDir, the first's pid and what to do, and exits non-zero;
// the first keeps serving. After the first is killed (kill -9, no close()) its
// lock names a dead pid, and the next serve takes it over. While a serve runs,
// the CLI's key commands keep working on the same directory.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { DATA_DIR_LOCK_FILE } from '../../src/state/data-dir-hold.ts';
import { SERVER_MAIN, skipUnlessCompiled as skip, spawnServe, type ServeProcess } from '../cli/serve-process.ts';
import { tempDir } from '../support/temp-dir.ts';

const tmp = tempDir('data-dir-hold');
const dataDir = path.join(tmp, 'data');
const configFile = path.join(tmp, 'portcullis.json');
const servers: ServeProcess[] = [];
after(() => {
  for (const server of servers) server.kill();
});

function serve(): ServeProcess {
  const server = spawnServe({ args: ['--config', configFile, '--port', '0'], cwd: tmp });
  servers.push(server);
  return server;
}

describe('two serve processes on one data directory', { skip }, () => {
  test('the second exits naming dataDir and the holder; the CLI works beside the first; after kill -9 the lock is taken over', async () => {
    writeFileSync(
      configFile,
      JSON.stringify({ admin: { enabled: false }, dataDir, providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo' } } }),
    );
    const first = serve();
    await first.line((l) => l['msg'] === 'listening', 'listening');
    const firstPid = first.child.pid;
    const lock = JSON.parse(readFileSync(path.join(dataDir, DATA_DIR_LOCK_FILE), 'utf8')) as { pid: number; hostname: string; startedAt: string };
    assert.deepEqual([lock.pid, lock.hostname], [firstPid, hostname()]);

    const second = serve();
    assert.deepEqual(await second.bounded(second.exited, 'the second serve to exit'), { code: 1, signal: null });
    const output = second.stdout() + second.stderr();
    assert.ok(
      output.includes(
        `dataDir ${dataDir} is in use by another gateway (pid ${firstPid} on host ${hostname()}, started ${lock.startedAt}); one gateway keeps its budget counts per data directory, so a second would lose spending. ` +
          'Give this gateway another dataDir, or use the Redis state backend ("state": {"backend": "redis"}) for several instances (docs/scaling.md).',
      ),
      output,
    );

    const keys = spawnSync(process.execPath, [SERVER_MAIN, 'keys', 'create', '--name', 'beside', '--config', configFile], { cwd: tmp, env: { PATH: process.env['PATH'] ?? '', HOME: tmp }, encoding: 'utf8' });
    assert.equal(keys.status, 0, keys.stderr);

    first.child.kill('SIGKILL');
    assert.deepEqual(await first.exited, { code: null, signal: 'SIGKILL' });
    const third = serve();
    await third.line((l) => l['msg'] === 'listening', 'listening after the holder was killed');
    assert.equal((JSON.parse(readFileSync(path.join(dataDir, DATA_DIR_LOCK_FILE), 'utf8')) as { pid: number }).pid, third.child.pid);
    third.child.kill('SIGTERM');
    assert.deepEqual(await third.exited, { code: 0, signal: null });
    assert.throws(() => readFileSync(path.join(dataDir, DATA_DIR_LOCK_FILE)), { code: 'ENOENT' });
  });
});
