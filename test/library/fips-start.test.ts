// security.requireFips at start, as far as it can be tested without a FIPS
// provider: this machine's Node.js lines (20, 22, 24, 26, official binaries)
// all answer crypto.getFips() with 0, so the real check always refuses here;
// the checks after it are run with an injected getFips that answers 1. The
// admin password check is a config issue beside it, so checkConfig and
// createGateway report it together on this Node.js too.
import assert from 'node:assert/strict';
import { getFips } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { adminFilePath, setAdminPassword } from '../../src/admin/admin-credentials.ts';
import { checkConfig, GatewayConfigError } from '../../src/library/check-config.ts';
import { checkGatewayConfig } from '../../src/library/config-check.ts';
import { createGateway } from '../../src/library/create-gateway.ts';
import { adminPasswordFipsIssues } from '../../src/library/fips-start.ts';
import { freshDir, tempDir } from '../support/temp-dir.ts';

const tmp = tempDir('fips-start');
const FAST = { scrypt: { cost: 1024, blockSize: 8, parallelization: 1 }, pbkdf2: { iterations: 1000 } };
const FIPS_ON = { requireFips: true, passwordHash: 'pbkdf2-sha256' } as const;
const FIPS_OFF = { requireFips: false, passwordHash: 'scrypt' } as const;
const UNAVAILABLE = {
  code: 'fips_unavailable',
  path: 'security.requireFips',
  message:
    'is true, but OpenSSL runs without a FIPS provider (crypto.getFips() is 0): start node with --enable-fips and an OpenSSL ' +
    'configuration that loads a validated FIPS provider (docs/crypto.md), or set security.requireFips to false',
};

function demo(security?: unknown, more: Record<string, unknown> = {}): Record<string, unknown> {
  return { providers: { local: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'local', model: 'm' } }, ...(security === undefined ? {} : { security }), ...more };
}

/** The issue for admin.json at `file` holding a hash requireFips refuses for `why`. */
function refused(file: string, why: string): { code: string; path: string; message: string } {
  return {
    code: 'conflict',
    path: 'security.requireFips',
    message:
      `refuses the admin password in ${file}: ${why}. Set it again with "portcullis admin set-password" ` +
      '(under security.requireFips it writes a pbkdf2-sha256 hash), or set security.requireFips to false',
  };
}
const SCRYPT_WHY = 'it is a scrypt hash, and scrypt is not a FIPS 140-3 approved algorithm';

test('precondition: this Node.js runs without a FIPS provider', () => {
  assert.equal(getFips(), 0, 'a FIPS-enabled Node.js: the tests below that expect fips_unavailable do not hold here');
});

test('checkConfig reports fips_unavailable for requireFips; nothing without it', () => {
  const dir = freshDir(tmp);
  assert.deepEqual(checkConfig(demo({ requireFips: true }), { baseDir: dir, env: {} }), [UNAVAILABLE]);
  assert.deepEqual(checkConfig(demo({ requireFips: false }), { baseDir: dir, env: {} }), []);
  assert.deepEqual(checkConfig(demo(), { baseDir: dir, env: {} }), []);
});

test('createGateway refuses requireFips with the same issue, before it opens anything', async () => {
  const dir = freshDir(tmp);
  await assert.rejects(createGateway({ config: demo({ requireFips: true }), baseDir: dir, env: {} }), (err: unknown) => {
    assert.ok(err instanceof GatewayConfigError);
    assert.deepEqual(err.issues, [UNAVAILABLE]);
    return true;
  });
});

test('with a FIPS provider (getFips answers 1) the config check passes, and names the getFips it was given', () => {
  const dir = freshDir(tmp);
  const input = { source: path.join(dir, 'c.json'), baseDir: dir, env: {}, providerTypes: [] };
  const on = checkGatewayConfig(demo({ requireFips: true }), { ...input, getFips: () => 1 });
  assert.equal(on.ok, true);
  assert.deepEqual(on.ok ? on.config.security : null, FIPS_ON);
  const off = checkGatewayConfig(demo({ requireFips: true }), { ...input, getFips: () => 0 });
  assert.deepEqual(off, { ok: false, issues: [UNAVAILABLE] });
});

