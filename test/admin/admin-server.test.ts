// The admin listener over HTTP: login, sessions, CSRF, every key endpoint,
// aliases, usage and the dashboard files, against a real data directory.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setAdminPassword } from '../../src/admin/admin-credentials.ts';
import { createAdminServer, DASHBOARD_CSP, type AdminServer } from '../../src/admin/admin-server.ts';
import { createBootstrapToken, type BootstrapToken } from '../../src/admin/bootstrap-token.ts';
import { createLoginThrottle } from '../../src/admin/login-throttle.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { createAliasTargets } from '../../src/routing/alias-targets.ts';
import { sendJson } from '../../src/http/respond.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createDemoEmbedder, createDemoProvider } from '../../src/providers/demo.ts';
import { openFileBackend, type FileBackend } from '../../src/state/file-backend.ts';
import { createUsageLedger } from '../../src/usage/usage-ledger.ts';
import { request, type RawResponse } from '../gateway/harness.ts';
import { recordingAuditTrail } from './recording-audit-trail.ts';
import { tempDir } from '../support/temp-dir.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';

const PASSWORD = 'correct horse battery staple';
const NOW = Date.parse('2026-11-22T05:30:00.000Z');
let dir: string;
let state: FileBackend;
let admin: AdminServer;
let base: string;
let bootstrap: BootstrapToken;
const logs: Record<string, unknown>[] = [];

