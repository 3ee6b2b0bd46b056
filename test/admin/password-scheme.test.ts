// security.passwordHash through the dashboard's door: the first password set
// after the bootstrap login is hashed with the configured scheme, and the
// password login verifies it; under security.requireFips the login verifies
// only a hash it approves.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { setAdminPassword } from '../../src/admin/admin-credentials.ts';
import { startAdminGateway } from './harness.ts';

const PASSWORD = 'correct horse battery staple';

test('with security.passwordHash "pbkdf2-sha256" the dashboard writes a PBKDF2 hash (600,000 iterations) and logs in with it', async () => {
  const gateway = await startAdminGateway({ config: { security: { passwordHash: 'pbkdf2-sha256' } } });
  try {
    await gateway.signInSettingPassword(PASSWORD);
    const file = JSON.parse(readFileSync(path.join(gateway.dataDir, 'admin.json'), 'utf8')) as { passwordHash: string };
    assert.match(file.passwordHash, /^pbkdf2-sha256\$600000\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    const login = (password: string) =>
      fetch(`${gateway.adminUrl}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password }) });
    const right = await login(PASSWORD);
    assert.equal(right.status, 200);
    await right.arrayBuffer();
    const wrong = await login(`${PASSWORD}!`);
    assert.equal(wrong.status, 401);
    await wrong.arrayBuffer();
  } finally {
    await gateway.close();
  }
});

test('under security.requireFips a login against a scrypt admin.json written after start runs no hash: 503 admin_password_not_approved for any password, logged with the file', async () => {
  const gateway = await startAdminGateway({ config: { security: { requireFips: true } } });
  try {
    await gateway.signInSettingPassword(PASSWORD);
    const login = async (password: string) => {
      const res = await fetch(`${gateway.adminUrl}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password }) });
      return { status: res.status, body: (await res.json()) as unknown };
    };
    assert.equal((await login(PASSWORD)).status, 200, 'the PBKDF2 hash the dashboard wrote under requireFips verifies');
    // What a set-password run from a config without requireFips, or a hand-made file, puts there.
    await setAdminPassword(gateway.dataDir, PASSWORD, undefined, { scheme: 'scrypt', scrypt: { cost: 1024, blockSize: 8, parallelization: 1 } });
    const refused = {
      status: 503,
      body: {
        error: {
          message: 'The stored admin password uses a hash security.requireFips refuses; set it again with `portcullis admin set-password` on the server. The gateway log names the file.',
          type: 'server_error',
          param: null,
          code: 'admin_password_not_approved',
        },
      },
    };
    // The right and a wrong password get the same answer: neither is checked.
    assert.deepEqual(await login(PASSWORD), refused);
    assert.deepEqual(await login(`${PASSWORD}!`), refused);
    const file = path.join(gateway.dataDir, 'admin.json');
    const lines = gateway.logs.filter((line) => line['msg'] === 'admin password login refused');
    assert.equal(lines.length, 2);
    assert.deepEqual(
      { level: lines[0]?.['level'], client: lines[0]?.['client'], problem: lines[0]?.['problem'] },
      {
        level: 'error',
        client: '127.0.0.1',
        problem:
          `security.requireFips refuses the admin password in ${file}: it is a scrypt hash, and scrypt is not a FIPS 140-3 approved algorithm. ` +
          'Set it again with "portcullis admin set-password" (under security.requireFips it writes a pbkdf2-sha256 hash), or set security.requireFips to false',
      },
    );
    assert.equal(JSON.stringify(gateway.logs).includes(PASSWORD), false, 'the password is never logged');
    // Set again as PBKDF2, the same password logs in.
    await setAdminPassword(gateway.dataDir, PASSWORD, undefined, { scheme: 'pbkdf2-sha256', pbkdf2: { iterations: 1000 } });
    assert.equal((await login(PASSWORD)).status, 200);
  } finally {
    await gateway.close();
  }
});