test('with a FIPS provider (getFips answers 1) a scrypt admin.json is a conflict at security.requireFips naming the file and the fix; PBKDF2 and no password pass', async () => {
  const dir = freshDir(tmp);
  const dataDir = path.join(dir, 'data');
  const input = { source: path.join(dir, 'c.json'), baseDir: dir, env: {}, providerTypes: [], getFips: () => 1 };
  const config = demo({ requireFips: true }, { dataDir });
  assert.equal(checkGatewayConfig(config, input).ok, true, 'no admin.json yet');
  await setAdminPassword(dataDir, 'correct horse battery', undefined, { ...FAST, scheme: 'scrypt' });
  assert.deepEqual(checkGatewayConfig(config, input), { ok: false, issues: [refused(adminFilePath(dataDir), SCRYPT_WHY)] });
  // Without requireFips the same file serves as before.
  assert.equal(checkGatewayConfig(demo({ requireFips: false }, { dataDir }), input).ok, true);
  await setAdminPassword(dataDir, 'correct horse battery', undefined, { ...FAST, scheme: 'pbkdf2-sha256' });
  assert.equal(checkGatewayConfig(config, input).ok, true);
});

test('with the admin listener off (admin.enabled false, as serve --no-admin makes it) the stored password is not checked: nothing uses it', async () => {
  const dir = freshDir(tmp);
  const dataDir = path.join(dir, 'data');
  await setAdminPassword(dataDir, 'correct horse battery', undefined, { ...FAST, scheme: 'scrypt' });
  const input = { source: path.join(dir, 'c.json'), baseDir: dir, env: {}, providerTypes: [], getFips: () => 1 };
  assert.equal(checkGatewayConfig(demo({ requireFips: true }, { dataDir, admin: { enabled: false } }), input).ok, true);
  assert.equal(checkGatewayConfig(demo({ requireFips: true }, { dataDir, admin: { enabled: true } }), input).ok, false);
});

test('checkConfig and createGateway agree: both list fips_unavailable and the scrypt admin.json, createGateway as a GatewayConfigError', async () => {
  const dir = freshDir(tmp);
  const dataDir = path.join(dir, 'data');
  await setAdminPassword(dataDir, 'correct horse battery', undefined, { ...FAST, scheme: 'scrypt' });
  const config = demo({ requireFips: true }, { dataDir });
  const expected = [UNAVAILABLE, refused(adminFilePath(dataDir), SCRYPT_WHY)];
  assert.deepEqual(checkConfig(config, { baseDir: dir, env: {} }), expected);
  await assert.rejects(createGateway({ config, baseDir: dir, env: {} }), (err: unknown) => {
    assert.ok(err instanceof GatewayConfigError);
    assert.deepEqual(err.issues, expected);
    assert.equal(err.message, `gateway config: 2 problems\n  security.requireFips: ${UNAVAILABLE.message}\n  security.requireFips: ${expected[1]?.message}`);
    return true;
  });
});

test('a PBKDF2 hash with a salt shorter than SP 800-132 asks is refused under requireFips; an unreadable admin.json is left to the login', () => {
  const dir = freshDir(tmp);
  const admin = { enabled: true };
  const short = `pbkdf2-sha256$80000$${Buffer.from('NaClNaCl').toString('base64url')}$${Buffer.alloc(32, 7).toString('base64url')}`;
  writeFileSync(adminFilePath(dir), JSON.stringify({ version: 1, passwordHash: short, updatedAt: '2026-11-29T06:00:00.000Z' }));
  assert.deepEqual(adminPasswordFipsIssues({ security: FIPS_ON, admin, dataDir: dir }), [
    refused(adminFilePath(dir), 'its salt has 8 bytes, and NIST SP 800-132 asks for at least 16'),
  ]);
  assert.deepEqual(adminPasswordFipsIssues({ security: FIPS_OFF, admin, dataDir: dir }), []);
  writeFileSync(adminFilePath(dir), '{ not json');
  assert.deepEqual(adminPasswordFipsIssues({ security: FIPS_ON, admin, dataDir: dir }), []);
});
