// The TLS file checks that need another process to set up: a file root may
// not read (setpriv drops root's capabilities) and a named pipe (mkfifo).
// Every other problem is in tls-files.test.ts.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync } from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { createInProcessPki } from '../tls/in-process-pki.ts';
import { tlsFileChecks } from './tls-files-fixtures.ts';

const pki = createInProcessPki();
after(() => pki.cleanup());

const server = pki.server('server');
const dir = pki.dir;
const { source, file, listener, listenerIssues, clientIssues, bad } = tlsFileChecks(dir, server);

describe('each problem under its setting', () => {
  test('a file that cannot be read: permission denied', (t) => {
    const locked = file('locked.key', server.key);
    chmodSync(locked, 0o000);
    const expected = [bad('listen.tls.keyFile', `${locked} cannot be read (permission denied)`)];
    if (process.getuid?.() !== 0) {
      assert.deepEqual(listenerIssues({ keyFile: locked }), expected);
      return;
    }
    // Root reads any file; without its capabilities (setpriv, from util-linux) it gets EACCES like anyone.
    const script = [
      `import { checkListenerTlsFiles } from ${JSON.stringify(new URL('../../src/config/tls-files.js', import.meta.url).href)};`,
      `const tls = ${JSON.stringify(listener({ keyFile: locked }))};`,
      `process.stdout.write(JSON.stringify(checkListenerTlsFiles(${JSON.stringify(source)}, 'listen.tls', tls, {}, Date.now()).issues));`,
    ].join('\n');
    const run = spawnSync('setpriv', ['--inh-caps=-all', '--bounding-set=-all', process.execPath, '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    if (run.error !== undefined || (run.status !== 0 && run.stderr.includes('setpriv'))) {
      t.skip(`running as root without setpriv to drop capabilities: ${run.error?.message ?? run.stderr}`);
      return;
    }
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), expected);
  });

  // Opening a named pipe waits for a writer: a reload naming one froze the gateway.
  test('a named pipe is refused at once, not waited on', () => {
    const fifo = path.join(dir, 'ca.fifo');
    execFileSync('mkfifo', [fifo]);
    assert.deepEqual(clientIssues({ caFile: fifo }), [bad('providers.up.tls.caFile', `${fifo} is a named pipe or socket, not a file`)]);
  });
});
