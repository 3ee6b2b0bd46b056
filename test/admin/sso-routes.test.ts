// The admin server's single sign-on routes (src/admin/sso-routes.ts) with a
// scripted provider behind the ProviderFetch port, for what the browser test
// against the real provider (test/browser/sso.system.test.ts) cannot do cheaply:
// floods of refused callbacks, clocks moved, the allow-lists changed by a reload.
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import { createAdminServer, type AdminServer } from '../../src/admin/admin-server.ts';
import { ssoActor } from '../../src/admin/sso-routes.ts';
import { createBootstrapToken } from '../../src/admin/bootstrap-token.ts';
import type { GatewayConfig } from '../../src/config/config.ts';
import { embeddedConfigValue } from '../../src/config/config-loader.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createSsoFlow } from '../../src/oidc/flow.ts';
import type { ProviderFetch } from '../../src/oidc/provider-fetch.ts';
import { openFileBackend, type FileBackend } from '../../src/state/file-backend.ts';
import { request, type RawResponse } from '../gateway/harness.ts';
import { recordingAuditTrail, type RecordingAuditTrail } from './recording-audit-trail.ts';
import { tempDir } from '../support/temp-dir.ts';

const ISSUER = 'https://login.example.com';
const T0 = Date.parse('2026-11-26T12:00:00.000Z');
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
let now = T0;
let dir: string;
let state: FileBackend;
let admin: AdminServer;
let base: string;
let audit: RecordingAuditTrail;
let config: GatewayConfig;
const logs: Record<string, unknown>[] = [];
/** The claims the scripted provider puts in the next ID token (besides iss, aud, exp, iat, nonce). */
let claims: Record<string, unknown> = { sub: 'user-1' };
let lastNonce = '';

function idToken(payload: Record<string, unknown>): string {
  const input = `${Buffer.from(JSON.stringify({ alg: 'ES256', kid: 'e' })).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key: ec.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

const fetch: ProviderFetch = async (url) => {
  if (url.endsWith('/.well-known/openid-configuration')) {
    return { status: 200, json: { issuer: ISSUER, authorization_endpoint: `${ISSUER}/authorize`, token_endpoint: `${ISSUER}/token`, jwks_uri: `${ISSUER}/jwks` } };
  }
  if (url.endsWith('/jwks')) return { status: 200, json: { keys: [{ ...ec.publicKey.export({ format: 'jwk' }), kid: 'e' }] } };
  return { status: 200, json: { token_type: 'Bearer', id_token: idToken({ iss: ISSUER, aud: 'portcullis', exp: now / 1000 + 300, iat: now / 1000, nonce: lastNonce, ...claims }) } };
};

function setOidc(over: Record<string, unknown>): void {
  const oidc = { issuer: ISSUER, clientId: 'portcullis', redirectUrl: 'http://127.0.0.1/sso/callback', allowedUsers: ['user-1'], ...over };
  config = parseConfig({ ...(embeddedConfigValue() as Record<string, unknown>), dataDir: path.join(dir, 'data'), admin: { oidc } }, null, dir);
}

before(async () => {
  dir = tempDir('sso-routes');
  setOidc({});
  state = openFileBackend(config.dataDir, { watch: false });
  audit = recordingAuditTrail();
  admin = createAdminServer({
    view: () => ({ config, targets: new Map() as never }),
    state,
    audit,
    clock: () => now,
    dataDir: config.dataDir,
    limits: config.limits,
    logger: createLogger({ level: 'info', write: (text) => text.split('\n').filter((l) => l !== '').forEach((l) => logs.push(JSON.parse(l) as Record<string, unknown>)) }),
    bootstrap: createBootstrapToken(),
    session: { ttlMs: 3_600_000, idleMs: 3_600_000, secureCookies: false },
    dashboardDir: dir,
    env: {},
    ssoFlow: createSsoFlow({ clock: () => now, fetch }),
  });
  await new Promise<void>((resolve) => admin.server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(admin.server.address() as AddressInfo).port}`;
});

beforeEach(() => {
  now += 3_600_000;
  audit.events.length = 0;
  logs.length = 0;
  claims = { sub: 'user-1' };
  setOidc({});
});

after(async () => {
  admin.server.closeAllConnections();
  await new Promise<void>((resolve) => admin.server.close(() => resolve()));
  await state.close();
});

function cookieOf(res: RawResponse, name: string): string {
  const cookies = (res.headers['set-cookie'] as string[] | undefined) ?? [];
  const found = cookies.map((c) => c.split(';')[0] as string).find((c) => c.startsWith(`${name}=`));
  assert.ok(found !== undefined, `no ${name} cookie in ${JSON.stringify(cookies)}`);
  return found;
}

