// `portcullis serve` as a process on its two listeners: the dashboard on a
// free admin port, or no admin listener. The flags' refusals and taken ports
// are in serve-listen.test.ts.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { tempDir } from '../support/temp-dir.ts';
import { skipUnlessCompiled, spawnServe } from './serve-process.ts';

const tmp = tempDir('listen');

describe('serve listeners', { skip: skipUnlessCompiled }, () => {
  test('--admin-port 0 serves the dashboard on a free port; --no-admin serves none', async () => {
    for (const [flags, wantAdmin] of [
      [['--admin-port', '0'], true],
      [['--no-admin'], false],
    ] as const) {
      const server = spawnServe({ args: ['--port', '0', ...flags], cwd: tmp, env: { PORTCULLIS_DATA_DIR: path.join(tmp, 'data') } });
      try {
        const listening = await server.line((l) => l['msg'] === 'listening', 'the listening line');
        assert.match(String(listening['api']), /^http:\/\/127\.0\.0\.1:\d+$/);
        if (wantAdmin) {
          const admin = String(listening['admin']);
          assert.match(admin, /^http:\/\/127\.0\.0\.1:\d+$/);
          assert.notEqual(admin, 'http://127.0.0.1:8081');
          assert.equal((await fetch(`${admin}/healthz`)).status, 200);
        } else {
          assert.equal(listening['admin'], null);
          assert.doesNotMatch(server.stderr(), /dashboard and admin API:/);
        }
      } finally {
        server.child.kill('SIGTERM');
        assert.deepEqual(await server.bounded(server.exited, 'exit after SIGTERM'), { code: 0, signal: null });
      }
    }
  });
});
