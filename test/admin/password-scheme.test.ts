// security.passwordHash through the dashboard's door: the first password set
// after the bootstrap login is hashed with the configured scheme, and the
// password login verifies it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
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
