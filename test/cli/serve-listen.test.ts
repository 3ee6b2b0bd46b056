// `portcullis serve` and its two listeners: the admin port and the admin
// listener as flags, and a taken port named with the setting that moves it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SERVER_MAIN, skipUnlessCompiled, spawnServe } from './serve-process.ts';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'portcullis-listen-'));
let taken: Server;
let takenPort = 0;

before(async () => {
  taken = createServer();
  taken.listen(0, '127.0.0.1');
  await once(taken, 'listening');
  takenPort = (taken.address() as AddressInfo).port;
});

after(async () => {
  taken.close();
  await once(taken, 'close');
  rmSync(tmp, { recursive: true, force: true });
});

function serve(args: string[]): { code: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [SERVER_MAIN, 'serve', ...args], {
    cwd: tmp,
    env: { PATH: process.env['PATH'] ?? '', HOME: tmp, PORTCULLIS_DATA_DIR: path.join(tmp, 'data') },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { code: r.status, stderr: r.stderr };
}

describe('serve listeners', { skip: skipUnlessCompiled }, () => {
  test('flag errors exit 2 and say what to change', () => {
    assert.deepEqual(serve(['--admin-port', '65536']), { code: 2, stderr: 'portcullis serve: --admin-port must be an integer from 0 to 65535\n' });
    assert.deepEqual(serve(['--admin-port=-1']), { code: 2, stderr: 'portcullis serve: --admin-port must be an integer from 0 to 65535\n' });
    assert.deepEqual(serve(['--admin-port', '0', '--no-admin']), { code: 2, stderr: 'portcullis serve: --admin-port and --no-admin cannot be combined\n' });
    assert.deepEqual(serve(['--port', '9123', '--admin-port', '9123']), {
      code: 2,
      stderr: 'portcullis serve: the API and admin listeners would both use port 9123; give --admin-port another port (0 picks a free one) or --no-admin\n',
    });
    // The default admin port is 8081.
    assert.equal(serve(['--port', '8081']).stderr, 'portcullis serve: the API and admin listeners would both use port 8081; give --admin-port another port (0 picks a free one) or --no-admin\n');
  });

  test('a taken API port names the listener and the setting', () => {
    assert.deepEqual(serve(['--port', String(takenPort), '--admin-port', '0']), {
      code: 1,
      stderr: `portcullis serve: cannot listen: the API listener: 127.0.0.1:${takenPort} is already in use by another process; set listen.port or --port (0 picks a free port)\n`,
    });
  });

  test('a taken admin port names the listener and the setting', () => {
    assert.deepEqual(serve(['--port', '0', '--admin-port', String(takenPort)]), {
      code: 1,
      stderr:
        `portcullis serve: cannot listen: the admin listener: 127.0.0.1:${takenPort} is already in use by another process; ` +
        'set admin.port or --admin-port, or turn it off with --no-admin (0 picks a free port)\n',
    });
  });

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
