// security.requireFips as an operator meets it: the compiled `portcullis serve`
// as a child process on this Node.js, which has no FIPS provider (the official
// binaries of every supported line answer crypto.getFips() with 0), exits 1
// with the setting and both fixes named and listens on nothing.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { freshDir, tempDir } from '../support/temp-dir.ts';
import { SERVER_MAIN as MAIN, skipUnlessCompiled as skip } from './serve-process.ts';

const tmp = tempDir('serve-fips');

test('serve with security.requireFips on a Node.js without a FIPS provider: exit 1, one line on stderr, nothing on stdout', { skip }, () => {
  const dir = freshDir(tmp);
  const file = path.join(dir, 'portcullis.json');
  writeFileSync(file, JSON.stringify({ providers: { local: { type: 'demo' } }, aliases: { a: { provider: 'local', model: 'm' } }, security: { requireFips: true } }));
  const r = spawnSync(process.execPath, [MAIN, 'serve', '--config', file, '--port', '0', '--admin-port', '0'], {
    cwd: dir,
    env: { PATH: process.env['PATH'] ?? '', HOME: dir },
    encoding: 'utf8',
    timeout: 20_000,
  });
  assert.deepEqual(
    { code: r.status, stdout: r.stdout, stderr: r.stderr },
    {
      code: 1,
      stdout: '',
      stderr:
        `portcullis serve: invalid configuration: ${file}: security.requireFips: is true, but OpenSSL runs without a FIPS provider (crypto.getFips() is 0): ` +
        'start node with --enable-fips and an OpenSSL configuration that loads a validated FIPS provider (docs/crypto.md), or set security.requireFips to false\n',
    },
  );
});
