// admin.oidc in the config (src/config/oidc-config.ts): defaults, and every
// mistake reported under its path, all in one pass.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '../../src/config/config.ts';
import { embeddedConfigValue } from '../../src/config/config-loader.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { keepRestartOnly, restartOnlyChanges } from '../../src/gateway/restart-settings.ts';

const GOOD = {
  issuer: 'https://login.example.com/realms/main',
  clientId: 'portcullis',
  redirectUrl: 'https://gateway.example.com/sso/callback',
  allowedGroups: ['gateway-admins'],
};

function parse(admin: Record<string, unknown>) {
  return parseConfig({ ...(embeddedConfigValue() as Record<string, unknown>), admin }, null, '/tmp');
}

function issues(admin: Record<string, unknown>): string[] {
  try {
    parse(admin);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.issues.map((i) => `${i.path}: ${i.message}`);
  }
  assert.fail('the config was accepted');
}

describe('admin.oidc', () => {
  test('absent: null', () => {
    assert.equal(parse({}).admin.oidc, null);
  });

  test('defaults', () => {
    assert.deepEqual(parse({ allowedHosts: ['gateway.example.com'], oidc: GOOD }).admin.oidc, {
      ...GOOD,
      clientSecretFile: null,
      clientSecretEnv: null,
      scopes: ['openid', 'profile', 'email'],
      audiences: ['portcullis'],
      allowedUsers: [],
      groupsClaim: 'groups',
      label: 'Sign in with single sign-on',
      passwordLogin: true,
      timeoutMs: 10_000,
    });
  });

  test('a loopback redirect URL needs no allowedHosts; admin.host counts as answered', () => {
    assert.equal(parse({ oidc: { ...GOOD, redirectUrl: 'http://127.0.0.1:8081/sso/callback' } }).admin.oidc?.redirectUrl, 'http://127.0.0.1:8081/sso/callback');
    assert.equal(parse({ host: 'gateway.example.com', oidc: GOOD }).admin.oidc?.clientId, 'portcullis');
  });

  test('every mistake, each under its path', () => {
    assert.deepEqual(
      issues({
        oidc: {
          issuer: 'http://login.example.com',
          clientId: '',
          clientSecretFile: '/run/secret',
          clientSecretEnv: 'not a name',
          redirectUrl: 'https://gateway.example.com/sso/callback',
          scopes: ['profile', 'has space'],
          audiences: [],
          passwordLogin: 'no',
          timeoutMs: 5,
          lable: 'x',
        },
      }),
      [
        'admin.oidc.lable: unknown setting; did you mean \'label\'?',
        'admin.oidc.issuer: must be an https:// URL (http:// only for a provider on 127.0.0.1, localhost or [::1])',
        'admin.oidc.clientId: must be a non-empty string',
        'admin.oidc.clientSecretEnv: must be the NAME of an environment variable that holds the client secret',
        'admin.oidc.redirectUrl: names host gateway.example.com, which the admin listener does not answer for; add it to admin.allowedHosts (answered now: localhost, 127.0.0.1, [::1])',
        'admin.oidc.scopes[1]: must be a scope token (no spaces or quotes)',
        'admin.oidc.scopes: must include "openid" (without it the provider sends no ID token)',
        'admin.oidc.audiences: must name at least one audience (or leave it out: the client id)',
        'admin.oidc.allowedUsers: list who may sign in: allowedUsers (sub values, or email addresses the provider marks verified), allowedGroups (groups in the groupsClaim claim), or both; with neither, no one could sign in (admitting every account of the provider is not offered)',
        'admin.oidc.passwordLogin: must be true or false',
        'admin.oidc.timeoutMs: must be an integer from 500 to 60000',
      ],
    );
  });

  test('secret file and variable together; a redirect URL on another path or with a query; an issuer with a query', () => {
    assert.deepEqual(
      issues({
        allowedHosts: ['gateway.example.com'],
        oidc: { ...GOOD, issuer: 'https://login.example.com/?x=1', clientSecretFile: '/run/s', clientSecretEnv: 'S', redirectUrl: 'https://gateway.example.com/callback?x=1' },
      }),
      [
        'admin.oidc.issuer: must have no query, fragment or credentials',
        'admin.oidc.clientSecretFile: set clientSecretFile or clientSecretEnv, not both',
        'admin.oidc.redirectUrl: must end in /sso/callback, with no query, fragment or credentials',
      ],
    );
  });

  test('a client secret written into the config: named with where it goes instead, never quoted, and the other settings still checked', () => {
    const secret = 'GOCSPX-not-a-real-secret-0123456789';
    const found = issues({ allowedHosts: ['gateway.example.com'], oidc: { ...GOOD, clientSecret: secret, lable: 'x' } });
    assert.deepEqual(found, [
      'admin.oidc.clientSecret: the client secret itself is not accepted in the config: put it in a file and name the file in clientSecretFile, or in an environment variable and name the variable in clientSecretEnv',
      "admin.oidc.lable: unknown setting; did you mean 'label'?",
    ]);
    assert.ok(!found.join('\n').includes(secret));
  });

  test('allowedUsers and allowedGroups are kept exactly as written: no case folding, no normalisation', () => {
    const users = ['Kate@Example.COM', 'ops@xn--bcher-kva.example', '\u30e6\u30fc\u30b6\u30fc-1', 'e\u0301-sub', '\u212A-sub'];
    const groups = ['Gateway Admins', '/team/\u00e9quipe'];
    const oidc = parse({ allowedHosts: ['gateway.example.com'], oidc: { ...GOOD, allowedUsers: users, allowedGroups: groups } }).admin.oidc;
    assert.deepEqual(oidc?.allowedUsers, users);
    assert.deepEqual(oidc?.allowedGroups, groups);
  });

  test('an email entry outside ASCII, an invisible character, a space at an end or half an address: each named with the character and what to write', () => {
    const outsideAscii = (character: string) =>
      `is an email address with a character outside printable ASCII (${character}): email entries must be ASCII, the domain in its xn-- form (letter case is ignored in the domain for A-Z only; the local part is compared exactly); for an account whose address is not ASCII, list its sub value instead`;
    assert.deepEqual(
      issues({
        allowedHosts: ['gateway.example.com'],
        oidc: {
          ...GOOD,
          allowedUsers: ['\u212Aate@example.com', 'jos\u00e9@example.com', 'kate@b\u00fccher.example', 'kate\u200B@example.com', 'sub-\u202E1', 'kate @example.com', '@example.com', 'kate@', 'ok@example.com'],
          allowedGroups: ['admins\u200B', ' admins', 'admins\u00a0x', 'Gateway Admins'],
        },
      }),
      [
        `admin.oidc.allowedUsers[0]: ${outsideAscii('U+212A at character 1')}`,
        `admin.oidc.allowedUsers[1]: ${outsideAscii('U+00E9 at character 4')}`,
        `admin.oidc.allowedUsers[2]: ${outsideAscii('U+00FC at character 7')}`,
        'admin.oidc.allowedUsers[3]: holds an invisible, space or control character (U+200B at character 5); write the value without it',
        'admin.oidc.allowedUsers[4]: holds an invisible, space or control character (U+202E at character 5); write the value without it',
        `admin.oidc.allowedUsers[5]: ${outsideAscii('U+0020 at character 5')}`,
        'admin.oidc.allowedUsers[6]: is not an email address: it needs a local part before the "@" and a domain after it (or write a sub value, without "@")',
        'admin.oidc.allowedUsers[7]: is not an email address: it needs a local part before the "@" and a domain after it (or write a sub value, without "@")',
        'admin.oidc.allowedGroups[0]: holds an invisible, space or control character (U+200B at character 7); write the value without it',
        'admin.oidc.allowedGroups[1]: begins or ends with a space; write the value without it',
        'admin.oidc.allowedGroups[2]: holds an invisible, space or control character (U+00A0 at character 7); write the value without it',
      ],
    );
  });

  test('a reload applies admin.oidc (the rest of admin stays restart-only)', () => {
    const running = parse({});
    const next = parse({ port: 9999, oidc: { ...GOOD, redirectUrl: 'http://localhost:8081/sso/callback' } });
    assert.deepEqual(restartOnlyChanges(running, next), [{ setting: 'admin.port', running: 8081, configured: 9999 }]);
    const applied = keepRestartOnly(running, next);
    assert.equal(applied.admin.port, 8081);
    assert.equal(applied.admin.oidc?.clientId, 'portcullis');
    assert.equal(keepRestartOnly(next, running).admin.oidc, null);
  });
});
