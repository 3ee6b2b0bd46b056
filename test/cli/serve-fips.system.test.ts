// security.requireFips as an operator meets it: the compiled `portcullis serve`
// as a child process on this Node.js, which has no FIPS provider (the official
// binaries of every supported line answer crypto.getFips() with 0), exits 1
// with the setting and both fixes named and listens on nothing; a scrypt
// admin.json is refused in the same message while the admin listener runs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { setAdminPassword } from '../../src/admin/admin-credentials.ts';
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

test('serve with security.requireFips and a scrypt admin.json: both problems in one refusal; with --no-admin the password is not looked at', { skip }, async () => {
  const dir = freshDir(tmp);
  const file = path.join(dir, 'portcullis.json');
  const dataDir = path.join(dir, 'data');
  await setAdminPassword(dataDir, 'correct horse battery staple', undefined, { scheme: 'scrypt', scrypt: { cost: 1024, blockSize: 8, parallelization: 1 } });
  writeFileSync(file, JSON.stringify({ providers: { local: { type: 'demo' } }, aliases: { a: { provider: 'local', model: 'm' } }, dataDir, security: { requireFips: true } }));
  const serve = (...flags: string[]) => {
    const r = spawnSync(process.execPath, [MAIN, 'serve', '--config', file, '--port', '0', ...flags], {
      cwd: dir,
      env: { PATH: process.env['PATH'] ?? '', HOME: dir },
      encoding: 'utf8',
      timeout: 20_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const unavailable =
    'security.requireFips: is true, but OpenSSL runs without a FIPS provider (crypto.getFips() is 0): ' +
    'start node with --enable-fips and an OpenSSL configuration that loads a validated FIPS provider (docs/crypto.md), or set security.requireFips to false';
  assert.deepEqual(serve('--admin-port', '0'), {
    code: 1,
    stdout: '',
    stderr:
      `portcullis serve: invalid configuration: ${file}: 2 problems\n  ${unavailable}\n` +
      `  security.requireFips: refuses the admin password in ${path.join(dataDir, 'admin.json')}: it is a scrypt hash, and scrypt is not a FIPS 140-3 approved algorithm. ` +
      'Set it again with "portcullis admin set-password" (under security.requireFips it writes a pbkdf2-sha256 hash), or set security.requireFips to false\n',
  });
  assert.deepEqual(serve('--no-admin'), { code: 1, stdout: '', stderr: `portcullis serve: invalid configuration: ${file}: ${unavailable}\n` });
});
