// Admin API tokens through the real admin server on 127.0.0.1 port 0, with a
// real data directory and the recording audit trail: creating them with a
// session, using them as Bearer on the admin API (scopes, expiry, revocation
// by the CLI while the server runs, the throttle), and what is recorded.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import { setAdminPassword } from '../../src/admin/admin-credentials.ts';
import { createAdminServer, type AdminServer } from '../../src/admin/admin-server.ts';
import { createBootstrapToken } from '../../src/admin/bootstrap-token.ts';
import { createLoginThrottle, type LoginThrottle } from '../../src/admin/login-throttle.ts';
import { runAdminTokensCommand } from '../../src/cli/admin-tokens-command.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createDemoProvider } from '../../src/providers/demo.ts';
import { createAliasTargets } from '../../src/routing/alias-targets.ts';
import { openFileAdminTokenStore } from '../../src/state/file-admin-token-store.ts';
import { openFileBackend, type FileBackend } from '../../src/state/file-backend.ts';
import { sink } from '../support/collect.ts';
import { request, type RawResponse } from '../gateway/harness.ts';
import { recordingAuditTrail, type RecordingAuditTrail } from './recording-audit-trail.ts';
import { tempDir } from '../support/temp-dir.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';

const PASSWORD = 'correct horse battery staple';
const T0 = Date.parse('2026-11-26T12:00:00.000Z');
const DAY = 86_400_000;
let now = T0;
/** The throttles' time, an hour on per test: each test starts with no failures counted. */
const throttleTime = new ManualScheduler();
let dir: string;
let dataDir: string;
let state: FileBackend;
let admin: AdminServer;
let base: string;
let audit: RecordingAuditTrail;
const logs: string[] = [];
/** Every audit event of the file, as JSON. */
const everything: string[] = [];
let session: { cookie: string; csrf: string };
/** Every token handed out in this file, to check none is ever stored, logged or recorded. */
const issuedTokens: string[] = [];

