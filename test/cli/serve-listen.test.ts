// `portcullis serve` and its two listeners, in-process (runCli): the admin
// port and the admin listener as flags, and a taken port named with the
// setting that moves it. Serving on both (a process stopped by its signal)
// is in serve-listen.system.test.ts.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type AddressInfo, type Server } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { tempDir } from '../support/temp-dir.ts';
import { portcullis } from './portcullis-in-process.ts';

const tmp = tempDir('listen');
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
});

async function serve(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const { code, stderr } = await portcullis(['serve', ...args], { cwd: tmp, env: { HOME: tmp, PORTCULLIS_DATA_DIR: path.join(tmp, 'data') } });
  return { code, stderr };
}

describe('serve listeners', () => {
  test('flag errors exit 2 and say what to change', async () => {
    assert.deepEqual(await serve(['--admin-port', '65536']), { code: 2, stderr: 'portcullis serve: --admin-port must be an integer from 0 to 65535\n' });
    assert.deepEqual(await serve(['--admin-port=-1']), { code: 2, stderr: 'portcullis serve: --admin-port must be an integer from 0 to 65535\n' });
    assert.deepEqual(await serve(['--admin-port', '0', '--no-admin']), { code: 2, stderr: 'portcullis serve: --admin-port and --no-admin cannot be combined\n' });
    assert.deepEqual(await serve(['--port', '9123', '--admin-port', '9123']), {
      code: 2,
      stderr: 'portcullis serve: the API and admin listeners would both use port 9123; give --admin-port another port (0 picks a free one) or --no-admin\n',
    });
    // The default admin port is 8081.
    assert.equal((await serve(['--port', '8081'])).stderr, 'portcullis serve: the API and admin listeners would both use port 8081; give --admin-port another port (0 picks a free one) or --no-admin\n');
  });

  test('a taken API port names the listener and the setting', async () => {
    assert.deepEqual(await serve(['--port', String(takenPort), '--admin-port', '0']), {
      code: 1,
      stderr: `portcullis serve: cannot listen: the API listener: 127.0.0.1:${takenPort} is already in use by another process; set listen.port or --port (0 picks a free port)\n`,
    });
  });

  test('a taken admin port names the listener and the setting', async () => {
    assert.deepEqual(await serve(['--port', '0', '--admin-port', String(takenPort)]), {
      code: 1,
      stderr:
        `portcullis serve: cannot listen: the admin listener: 127.0.0.1:${takenPort} is already in use by another process; ` +
        'set admin.port or --admin-port, or turn it off with --no-admin (0 picks a free port)\n',
    });
  });
});
