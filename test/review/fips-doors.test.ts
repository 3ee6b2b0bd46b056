// Review of issue 34 (focus B): the doors through which security.requireFips is
// checked. crypto.getFips() is made to answer 1 the way Node.js documents for
// builtin modules (assign on the CommonJS object, then syncBuiltinESMExports),
// so the checks after the fips_unavailable one run on this FIPS-less Node.js.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { after, before, test } from 'node:test';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { adminFilePath, setAdminPassword } from '../../src/admin/admin-credentials.ts';
import { runAdminCommand } from '../../src/cli/admin-command.ts';
import { checkConfig, GatewayConfigError } from '../../src/library/check-config.ts';
import { createGateway } from '../../src/library/create-gateway.ts';
import { recordingAuditTrail } from '../admin/recording-audit-trail.ts';
import { sink } from '../support/collect.ts';
import { freshDir, tempDir } from '../support/temp-dir.ts';
import { quietLogger } from '../library/demo-config.ts';

const tmp = tempDir('review-fips-doors');
const FAST = { scrypt: { cost: 1024, blockSize: 8, parallelization: 1 }, pbkdf2: { iterations: 1000 } };
const PASSWORD = 'correct horse battery staple';
const realGetFips = crypto.getFips;

before(() => {
  crypto.getFips = () => 1;
  syncBuiltinESMExports();
});
after(() => {
  crypto.getFips = realGetFips;
  syncBuiltinESMExports();
});

function fipsConfig(dataDir: string, admin = false): Record<string, unknown> {
  return {
    providers: { local: { type: 'demo' } },
    aliases: { 'service-chat': { provider: 'local', model: 'm' } },
    dataDir,
    ...(admin ? { admin: { enabled: true, port: 0 } } : {}),
    security: { requireFips: true },
  };
}

test('precondition: getFips is seen as 1 by the config check', () => {
  const dir = freshDir(tmp);
  assert.deepEqual(checkConfig(fipsConfig(path.join(dir, 'data')), { baseDir: dir, env: {} }), []);
});

test('createGateway under requireFips with a scrypt admin.json rejects with a GatewayConfigError (docs/library.md: "problems reject with GatewayConfigError")', async () => {
  const dir = freshDir(tmp);
  const dataDir = path.join(dir, 'data');
  await setAdminPassword(dataDir, PASSWORD, undefined, { ...FAST, scheme: 'scrypt' });
  await assert.rejects(createGateway({ config: fipsConfig(dataDir), baseDir: dir, env: {}, logger: quietLogger() }), (err: unknown) => {
    assert.ok(err instanceof GatewayConfigError, `rejected with ${(err as Error).constructor.name}: ${(err as Error).message}`);
    return true;
  });
});

test('checkConfig and createGateway agree: a scrypt admin.json under requireFips is an issue checkConfig reports too', async () => {
  const dir = freshDir(tmp);
  const dataDir = path.join(dir, 'data');
  await setAdminPassword(dataDir, PASSWORD, undefined, { ...FAST, scheme: 'scrypt' });
  await assert.rejects(createGateway({ config: fipsConfig(dataDir), baseDir: dir, env: {}, logger: quietLogger() }));
  const issues = checkConfig(fipsConfig(dataDir), { baseDir: dir, env: {} });
  assert.notDeepEqual(issues, [], 'checkConfig says the config can run; createGateway refuses it');
});

test('under requireFips a password login never runs scrypt: a scrypt admin.json written after start is refused, not verified', async () => {
  const dir = freshDir(tmp);
  const dataDir = path.join(dir, 'data');
  await setAdminPassword(dataDir, PASSWORD, undefined, { ...FAST, scheme: 'pbkdf2-sha256' });
  const gateway = await createGateway({ config: fipsConfig(dataDir, true), baseDir: dir, env: {}, logger: quietLogger() });
  try {
    const address = await gateway.listen({ port: 0, host: '127.0.0.1' });
    // What `portcullis admin set-password` writes when its config does not say pbkdf2-sha256.
    await setAdminPassword(dataDir, PASSWORD, undefined, { ...FAST, scheme: 'scrypt' });
    assert.match(JSON.parse(readFileSync(adminFilePath(dataDir), 'utf8')).passwordHash, /^scrypt\$/);
    const res = await fetch(`${address.admin?.url}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: PASSWORD }) });
    const body = await res.text();
    assert.notEqual(res.status, 200, `the login verified a scrypt hash under requireFips: ${res.status} ${body}`);
  } finally {
    await gateway.close({ drainTimeoutMs: 0 });
  }
});

test('set-password does not downgrade a pbkdf2-sha256 admin.json to scrypt when the CLI config leaves security out', async () => {
  const dir = freshDir(tmp);
  const dataDir = path.join(dir, 'data');
  await setAdminPassword(dataDir, PASSWORD, undefined, { ...FAST, scheme: 'pbkdf2-sha256' });
  const stdin = new PassThrough();
  stdin.end(`${PASSWORD}2\n`);
  const stdout = sink();
  const stderr = sink();
  // main.ts passes config.security.passwordHash: "scrypt" for a config without a security section.
  const code = await runAdminCommand(['set-password'], {
    dataDir, stdin, stdout: stdout.stream, stderr: stderr.stream, passwordHash: 'scrypt', ...FAST, audit: recordingAuditTrail(),
  });
  assert.equal(code, 0, stderr.text());
  const stored = JSON.parse(readFileSync(adminFilePath(dataDir), 'utf8')).passwordHash as string;
  assert.match(stored, /^pbkdf2-sha256\$/, `the replaced PBKDF2 hash became ${stored.split('$')[0]}`);
});
