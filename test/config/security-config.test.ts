import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/config.ts';
import { embeddedConfigValue } from '../../src/config/config-loader.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { DEFAULT_SECURITY, fipsIssues } from '../../src/config/security-config.ts';
import { keepRestartOnly, restartOnlyChanges } from '../../src/gateway/restart-settings.ts';

const base = embeddedConfigValue() as Record<string, unknown>;
const parse = (security: unknown) => parseConfig({ ...base, security }, '/etc/portcullis.json', '/tmp');

function fails(security: unknown, issues: string[]): void {
  assert.throws(
    () => parse(security),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.deepEqual(err.issues.map((i) => `${i.code} ${i.path}: ${i.message}`), issues);
      return true;
    },
  );
}

test('security: off by default, scrypt for new passwords', () => {
  assert.deepEqual(DEFAULT_SECURITY, { requireFips: false, passwordHash: 'scrypt' });
  assert.deepEqual(parseConfig(base, null, '/tmp').security, DEFAULT_SECURITY);
  assert.deepEqual(parse({}).security, DEFAULT_SECURITY);
  assert.deepEqual(parse({ passwordHash: 'pbkdf2-sha256' }).security, { requireFips: false, passwordHash: 'pbkdf2-sha256' });
});

test('security.requireFips makes pbkdf2-sha256 the default and refuses scrypt', () => {
  assert.deepEqual(parse({ requireFips: true }).security, { requireFips: true, passwordHash: 'pbkdf2-sha256' });
  assert.deepEqual(parse({ requireFips: true, passwordHash: 'pbkdf2-sha256' }).security, { requireFips: true, passwordHash: 'pbkdf2-sha256' });
  fails({ requireFips: true, passwordHash: 'scrypt' }, [
    'conflict security.passwordHash: scrypt is not a FIPS 140-3 approved algorithm: set "pbkdf2-sha256" (or leave it out) while security.requireFips is true',
  ]);
});

test('security: each wrong value names its path and what to write', () => {
  fails([], ['not_object security: must be an object']);
  fails({ requireFIPS: true }, ["unknown_setting security.requireFIPS: unknown setting; did you mean 'requireFips'?"]);
  fails({ requireFips: 'yes' }, ['not_boolean security.requireFips: must be true or false']);
  fails({ passwordHash: 'bcrypt' }, ['not_one_of security.passwordHash: must be "scrypt" or "pbkdf2-sha256"']);
});

test('fipsIssues: fips_unavailable under requireFips unless getFips() is 1; nothing without requireFips, and getFips is then not asked', () => {
  let asked = 0;
  const getFips = (value: number) => () => (asked++, value);
  assert.deepEqual(fipsIssues({ requireFips: false, passwordHash: 'scrypt' }, getFips(0)), []);
  assert.equal(asked, 0);
  assert.deepEqual(fipsIssues({ requireFips: true, passwordHash: 'pbkdf2-sha256' }, getFips(1)), []);
  assert.deepEqual(fipsIssues({ requireFips: true, passwordHash: 'pbkdf2-sha256' }, getFips(0)), [
    {
      code: 'fips_unavailable',
      path: 'security.requireFips',
      message:
        'is true, but OpenSSL runs without a FIPS provider (crypto.getFips() is 0): start node with --enable-fips and an OpenSSL ' +
        'configuration that loads a validated FIPS provider (docs/crypto.md), or set security.requireFips to false',
    },
  ]);
});

test('security needs a restart: a reload names each change and keeps the running values', () => {
  const running = parse({ requireFips: false });
  const next = parse({ requireFips: true });
  assert.deepEqual(restartOnlyChanges(running, next), [
    { setting: 'security.requireFips', running: false, configured: true },
    { setting: 'security.passwordHash', running: 'scrypt', configured: 'pbkdf2-sha256' },
  ]);
  assert.deepEqual(keepRestartOnly(running, next).security, { requireFips: false, passwordHash: 'scrypt' });
});
