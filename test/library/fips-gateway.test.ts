// security.requireFips through createGateway as a host runs it, with OpenSSL's
// FIPS mode seen as on. createGateway takes no getFips (a host must not be able
// to talk it out of the check), and this machine's Node.js lines have no FIPS
// provider, so crypto.getFips is made to answer 1 the way Node.js documents for
// builtin modules: assigned on the CommonJS object, then syncBuiltinESMExports.
// Files of a bundle run one after another, so the patch is this file's alone.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import path from 'node:path';
import { syncBuiltinESMExports } from 'node:module';
import { after, before, test } from 'node:test';
import type { Logger } from '../../src/api/ports.ts';
import { adminFilePath, setAdminPassword } from '../../src/admin/admin-credentials.ts';
import { checkConfig, GatewayConfigError } from '../../src/library/check-config.ts';
import { createGateway } from '../../src/library/create-gateway.ts';
import { freshDir, tempDir } from '../support/temp-dir.ts';

const tmp = tempDir('fips-gateway');
const PASSWORD = 'correct horse battery staple';
const FAST = { scrypt: { cost: 1024, blockSize: 8, parallelization: 1 }, pbkdf2: { iterations: 1000 } };
const realGetFips = crypto.getFips;

before(() => {
  crypto.getFips = () => 1;
  syncBuiltinESMExports();
});
after(() => {
  crypto.getFips = realGetFips;
  syncBuiltinESMExports();
});

function fipsConfig(dataDir: string): Record<string, unknown> {
  return {
    providers: { local: { type: 'demo' } },
    aliases: { 'service-chat': { provider: 'local', model: 'm' } },
    dataDir,
    admin: { enabled: true, port: 0 },
    security: { requireFips: true },
  };
}

/** A host's logger that keeps what it is given. */
function keptLogger(): { logger: Logger; lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> } {
  const lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> = [];
  const keep = (level: string) => (msg: string, fields: Record<string, unknown> = {}) => void lines.push({ level, msg, fields });
  return { logger: { debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') }, lines };
}

const REFUSED_SCRYPT = (file: string) => ({
  code: 'conflict',
  path: 'security.requireFips',
  message:
    `refuses the admin password in ${file}: it is a scrypt hash, and scrypt is not a FIPS 140-3 approved algorithm. ` +
    'Set it again with "portcullis admin set-password" (under security.requireFips it writes a pbkdf2-sha256 hash), or set security.requireFips to false',
});

test('with getFips answering 1, checkConfig passes a requireFips config with no admin.json (the patch took)', () => {
  const dir = freshDir(tmp);
  assert.equal(crypto.getFips(), 1);
  assert.deepEqual(checkConfig(fipsConfig(path.join(dir, 'data')), { baseDir: dir, env: {} }), []);
});

test('a scrypt admin.json under requireFips: checkConfig lists it, createGateway rejects with a GatewayConfigError holding the same issue', async () => {
  const dir = freshDir(tmp);
  const dataDir = path.join(dir, 'data');
  await setAdminPassword(dataDir, PASSWORD, undefined, { ...FAST, scheme: 'scrypt' });
  const expected = [REFUSED_SCRYPT(adminFilePath(dataDir))];
  assert.deepEqual(checkConfig(fipsConfig(dataDir), { baseDir: dir, env: {} }), expected);
  await assert.rejects(createGateway({ config: fipsConfig(dataDir), baseDir: dir, env: {}, logger: keptLogger().logger }), (err: unknown) => {
    assert.ok(err instanceof GatewayConfigError);
    assert.deepEqual(err.issues, expected);
    return true;
  });
});

test('a gateway started with a PBKDF2 admin.json refuses the login once a scrypt one replaces it: 503 admin_password_not_approved, no hash run', async () => {
  const dir = freshDir(tmp);
  const dataDir = path.join(dir, 'data');
  await setAdminPassword(dataDir, PASSWORD, undefined, { ...FAST, scheme: 'pbkdf2-sha256' });
  const { logger, lines } = keptLogger();
  const gateway = await createGateway({ config: fipsConfig(dataDir), baseDir: dir, env: {}, logger });
  try {
    const address = await gateway.listen({ port: 0, host: '127.0.0.1' });
    const login = async () => {
      const res = await fetch(`${address.admin?.url}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: PASSWORD }) });
      return { status: res.status, code: ((await res.json()) as { error?: { code: string } }).error?.code ?? null };
    };
    assert.deepEqual(await login(), { status: 200, code: null });
    await setAdminPassword(dataDir, PASSWORD, undefined, { ...FAST, scheme: 'scrypt' });
    assert.deepEqual(await login(), { status: 503, code: 'admin_password_not_approved' });
    assert.deepEqual(
      lines.filter((line) => line.msg === 'admin password login refused').map((line) => [line.level, line.fields['problem']]),
      [['error', `security.requireFips ${REFUSED_SCRYPT(adminFilePath(dataDir)).message}`]],
    );
  } finally {
    await gateway.close({ drainTimeoutMs: 0 });
  }
});