/** A whole sign-in through the routes; the session cookie. */
async function signIn(): Promise<string> {
  const started = await request(base, 'GET', '/sso/start');
  assert.equal(started.status, 302, started.text);
  const location = new URL(started.headers['location'] as string);
  lastNonce = location.searchParams.get('nonce') ?? '';
  const callback = await request(base, 'GET', `/sso/callback?state=${location.searchParams.get('state')}&code=the-code`, { headers: { cookie: cookieOf(started, 'portcullis_sso') } });
  assert.equal(callback.headers['location'], '/', callback.text);
  return cookieOf(callback, 'portcullis_session');
}

test('refused callbacks anyone can send are one audit record per address, user and reason a minute; each is still logged', async () => {
  for (let i = 0; i < 5; i++) {
    const res = await request(base, 'GET', '/sso/callback?state=made-up&code=x');
    assert.equal(res.status, 302);
    assert.equal(res.headers['location'], '/?sso_error=sso_state_invalid');
  }
  assert.deepEqual(audit.events, [
    { actor: { kind: 'anonymous', id: '-' }, source: '127.0.0.1', action: 'admin.login_failed', target: 'admin', before: null, after: null, detail: { reason: 'state_unknown', issuer: ISSUER } },
  ]);
  const warnings = logs.filter((l) => l['msg'] === 'sso login refused');
  assert.deepEqual(
    warnings.map((l) => [l['reason'], l['auditRecord']]),
    [['state_unknown', undefined], ...Array.from({ length: 4 }, () => ['state_unknown', 'suppressed'])],
  );
  // Another reason is its own record; a minute later the same one is recorded again.
  await request(base, 'GET', '/sso/callback?code=x');
  now += 60_000;
  await request(base, 'GET', '/sso/callback?state=made-up&code=x');
  assert.deepEqual(audit.events.map((e) => (e.detail as { reason: string }).reason), ['state_unknown', 'state_missing', 'state_unknown']);
});

test('an SSO session ends when a reload changes who is admitted (allow-lists, groups claim, audiences), not on other changes', async () => {
  for (const change of [{ allowedUsers: ['user-2'] }, { allowedUsers: ['user-1'], allowedGroups: ['admins'] }, { groupsClaim: 'roles' }, { audiences: ['portcullis', 'other'] }]) {
    const cookie = await signIn();
    setOidc({ label: 'Another label', timeoutMs: 2000 });
    assert.equal((await request(base, 'GET', '/api/session', { headers: { cookie } })).status, 200, 'the label and timeout admit nobody new');
    setOidc(change);
    const res = await request(base, 'GET', '/api/session', { headers: { cookie } });
    assert.equal(res.status, 401, `${JSON.stringify(change)}: ${res.text}`);
    assert.equal((res.json() as { error: { code: string } }).error.code, 'session_required');
    setOidc({});
    assert.equal((await request(base, 'GET', '/api/session', { headers: { cookie } })).status, 401, 'ended for good');
  }
});

test('a client secret that cannot be read: the warning says why (the variable not set), the audit record keeps only the reason', async () => {
  setOidc({ clientSecretEnv: 'PORTCULLIS_TEST_OIDC_SECRET' });
  const started = await request(base, 'GET', '/sso/start');
  const location = new URL(started.headers['location'] as string);
  const callback = await request(base, 'GET', `/sso/callback?state=${location.searchParams.get('state')}&code=the-code`, { headers: { cookie: cookieOf(started, 'portcullis_sso') } });
  assert.equal(callback.headers['location'], '/?sso_error=sso_provider_error');
  const warnings = logs.filter((l) => l['msg'] === 'sso login refused');
  assert.deepEqual(
    warnings.map((l) => [l['reason'], l['problem']]),
    [['client_secret_unavailable', 'environment variable PORTCULLIS_TEST_OIDC_SECRET (admin.oidc.clientSecretEnv) is not set']],
  );
  assert.deepEqual(audit.events, [
    { actor: { kind: 'anonymous', id: '-' }, source: '127.0.0.1', action: 'admin.login_failed', target: 'admin', before: null, after: null, detail: { reason: 'client_secret_unavailable', issuer: ISSUER } },
  ]);
});

test('the signed-in OIDC user becomes the sso actor: subject as id, issuer, the name only when there is one', () => {
  assert.deepEqual(ssoActor({ subject: 'user-1', issuer: 'https://idp.example', name: 'ada' }), { kind: 'sso', id: 'user-1', issuer: 'https://idp.example', name: 'ada' });
  assert.deepEqual(ssoActor({ subject: 'user-2', issuer: 'https://idp.example' }), { kind: 'sso', id: 'user-2', issuer: 'https://idp.example' });
});