before(async () => {
  dir = tempDir('admin-tokens');
  const config = parseConfig(
    { dataDir: path.join(dir, 'data'), providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo' } } },
    null,
    dir,
  );
  dataDir = config.dataDir;
  const routes = createAliasTargets(config, new Map([['demo', { provider: createDemoProvider(), maxTokensParam: 'max_tokens' as const, policy: null }]]));
  state = openFileBackend(dataDir, { watch: false });
  await setAdminPassword(dataDir, PASSWORD, () => new Date(T0 - DAY), { scrypt: { cost: 1024, blockSize: 8, parallelization: 1 } });
  audit = recordingAuditTrail();
  admin = createAdminServer({
    view: () => ({ config, targets: routes }),
    state,
    audit: {
      async record(event) {
        everything.push(JSON.stringify(event));
        await audit.record(event);
      },
      begin(event) {
        everything.push(JSON.stringify(event));
        return audit.begin(event);
      },
    },
    clock: () => now,
    dataDir,
    limits: config.limits,
    logger: createLogger({ level: 'debug', write: (line) => logs.push(line) }),
    bootstrap: createBootstrapToken(),
    session: { ttlMs: 400 * DAY, idleMs: 400 * DAY, secureCookies: false },
    dashboardDir: dir,
    scheduler: throttleTime,
    // Three unknown tokens from one address use up its budget (admin-token-throttle.test.ts has the default's).
    tokenThrottle: recordingThrottle(createLoginThrottle({ maxFailures: 3, maxGlobalFailures: null, scheduler: throttleTime })),
  });
  await new Promise<void>((resolve) => admin.server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(admin.server.address() as AddressInfo).port}`;
  const res = await request(base, 'POST', '/api/login', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: PASSWORD }) });
  assert.equal(res.status, 200, res.text);
  session = { cookie: ((res.headers['set-cookie'] as string[])[0] as string).split(';')[0] as string, csrf: (res.json() as { csrfToken: string }).csrfToken };
});

beforeEach(async () => {
  now = T0;
  await throttleTime.advance(3_600_000);
  audit.events.length = 0;
});

after(async () => {
  admin.server.closeAllConnections();
  await new Promise<void>((resolve) => admin.server.close(() => resolve()));
  await state.close();
});

function withSession(method: string, urlPath: string, body?: unknown): Promise<RawResponse> {
  const headers: Record<string, string> = { cookie: session.cookie };
  if (method !== 'GET') headers['x-csrf-token'] = session.csrf;
  if (body !== undefined) headers['content-type'] = 'application/json';
  return request(base, method, urlPath, { headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

function withToken(token: string, method: string, urlPath: string, body?: unknown, extra: Record<string, string> = {}): Promise<RawResponse> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...extra };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return request(base, method, urlPath, { headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

/** Every failure() the unknown-token throttle was told of: the client. */
const throttleFailures: string[] = [];

function recordingThrottle(inner: LoginThrottle): LoginThrottle {
  return {
    check: (client) => inner.check(client),
    success: (client) => inner.success(client),
    failure(client) {
      throttleFailures.push(client);
      inner.failure(client);
    },
    settings: inner.settings,
    get trackedClients() {
      return inner.trackedClients;
    },
  };
}

/** The access log lines written so far, parsed. */
function accessLines(): Record<string, unknown>[] {
  return logs
    .flatMap((text) => text.split('\n'))
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line['msg'] === 'request');
}

function errorOf(res: RawResponse): unknown {
  return { status: res.status, ...(res.json() as { error: object }).error };
}

interface Created {
  token: string;
  record: { id: string; name: string; prefix: string; scopes: string[]; createdAt: string; expiresAt: string; revokedAt: null; status: string; createdBy: string };
}

async function createToken(name: string, scopes: string[], days = 30): Promise<Created> {
  const res = await withSession('POST', '/api/tokens', { name, scopes, expiresAt: new Date(T0 + days * DAY).toISOString() });
  assert.equal(res.status, 201, res.text);
  const created = res.json() as Created;
  issuedTokens.push(created.token);
  audit.events.length = 0;
  return created;
}

const SOURCE = '127.0.0.1';

test('a session creates, lists and revokes tokens; each change is one audit record with the session actor', async () => {
  const res = await withSession('POST', '/api/tokens', { name: 'ci', scopes: ['keys'], expiresAt: '2026-12-26T12:00:00Z' });
  assert.equal(res.status, 201, res.text);
  assert.equal(res.headers['cache-control'], 'no-store');
  const { token, record } = res.json() as Created;
  issuedTokens.push(token);
  assert.match(token, /^pca_[A-Za-z0-9_-]{43}$/);
  const view = {
    id: record.id,
    name: 'ci',
    prefix: token.slice(0, 8),
    scopes: ['keys'],
    createdAt: '2026-11-26T12:00:00.000Z',
    expiresAt: '2026-12-26T12:00:00.000Z',
    revokedAt: null,
    status: 'active',
    createdBy: 'password:admin',
  };
  assert.deepEqual(record, view);
  const fields = { id: record.id, name: 'ci', prefix: view.prefix, scopes: ['keys'], expiresAt: view.expiresAt, revokedAt: null };
  assert.deepEqual(audit.events, [{ actor: { kind: 'password', id: 'admin' }, source: SOURCE, action: 'token.create', target: record.id, before: null, after: fields }]);

  const listed = (await withSession('GET', '/api/tokens')).json() as { object: string; data: unknown[] };
  assert.equal(listed.object, 'list');
  assert.deepEqual(listed.data.at(-1), view);

  audit.events.length = 0;
  now = T0 + 1000;
  const revoked = await withSession('POST', `/api/tokens/${record.id}/revoke`);
  assert.equal(revoked.status, 200, revoked.text);
  assert.deepEqual(revoked.json(), { ...view, revokedAt: '2026-11-26T12:00:01.000Z', status: 'revoked' });
  assert.deepEqual(audit.events, [
    { actor: { kind: 'password', id: 'admin' }, source: SOURCE, action: 'token.revoke', target: record.id, before: fields, after: { ...fields, revokedAt: '2026-11-26T12:00:01.000Z' } },
  ]);
  assert.deepEqual(errorOf(await withSession('POST', `/api/tokens/${record.id}/revoke`)), {
    status: 409,
    message: `Admin API token '${record.id}' was already revoked at 2026-11-26T12:00:01.000Z.`,
    type: 'invalid_request_error',
    param: null,
    code: 'admin_token_already_revoked',
  });
  assert.equal((errorOf(await withSession('POST', '/api/tokens/tok_0000000000000000/revoke')) as { code: string }).code, 'admin_token_not_found');
  assert.equal(audit.events.length, 1, 'refused revokes record nothing');
});

test('create requests are checked: every field required, unknown fields refused, bad values named', async () => {
  const cases: Array<[unknown, { status: number; code: string; param: string | null }]> = [
    [{ name: 'x', scopes: ['read'] }, { status: 400, code: 'missing_required_parameter', param: 'expiresAt' }],
    [{ name: 'x', scopes: ['read'], expiresAt: '2026-12-01T00:00:00Z', token: 'pca_mine' }, { status: 400, code: 'unknown_parameter', param: 'token' }],
    [{ name: 'x', scopes: ['admin'], expiresAt: '2026-12-01T00:00:00Z' }, { status: 400, code: 'invalid_token_setting', param: 'scopes[0]' }],
    [{ name: 'x', scopes: [], expiresAt: '2026-12-01T00:00:00Z' }, { status: 400, code: 'invalid_token_setting', param: 'scopes' }],
    [{ name: 'x', scopes: ['read'], expiresAt: '2028-01-01T00:00:00Z' }, { status: 400, code: 'invalid_token_setting', param: 'expiresAt' }],
    [{ name: 'x', scopes: ['read'], expiresAt: '2026-11-01T00:00:00Z' }, { status: 400, code: 'invalid_token_setting', param: 'expiresAt' }],
    [{ name: '', scopes: ['read'], expiresAt: '2026-12-01T00:00:00Z' }, { status: 400, code: 'invalid_token_setting', param: 'name' }],
    [['x'], { status: 400, code: 'invalid_type', param: null }],
  ];
  for (const [body, expected] of cases) {
    const res = await withSession('POST', '/api/tokens', body);
    const e = errorOf(res) as { status: number; code: string; param: string | null };
    assert.deepEqual({ status: e.status, code: e.code, param: e.param }, expected, JSON.stringify(body));
  }
  assert.equal((errorOf(await withSession('POST', '/api/tokens', { name: 'x', scopes: ['keys', 'nope'], expiresAt: '2026-12-01T00:00:00Z' })) as { message: string }).message, 'Invalid scopes[1]: must be one of "read", "keys".');
  // A session still needs its CSRF token for token management.
  const noCsrf = await request(base, 'POST', '/api/tokens', { headers: { cookie: session.cookie, 'content-type': 'application/json' }, body: '{}' });
  assert.equal((errorOf(noCsrf) as { code: string }).code, 'csrf_token_invalid');
  assert.deepEqual(audit.events, []);
});

test('a read token reads keys and aliases (counted: one token.use per route at the minute\'s end) and is refused key changes with 403 token_scope_insufficient', async () => {
  const { token, record } = await createToken('reader', ['read']);
  const actor = { kind: 'token', id: record.id, name: 'reader' };
  // beforeEach leaves the scheduler on a minute's start.
  const minuteStart = new Date(throttleTime.now()).toISOString();
  const keys = await withToken(token, 'GET', '/api/keys?x=1');
  assert.equal(keys.status, 200, keys.text);
  assert.equal((keys.json() as { object: string }).object, 'list');
  assert.equal((await withToken(token, 'GET', '/api/aliases')).status, 200);
  await throttleTime.advance(30_000);
  assert.equal((await withToken(token, 'GET', '/api/keys')).status, 200);
  assert.equal((await withToken(token, 'GET', '/api/keys/key_nope')).status, 404);
  await throttleTime.advance(29_999);
  assert.deepEqual(audit.events, [], 'counted, not recorded, until the minute ends');
  await throttleTime.advance(1);
  const halfway = new Date(throttleTime.now() - 30_000).toISOString();
  assert.deepEqual(audit.events, [
    { actor, source: SOURCE, action: 'token.use', target: record.id, before: null, after: null, detail: { method: 'GET', route: '/api/keys', count: 2, statuses: { 200: 2 }, first: minuteStart, last: halfway } },
    { actor, source: SOURCE, action: 'token.use', target: record.id, before: null, after: null, detail: { method: 'GET', route: '/api/aliases', count: 1, statuses: { 200: 1 }, first: minuteStart, last: minuteStart } },
    { actor, source: SOURCE, action: 'token.use', target: record.id, before: null, after: null, detail: { method: 'GET', route: '/api/keys/:id', count: 1, statuses: { 404: 1 }, first: halfway, last: halfway } },
  ]);
  audit.events.length = 0;

  const refused = await withToken(token, 'POST', '/api/keys', { name: 'nope' });
  assert.deepEqual(errorOf(refused), {
    status: 403,
    message: "This route needs the 'keys' scope; the token has 'read'.",
    type: 'permission_error',
    param: null,
    code: 'token_scope_insufficient',
  });
  assert.equal(refused.headers['www-authenticate'], 'Bearer realm="portcullis-admin", error="insufficient_scope", scope="keys"');
  assert.deepEqual(audit.events, [{ actor, source: SOURCE, action: 'token.refused', target: record.id, before: null, after: null, detail: { reason: 'token_scope_insufficient' } }]);
  assert.equal((await state.keys.list()).some((k) => k.name === 'nope'), false);
});

test('a keys token creates, rotates and revokes keys without cookie or CSRF; a key change that succeeded records no token.use', async () => {
  const { token, record } = await createToken('deployer', ['keys']);
  const actor = { kind: 'token', id: record.id, name: 'deployer' };
  // A foreign Origin does not matter: no cookie is involved.
  const created = await withToken(token, 'POST', '/api/keys', { name: 'from-ci' }, { origin: 'https://elsewhere.example' });
  assert.equal(created.status, 201, created.text);
  const keyId = (created.json() as { record: { id: string } }).record.id;
  assert.equal((await withToken(token, 'POST', `/api/keys/${keyId}/rotate`)).status, 200);
  assert.equal((await withToken(token, 'PATCH', `/api/keys/${keyId}`, { name: 'renamed' })).status, 200);
  assert.equal((await withToken(token, 'POST', `/api/keys/${keyId}/revoke`)).status, 200);
  assert.equal((await state.keys.get(keyId)).revokedAt !== null, true);
  // Part B's key.* records (actor kind 'token') are these requests' use records: no token.use here.
  assert.deepEqual(audit.events.filter((e) => e.action.startsWith('token.')), []);
  assert.deepEqual(audit.events.filter((e) => e.action.startsWith('key.')).map((e) => e.actor), audit.events.filter((e) => e.action.startsWith('key.')).map(() => actor));

  // A key change that failed is its own token.use at once, with its path, between the reads
  // (counted for the minute); flush() appends the count now, as close() does at shutdown.
  const at = new Date(throttleTime.now()).toISOString();
  assert.equal((await withToken(token, 'GET', `/api/keys/${keyId}`)).status, 200);
  const failed = await withToken(token, 'POST', `/api/keys/${keyId}/rotate`);
  assert.equal(failed.status, 409);
  assert.equal((await withToken(token, 'GET', `/api/keys/${keyId}`)).status, 200);
  const rotateUse = { actor, source: SOURCE, action: 'token.use', target: record.id, before: null, after: null, detail: { method: 'POST', path: `/api/keys/${keyId}/rotate`, status: 409 } };
  assert.deepEqual(audit.events.filter((e) => e.action.startsWith('token.')), [rotateUse]);
  assert.equal(admin.tokenUses.pending, 1);
  await admin.tokenUses.flush();
  assert.deepEqual(
    audit.events.filter((e) => e.action.startsWith('token.')),
    [rotateUse, { actor, source: SOURCE, action: 'token.use', target: record.id, before: null, after: null, detail: { method: 'GET', route: '/api/keys/:id', count: 2, statuses: { 200: 2 }, first: at, last: at } }],
  );
});

test('a token cannot manage tokens: 403 session_required_for_route, even with a session cookie beside it (the bearer wins)', async () => {
  const { token, record } = await createToken('both', ['read', 'keys']);
  for (const [method, urlPath] of [['GET', '/api/tokens'], ['POST', '/api/tokens'], ['POST', `/api/tokens/${record.id}/revoke`]] as const) {
    const res = await withToken(token, method, urlPath, method === 'POST' ? { name: 'x', scopes: ['keys'], expiresAt: '2026-12-01T00:00:00Z' } : undefined, { cookie: session.cookie, 'x-csrf-token': session.csrf });
    assert.deepEqual(errorOf(res), {
      status: 403,
      message: 'This route needs a dashboard session; an admin API token cannot manage tokens.',
      type: 'permission_error',
      param: null,
      code: 'session_required_for_route',
    });
  }
  // One record for the same token, address and reason per minute; the access log has all three.
  assert.deepEqual(
    audit.events.map((e) => [e.action, e.actor.id, e.detail]),
    [['token.refused', record.id, { reason: 'session_required_for_route' }]],
  );
  const lines = accessLines().filter((l) => l['adminTokenId'] === record.id && l['adminToken'] === 'session_required_for_route');
  assert.deepEqual(
    lines.map((l) => [l['status'], l['client'], l['auditRecord']]),
    [[403, SOURCE, undefined], [403, SOURCE, 'suppressed'], [403, SOURCE, 'suppressed']],
  );
  assert.equal((await withSession('GET', '/api/tokens')).status, 200, 'the session alone still may');
  // Another scheme (a proxy's Basic auth) leaves the session in charge.
  assert.equal((await request(base, 'GET', '/api/tokens', { headers: { cookie: session.cookie, authorization: 'Basic dXNlcjpwYXNz' } })).status, 200);
});

test('a token reaches nothing beyond its targets: not the password, session or logout routes, nor through HEAD, OPTIONS or path tricks', async () => {
  const { token, record } = await createToken('probe', ['read', 'keys']);
  // The session routes ignore the header: without a cookie they are a session's refusal.
  const password = await withToken(token, 'POST', '/api/password', { password: 'a new password of the attacker' });
  assert.equal((errorOf(password) as { code: string }).code, 'session_required');
  assert.equal((errorOf(await withToken(token, 'GET', '/api/session')) as { code: string }).code, 'session_required');
  assert.equal((await withToken(token, 'POST', '/api/logout')).status, 204, 'a logout without a session ends nothing');
  // HEAD of a read route is the read route (needs read); OPTIONS is no route.
  assert.equal((await withToken(token, 'HEAD', '/api/keys')).status, 200);
  assert.equal((await withToken(token, 'OPTIONS', '/api/tokens')).status, 405);
  assert.equal((await withToken(token, 'HEAD', '/api/tokens')).status, 403, 'HEAD of a session route is refused like GET');
  // Other spellings of the token routes are no routes at all.
  for (const tricky of ['/api/tokens/', '//api/tokens', '/api//tokens', '/api/%74okens', '/API/tokens', `/api/tokens/${record.id}/revoke/`, '/api/tokens?x=/api/keys']) {
    const res = await withToken(token, tricky.includes('revoke') ? 'POST' : 'GET', tricky);
    assert.ok(res.status === 404 || res.status === 403, `${tricky}: ${res.status}`);
  }
  assert.equal((await withSession('GET', '/api/tokens')).status, 200);
  assert.equal((await state.tokens.list()).find((r) => r.id === record.id)?.revokedAt, null, 'nothing revoked');
});

test('expired (clock pinned past expiry) 401 admin_token_expired; revoked by the CLI while the server runs 401 admin_token_revoked at once', async () => {
  const { token, record } = await createToken('short', ['read'], 1);
  assert.equal((await withToken(token, 'GET', '/api/keys')).status, 200);
  now = Date.parse(record.expiresAt);
  const expired = await withToken(token, 'GET', '/api/keys');
  assert.deepEqual(errorOf(expired), { status: 401, message: 'The admin API token has expired; create a new one (portcullis admin tokens create, or Tokens in the dashboard).', type: 'authentication_error', param: null, code: 'admin_token_expired' });
  assert.equal(expired.headers['www-authenticate'], 'Bearer realm="portcullis-admin", error="invalid_token"');
  assert.deepEqual(audit.events.at(-1), { actor: { kind: 'token', id: record.id, name: 'short' }, source: SOURCE, action: 'token.refused', target: record.id, before: null, after: null, detail: { reason: 'admin_token_expired' } });

  now = T0;
  const second = await createToken('revoke-me', ['keys']);
  assert.equal((await withToken(second.token, 'GET', '/api/keys')).status, 200);
  const cliAudit = recordingAuditTrail();
  const out = sink();
  const code = await runAdminTokensCommand(['revoke', second.record.id], {
    stdout: out.stream,
    stderr: sink().stream,
    clock: () => T0 + 5,
    actor: { kind: 'cli', id: 'ops', uid: 1000, name: 'ops' },
    open: async () => ({ tokens: openFileAdminTokenStore(dataDir), audit: cliAudit, close: async () => undefined }),
  });
  assert.equal(code, 0, out.text());
  assert.equal(cliAudit.events.length, 1);
  const revoked = await withToken(second.token, 'GET', '/api/keys');
  assert.deepEqual(errorOf(revoked), { status: 401, message: 'The admin API token has been revoked; create a new one (portcullis admin tokens create, or Tokens in the dashboard).', type: 'authentication_error', param: null, code: 'admin_token_revoked' });
  assert.equal(revoked.headers['www-authenticate'], 'Bearer realm="portcullis-admin", error="invalid_token"');
});

test('no token and no session, or the token under another scheme than Bearer: 401 session_required saying how to send a token; /api/session only asks for a login', async () => {
  const { token } = await createToken('wrong-scheme', ['read']);
  const told = 'Log in to the admin API first (POST /api/login), or send an admin API token in the header "Authorization: Bearer pca_...".';
  for (const headers of [{}, { authorization: `Token ${token}` }] as Array<Record<string, string>>) {
    const res = await request(base, 'GET', '/api/keys', { headers });
    assert.deepEqual(errorOf(res), { status: 401, message: told, type: 'authentication_error', param: null, code: 'session_required' });
  }
  const sessionRoute = await request(base, 'GET', '/api/session');
  assert.deepEqual(errorOf(sessionRoute), { status: 401, message: 'Log in to the admin API first (POST /api/login).', type: 'authentication_error', param: null, code: 'session_required' });
});

test('unknown and malformed tokens 401 admin_token_invalid; the actor is anonymous with at most the prefix; never more of what was sent', async () => {
  const unknown = 'pca_' + 'Q'.repeat(42) + 'A';
  const res = await withToken(unknown, 'GET', '/api/keys');
  assert.deepEqual(errorOf(res), { status: 401, message: 'The admin API token is not valid: no token of this gateway matches it. Send the whole pca_... token as it was printed when it was created.', type: 'authentication_error', param: null, code: 'admin_token_invalid' });
  assert.equal(res.headers['www-authenticate'], 'Bearer realm="portcullis-admin", error="invalid_token"');
  const apiKey = 'pcl_AbC1x9QzAbC1x9QzAbC1x9QzAbC1x9QzAbC1x9QzAbC1FZajM';
  assert.equal((errorOf(await withToken(apiKey, 'GET', '/api/keys')) as { code: string }).code, 'admin_token_invalid');
  assert.deepEqual(audit.events, [
    { actor: { kind: 'anonymous', id: '-', name: 'pca_QQQQ' }, source: SOURCE, action: 'token.refused', target: null, before: null, after: null, detail: { reason: 'admin_token_invalid' } },
    { actor: { kind: 'anonymous', id: '-' }, source: SOURCE, action: 'token.refused', target: null, before: null, after: null, detail: { reason: 'admin_token_invalid' } },
  ]);
  const recorded = JSON.stringify(audit.events) + logs.join('\n');
  assert.equal(recorded.includes(unknown), false);
  assert.equal(recorded.includes(apiKey), false);
});

test('the host check still applies to token requests', async () => {
  const { token } = await createToken('host', ['read']);
  const res = await withToken(token, 'GET', '/api/keys', undefined, { host: 'evil.example' });
  assert.equal((errorOf(res) as { code: string }).code, 'host_not_allowed');
  assert.deepEqual(audit.events, [], 'refused before the token is looked at');
});

test('an unknown or malformed token counts against its address in the unknown-token budget', async () => {
  throttleFailures.length = 0;
  assert.equal((await withToken(`pca_${'U'.repeat(42)}A`, 'GET', '/api/keys')).status, 401);
  assert.equal((await withToken('not-even-a-token', 'GET', '/api/keys')).status, 401);
  assert.deepEqual(throttleFailures, [SOURCE, SOURCE]);
});

test('a known token that is revoked or expired is no guess: retried, it never locks the address (or, through the global ceiling, everyone) out', async () => {
  const { token, record } = await createToken('ci-revoked', ['read']);
  assert.equal((await withSession('POST', `/api/tokens/${record.id}/revoke`)).status, 200);
  const expiring = await createToken('ci-expired', ['read'], 1);
  audit.events.length = 0;
  throttleFailures.length = 0;
  // The budget is 3 unknown tokens per address: 10 retries of each known one stay 401.
  for (let i = 0; i < 10; i++) {
    assert.equal((errorOf(await withToken(token, 'GET', '/api/keys')) as { code: string }).code, 'admin_token_revoked');
  }
  now = Date.parse(expiring.record.expiresAt) + 1;
  for (let i = 0; i < 10; i++) {
    assert.equal((errorOf(await withToken(expiring.token, 'GET', '/api/keys')) as { code: string }).code, 'admin_token_expired');
  }
  const login = await request(base, 'POST', '/api/login', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: PASSWORD }) });
  assert.equal(login.status, 200, login.text);
  assert.deepEqual(throttleFailures, [], 'nothing counted');
  // One record per token, address and reason per minute, not one per retry.
  assert.deepEqual(
    audit.events.filter((e) => e.action === 'token.refused').map((e) => [e.target, e.detail]),
    [
      [record.id, { reason: 'admin_token_revoked' }],
      [expiring.record.id, { reason: 'admin_token_expired' }],
    ],
  );
  now += 60_000;
  assert.equal((await withToken(expiring.token, 'GET', '/api/keys')).status, 401);
  assert.deepEqual(audit.events.filter((e) => e.action === 'token.refused').at(-1)?.detail, { reason: 'admin_token_expired' }, 'a minute later, recorded again');
  assert.equal(audit.events.filter((e) => e.action === 'token.refused').length, 3);
});

test('a token store that cannot be read is 503 key_store_unavailable with Retry-After, not a 500 and not a refusal', async () => {
  const { token } = await createToken('io', ['read']);
  const file = path.join(dataDir, 'admin-tokens.json');
  const kept = readFileSync(file, 'utf8');
  rmSync(file);
  mkdirSync(file);
  try {
    const res = await withToken(token, 'GET', '/api/keys');
    assert.deepEqual(errorOf(res), { status: 503, message: 'The key store is busy or cannot be written; try again.', type: 'server_error', param: null, code: 'key_store_unavailable' });
    assert.equal(res.headers['retry-after'], '1');
    assert.deepEqual(audit.events, []);
  } finally {
    rmSync(file, { recursive: true });
    writeFileSync(file, kept, { mode: 0o600 });
  }
  assert.equal((await withToken(token, 'GET', '/api/keys')).status, 200);
});

test('at most 100 live tokens: the 101st is 409 admin_token_limit_reached, and nothing is recorded', async () => {
  const live = (await state.tokens.list()).filter((r) => r.revokedAt === null && Date.parse(r.expiresAt) > now).length;
  for (let i = live; i < 100; i++) await state.tokens.create({ name: `filler ${i}`, scopes: ['read'], expiresAt: new Date(T0 + DAY).toISOString(), createdBy: 'cli:test' }, T0);
  const res = await withSession('POST', '/api/tokens', { name: 'one too many', scopes: ['read'], expiresAt: new Date(T0 + DAY).toISOString() });
  assert.deepEqual(errorOf(res), {
    status: 409,
    message: 'There are already 100 live admin API tokens (the most allowed); revoke one you no longer use first.',
    type: 'invalid_request_error',
    param: null,
    code: 'admin_token_limit_reached',
  });
  assert.deepEqual(audit.events, []);
});

// Last: over everything the tests above did.
test('no token is in the data directory, a log line or an audit event', () => {
  const stored = readdirSync(dataDir).map((name) => readFileSync(path.join(dataDir, name), 'utf8')).join('\n');
  assert.ok(stored.includes('"tokens"'), 'admin-tokens.json was read');
  assert.ok(issuedTokens.length >= 8);
  assert.ok(everything.length >= 20);
  for (const token of issuedTokens) {
    // Past the 8-character prefix, which is shown on purpose.
    const secret = token.slice(8);
    assert.equal(stored.includes(secret), false, 'a token in the data directory');
    assert.equal(logs.join('\n').includes(secret), false, 'a token in the log');
    assert.equal(everything.join('\n').includes(secret), false, 'a token in the audit trail');
  }
});