before(async () => {
  dir = tempDir('admin');
  const dashboardDir = path.join(dir, 'dashboard');
  mkdirSync(dashboardDir);
  writeFileSync(path.join(dashboardDir, 'index.html'), '<!doctype html><title>Portcullis</title>');
  writeFileSync(path.join(dashboardDir, 'app.js'), 'export {};\n');
  const config = parseConfig(
    {
      dataDir: path.join(dir, 'data'),
      providers: { demo: { type: 'demo' } },
      requestFields: ['user'],
      aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo', maxOutputTokens: 1024, capabilities: ['tools'], requestFields: ['json_schema', 'seed'] }, 'service-vision': { provider: 'demo', model: 'demo-vision' }, 'service-embed': { kind: 'embeddings', provider: 'demo', model: 'demo-embed', maxInputsPerCall: 64 } },
      auto: { default: 'service-chat' },
    },
    null,
    dir,
  );
  const routes = createAliasTargets(config, new Map([['demo', { provider: createDemoProvider(), maxTokensParam: 'max_tokens' as const, policy: null, embedder: createDemoEmbedder() }]]));
  state = openFileBackend(config.dataDir, { watch: false });
  bootstrap = createBootstrapToken();
  admin = createAdminServer({
    view: () => ({ config, targets: routes }),
    state,
    audit: recordingAuditTrail(),
    clock: () => NOW,
    dataDir: config.dataDir,
    limits: config.limits,
    logger: createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) }),
    bootstrap,
    session: { ttlMs: 3_600_000, idleMs: 600_000, secureCookies: false },
    dashboardDir,
    extraRoutes: [['GET', '/healthz', async (ctx) => sendJson(ctx.res, 200, { status: 'ok' })]],
  });
  await new Promise<void>((resolve) => admin.server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(admin.server.address() as AddressInfo).port}`;
});

after(async () => {
  admin.server.closeAllConnections();
  await new Promise<void>((resolve) => admin.server.close(() => resolve()));
  await state.close();
});

interface Session {
  cookie: string;
  csrf: string;
}

function cookieOf(res: RawResponse): string {
  const set = res.headers['set-cookie'];
  assert.ok(set !== undefined && set.length === 1, 'one Set-Cookie');
  return (set[0] as string).split(';')[0] as string;
}

function call(method: string, urlPath: string, session: Session | null, body?: unknown, extra: Record<string, string> = {}): Promise<RawResponse> {
  const headers: Record<string, string> = { ...extra };
  if (session !== null) {
    headers['cookie'] = session.cookie;
    if (method !== 'GET') headers['x-csrf-token'] = session.csrf;
  }
  if (body !== undefined) headers['content-type'] = 'application/json';
  return request(base, method, urlPath, { headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

async function login(password: string, client?: Record<string, string>): Promise<Session> {
  const res = await call('POST', '/api/login', null, { password }, client);
  assert.equal(res.status, 200, res.text);
  return { cookie: cookieOf(res), csrf: (res.json() as { csrfToken: string }).csrfToken };
}

function errorOf(res: RawResponse): { status: number; code: unknown; param: unknown; type: unknown } {
  const e = (res.json() as { error: { code: unknown; param: unknown; type: unknown } }).error;
  return { status: res.status, code: e.code, param: e.param, type: e.type };
}

let session: Session;

test('without a session every API route is 401 session_required, with the security headers', async () => {
  for (const [method, p] of [['GET', '/api/keys'], ['POST', '/api/keys'], ['GET', '/api/keys/key_AAAAAAAAAAAAAAAA'], ['GET', '/api/aliases'], ['GET', '/api/session']] as const) {
    const res = await call(method, p, null, method === 'POST' ? { name: 'x' } : undefined);
    assert.deepEqual(errorOf(res), { status: 401, code: 'session_required', param: null, type: 'authentication_error' }, `${method} ${p}`);
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['cache-control'], 'no-store');
  }
  const forged = await call('GET', '/api/keys', { cookie: 'portcullis_session=' + 'A'.repeat(43), csrf: '' });
  assert.equal(forged.status, 401);
});

test('bootstrap login: one-time token, then only setting a password is allowed', async () => {
  const res = await call('POST', '/api/login', null, { password: bootstrap.token });
  assert.equal(res.status, 200);
  const cookieHeader = (res.headers['set-cookie'] as string[])[0] as string;
  assert.match(cookieHeader, /^portcullis_session=[A-Za-z0-9_-]{43}; Max-Age=3600; Path=\/; HttpOnly; SameSite=Strict$/);
  const body = res.json() as { csrfToken: string; expiresAt: string; mustSetPassword: boolean };
  assert.deepEqual(body, { csrfToken: body.csrfToken, expiresAt: '2026-11-22T06:30:00.000Z', mustSetPassword: true });
  const boot: Session = { cookie: cookieOf(res), csrf: body.csrfToken };

  // The token works once.
  assert.deepEqual(errorOf(await call('POST', '/api/login', null, { password: bootstrap.token })), { status: 401, code: 'invalid_password', param: null, type: 'authentication_error' });
  assert.deepEqual(errorOf(await call('GET', '/api/keys', boot)), { status: 403, code: 'password_required', param: null, type: 'permission_error' });
  assert.deepEqual((await call('GET', '/api/session', boot)).json(), { ...body, actor: { kind: 'bootstrap', id: 'bootstrap' } });

  assert.deepEqual(errorOf(await call('POST', '/api/password', { ...boot, csrf: 'wrong' }, { password: PASSWORD })), { status: 403, code: 'csrf_token_invalid', param: null, type: 'permission_error' });
  assert.deepEqual(errorOf(await call('POST', '/api/password', boot, { password: 'short' })), { status: 400, code: 'weak_password', param: 'password', type: 'invalid_request_error' });
  const set = await call('POST', '/api/password', boot, { password: PASSWORD });
  assert.equal(set.status, 200, set.text);
  const next = set.json() as { csrfToken: string; mustSetPassword: boolean };
  assert.equal(next.mustSetPassword, false);
  assert.match(readFileSync(path.join(dir, 'data', 'admin.json'), 'utf8'), /"passwordHash": "scrypt\$/);
  // The bootstrap session ended; the new one continues.
  assert.equal((await call('GET', '/api/keys', boot)).status, 401);
  session = { cookie: cookieOf(set), csrf: next.csrfToken };
  assert.equal((await call('GET', '/api/keys', session)).status, 200);
  assert.deepEqual(errorOf(await call('POST', '/api/password', session, { password: PASSWORD + '!' })), { status: 409, code: 'password_already_set', param: null, type: 'invalid_request_error' });
});

test('state-changing requests need the CSRF token and a same-origin Origin', async () => {
  const noToken = await request(base, 'POST', '/api/keys', { headers: { cookie: session.cookie, 'content-type': 'application/json' }, body: '{"name":"x"}' });
  assert.deepEqual(errorOf(noToken), { status: 403, code: 'csrf_token_invalid', param: null, type: 'permission_error' });
  const foreign = await call('POST', '/api/keys', session, { name: 'x' }, { origin: 'https://evil.example' });
  assert.deepEqual(errorOf(foreign), { status: 403, code: 'origin_refused', param: null, type: 'permission_error' });
  const form = await request(base, 'POST', '/api/keys', { headers: { cookie: session.cookie, 'x-csrf-token': session.csrf, 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=x' });
  assert.equal(form.status, 415);
  assert.deepEqual((await state.keys.list()).length, 0, 'nothing was created');
});

test('keys: create shows the raw key once; list, get and the store never show it', async () => {
  const res = await call('POST', '/api/keys', session, {
    name: 'billing',
    allowedAliases: ['service-chat'],
    expiresAt: '2027-01-01T00:00:00Z',
    limits: { requestsPerMinute: 60, tokenBudget: { tokens: 100000, period: 'day' } },
    guard: { detectors: { secrets: 'block', email: 'mask' } },
  }, { origin: base });
  assert.equal(res.status, 201, res.text);
  const { key, record } = res.json() as { key: string; record: Record<string, unknown> };
  assert.match(key, /^pcl_[0-9A-Za-z]{49}$/);
  assert.deepEqual(record, {
    id: record['id'],
    name: 'billing',
    prefix: key.slice(0, 12),
    status: 'active',
    createdAt: record['createdAt'],
    revokedAt: null,
    rotatedAt: null,
    expiresAt: '2027-01-01T00:00:00.000Z',
    lastUsedAt: null,
    allowedAliases: ['service-chat'],
    limits: { requestsPerMinute: 60, tokensPerMinute: null, concurrentRequests: null, tokenBudget: { tokens: 100000, period: 'day' }, costBudget: null },
    guard: { detectors: { secrets: 'block', email: 'mask' } },
  });
  const id = record['id'] as string;
  assert.match(record['createdAt'] as string, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  const list = await call('GET', '/api/keys', session);
  const get = await call('GET', `/api/keys/${id}`, session);
  for (const text of [list.text, get.text, readFileSync(path.join(dir, 'data', 'keys.json'), 'utf8')]) {
    assert.equal(text.includes(key), false);
    assert.equal(text.includes(key.slice(12)), false);
  }
  assert.deepEqual(get.json(), record);
  assert.deepEqual((list.json() as { data: unknown[] }).data, [record]);
  assert.equal(state.keys.authenticate(key)?.id, id);

  assert.deepEqual(errorOf(await call('POST', '/api/keys', session, { name: 'x', allowedAliases: ['service-chat', 'service-typo'] })), { status: 400, code: 'unknown_alias', param: 'allowedAliases[1]', type: 'invalid_request_error' });
  assert.deepEqual(errorOf(await call('POST', '/api/keys', session, { name: 'x', limits: { requestsPerMinute: 0 } })), { status: 400, code: 'invalid_key_setting', param: 'limits.requestsPerMinute', type: 'invalid_request_error' });
  assert.deepEqual(errorOf(await call('POST', '/api/keys', session, { name: 'x', guard: { detectors: { cards: 'block' } } })), { status: 400, code: 'invalid_key_setting', param: 'guard.detectors.cards', type: 'invalid_request_error' });
  assert.deepEqual(errorOf(await call('POST', '/api/keys', session, { name: '' })), { status: 400, code: 'invalid_key_name', param: 'name', type: 'invalid_request_error' });
  assert.deepEqual(errorOf(await call('POST', '/api/keys', session, {})), { status: 400, code: 'missing_required_parameter', param: 'name', type: 'invalid_request_error' });
  assert.deepEqual(errorOf(await call('POST', '/api/keys', session, { name: 'x', scopes: [] })), { status: 400, code: 'unknown_parameter', param: 'scopes', type: 'invalid_request_error' });
  assert.deepEqual(errorOf(await call('POST', '/api/keys', session, { name: 'x', expiresAt: '2020-01-01T00:00:00Z' })), { status: 400, code: 'invalid_key_setting', param: 'expiresAt', type: 'invalid_request_error' });
  assert.deepEqual(errorOf(await call('GET', '/api/keys/key_AAAAAAAAAAAAAAAA', session)), { status: 404, code: 'key_not_found', param: null, type: 'not_found_error' });
});

test('keys: patch, rotate (same id, new secret), revoke, and usage', async () => {
  const { key, record } = (await call('POST', '/api/keys', session, { name: 'rotating' })).json() as { key: string; record: { id: string } };
  const patched = await call('PATCH', `/api/keys/${record.id}`, session, { name: 'renamed', limits: { tokensPerMinute: 5000 }, allowedAliases: null });
  assert.equal(patched.status, 200, patched.text);
  assert.deepEqual((patched.json() as { name: string; limits: unknown }).limits, { requestsPerMinute: null, tokensPerMinute: 5000, concurrentRequests: null, tokenBudget: null, costBudget: null });
  assert.equal((patched.json() as { name: string }).name, 'renamed');
  assert.equal((patched.json() as { guard: unknown }).guard, null);
  const guarded = await call('PATCH', `/api/keys/${record.id}`, session, { guard: { detectors: { personal: 'log' } } });
  assert.deepEqual((guarded.json() as { guard: unknown }).guard, { detectors: { personal: 'log' } });
  assert.deepEqual(errorOf(await call('PATCH', `/api/keys/${record.id}`, session, { guard: { detectors: { email: 'redact' } } })), { status: 400, code: 'invalid_key_setting', param: 'guard.detectors.email', type: 'invalid_request_error' });
  assert.equal(((await call('PATCH', `/api/keys/${record.id}`, session, { guard: null })).json() as { guard: unknown }).guard, null);

  const rotated = await call('POST', `/api/keys/${record.id}/rotate`, session);
  assert.equal(rotated.status, 200, rotated.text);
  const next = rotated.json() as { key: string; record: { id: string; rotatedAt: string; name: string } };
  assert.equal(next.record.id, record.id);
  assert.equal(next.record.name, 'renamed');
  assert.notEqual(next.key, key);
  assert.equal(state.keys.authenticate(key), null, 'the old secret stops working');
  assert.equal(state.keys.authenticate(next.key)?.id, record.id);

  const ledger = createUsageLedger();
  ledger.record(record.id, { charged: { promptTokens: 12, completionTokens: 30, cachedTokens: 0, costNanos: 150_000 }, error: false }, NOW - 3_600_000);
  await state.usage.add(ledger.drain(), NOW);
  const usage = await call('GET', `/api/keys/${record.id}/usage?granularity=hour`, session);
  assert.equal(usage.status, 200, usage.text);
  const zero = { requests: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0, errors: 0, costNanos: 0, guardBlocked: 0, guardMasked: 0, guardLogged: 0, cost: 0 };
  const used = { requests: 1, promptTokens: 12, completionTokens: 30, cachedTokens: 0, errors: 0, costNanos: 150_000, guardBlocked: 0, guardMasked: 0, guardLogged: 0, cost: 0.00015 };
  const buckets = Array.from({ length: 48 }, (_, i) => ({ start: new Date(Date.parse('2026-11-20T06:00:00.000Z') + i * 3_600_000).toISOString(), ...(i === 46 ? used : zero) }));
  assert.deepEqual(usage.json(), { keyId: record.id, granularity: 'hour', buckets, totals: used, currency: 'USD', budget: null, costBudget: null });
  assert.equal(buckets[46]?.start, '2026-11-22T04:00:00.000Z');
  assert.equal((await call('GET', `/api/keys/${record.id}/usage?granularity=day`, session)).status, 200);
  assert.deepEqual(errorOf(await call('GET', `/api/keys/${record.id}/usage?granularity=week`, session)), { status: 400, code: 'invalid_value', param: 'granularity', type: 'invalid_request_error' });

  const revoked = await call('POST', `/api/keys/${record.id}/revoke`, session);
  assert.equal((revoked.json() as { status: string }).status, 'revoked');
  assert.equal(state.keys.authenticate(next.key), null);
  assert.deepEqual(errorOf(await call('POST', `/api/keys/${record.id}/revoke`, session)), { status: 409, code: 'key_revoked', param: null, type: 'invalid_request_error' });
  assert.deepEqual(errorOf(await call('POST', `/api/keys/${record.id}/rotate`, session)), { status: 409, code: 'key_revoked', param: null, type: 'invalid_request_error' });
});

test('a budgeted key reports its budget with its usage', async () => {
  const { record } = (await call('POST', '/api/keys', session, { name: 'budget', limits: { tokenBudget: { tokens: 1000, period: 'month' } } })).json() as { record: { id: string } };
  const u = (await call('GET', `/api/keys/${record.id}/usage`, session)).json() as { budget: unknown; costBudget: unknown };
  assert.deepEqual(u.budget, { tokens: 1000, used: 0, period: 'month', resetsAt: '2026-12-01T00:00:00.000Z' });
  assert.equal(u.costBudget, null);
});

test('aliases: targets with their circuit state and the auto rules', async () => {
  const res = await call('GET', '/api/aliases', session);
  assert.deepEqual(res.json(), {
    object: 'list',
    data: [
      // Price, imageTokens and currency; demo targets without a price are free.
      {
        alias: 'service-chat',
        kind: 'chat',
        available: true,
        maxOutputTokens: 1024,
        contextWindow: null,
        capabilities: ['tools'],
        price: null,
        imageTokens: 2000,
        requestFields: ['json_schema', 'seed'],
        targets: [{ id: 'demo/portcullis-demo', provider: 'demo', model: 'portcullis-demo', weight: 1, priority: 0, price: { input: 0, cachedInput: 0, output: 0 }, circuit: 'closed' }],
      },
      {
        alias: 'service-vision',
        kind: 'chat',
        available: true,
        maxOutputTokens: null,
        contextWindow: null,
        capabilities: [],
        price: null,
        imageTokens: 2000,
        requestFields: ['user'],
        targets: [{ id: 'demo/demo-vision', provider: 'demo', model: 'demo-vision', weight: 1, priority: 0, price: { input: 0, cachedInput: 0, output: 0 }, circuit: 'closed' }],
      },
      // An embeddings alias: its targets say whether they take dimensions and how many inputs a call carries.
      {
        alias: 'service-embed',
        kind: 'embeddings',
        available: true,
        maxOutputTokens: null,
        contextWindow: null,
        capabilities: [],
        price: null,
        imageTokens: 2000,
        requestFields: [],
        targets: [
          { id: 'demo/demo-embed', provider: 'demo', model: 'demo-embed', weight: 1, priority: 0, price: { input: 0, cachedInput: 0, output: 0 }, circuit: 'closed', acceptsDimensions: true, maxInputsPerCall: 64 },
        ],
      },
    ],
    auto: { default: 'service-chat', rules: [{ use: 'service-chat', reason: 'tools' }] },
    currency: 'USD',
    api: { url: null },
  });
});

test('the dashboard page and its assets carry the strict CSP; unknown assets are 404', async () => {
  const page = await request(base, 'GET', '/');
  assert.equal(page.status, 200);
  assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(page.headers['content-security-policy'], DASHBOARD_CSP);
  assert.equal(page.text, '<!doctype html><title>Portcullis</title>');
  const js = await request(base, 'GET', '/assets/app.js');
  assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
  assert.equal(js.text, 'export {};\n');
  assert.equal((await request(base, 'GET', '/assets/index.html')).status, 404);
  assert.equal((await request(base, 'GET', '/assets/..%2Fadmin.json')).status, 404);
  assert.equal((await request(base, 'GET', '/assets/missing.js')).status, 404);
});

test('logout ends the session and clears the cookie', async () => {
  const created = admin.sessions.create({ kind: 'password', id: 'admin' });
  const s: Session = { cookie: `portcullis_session=${created.id}`, csrf: created.csrfToken };
  assert.equal((await call('GET', '/api/session', s)).status, 200);
  const out = await call('POST', '/api/logout', s);
  assert.equal(out.status, 204);
  assert.equal((out.headers['set-cookie'] as string[])[0], 'portcullis_session=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict');
  assert.equal((await call('GET', '/api/session', s)).status, 401);
});

test('wrong passwords are rate-limited per client with Retry-After; a password change ends older sessions', async () => {
  const client = { 'x-forwarded-for': 'ignored' };
  // The reused bootstrap token above was the first failure from this address.
  for (let i = 0; i < 4; i++) {
    assert.deepEqual(errorOf(await call('POST', '/api/login', null, { password: `wrong ${i}` }, client)), { status: 401, code: 'invalid_password', param: null, type: 'authentication_error' });
  }
  const limited = await call('POST', '/api/login', null, { password: PASSWORD });
  assert.deepEqual(errorOf(limited), { status: 429, code: 'login_rate_limited', param: null, type: 'rate_limit_error' });
  assert.equal(limited.headers['retry-after'], '900');
  assert.equal(logs.filter((l) => l['msg'] === 'admin login failed').length, 5);
  assert.equal(JSON.stringify(logs).includes('wrong 0'), false, 'passwords are never logged');

  // The CLI changes the password: the open session ends at its next request.
  await setAdminPassword(path.join(dir, 'data'), 'another long passphrase', () => new Date(NOW + 1000), { scrypt: { cost: 1024, blockSize: 8, parallelization: 1 } });
  assert.deepEqual(errorOf(await call('GET', '/api/keys', session)), { status: 401, code: 'session_required', param: null, type: 'authentication_error' });
});

test('parallel wrong guesses cannot outrun the throttle: they are checked one at a time', async () => {
  const config = parseConfig({ providers: { demo: { type: 'demo' } }, aliases: { a: { provider: 'demo' } } }, null, dir);
  const second = createAdminServer({
    // Login reads only admin.oidc (is password login open?); nothing here reads the routes.
    view: () => ({
      config,
      get targets(): never {
        throw new Error('unused');
      },
    }),
    state,
    audit: recordingAuditTrail(),
    clock: () => NOW,
    dataDir: path.join(dir, 'data'),
    limits: parseConfig({ providers: { demo: { type: 'demo' } }, aliases: { a: { provider: 'demo' } } }, null, dir).limits,
    logger: createLogger({ level: 'error', write: () => {} }),
    bootstrap: null,
    session: { ttlMs: 3_600_000, idleMs: 600_000, secureCookies: false },
    throttle: createLoginThrottle({ maxFailures: 2, scheduler: new ManualScheduler() }),
  });
  await new Promise<void>((resolve) => second.server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(second.server.address() as AddressInfo).port}`;
  try {
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => request(url, 'POST', '/api/login', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: `parallel guess ${i}` }) })),
    );
    assert.deepEqual(results.map((r) => r.status).sort(), [401, 401, 429, 429, 429, 429]);
  } finally {
    second.server.closeAllConnections();
    await new Promise<void>((resolve) => second.server.close(() => resolve()));
  }
});

test('only the listener\'s own host names are answered (DNS rebinding); every answer carries the security headers', async () => {
  const rebound = await request(base, 'POST', '/api/login', {
    headers: { host: 'evil.example:8081', origin: 'http://evil.example:8081', 'content-type': 'application/json' },
    body: JSON.stringify({ password: 'guess' }),
  });
  assert.deepEqual(errorOf(rebound), { status: 403, code: 'host_not_allowed', param: null, type: 'permission_error' });
  assert.equal(rebound.headers['x-frame-options'], 'DENY');
  for (const host of ['localhost:1', '127.0.0.1', '[::1]:8081', 'LOCALHOST']) {
    const res = await request(base, 'GET', '/api/session', { headers: { host } });
    assert.equal(res.status, 401, host);
  }
  assert.equal((await request(base, 'GET', '/', { headers: { host: 'evil.example' } })).status, 403);
  // The operational routes too.
  const health = await request(base, 'GET', '/healthz');
  assert.equal(health.text, '{"status":"ok"}');
  assert.equal(health.headers['x-content-type-options'], 'nosniff');
  assert.equal(health.headers['cache-control'], 'no-store');
  assert.equal((await request(base, 'GET', '/healthz', { headers: { host: 'evil.example' } })).status, 403);
});
