// The admin listener's doors leave exactly one audit record
// per action — password and bootstrap logins, wrong passwords (and none for
// the throttle's refusals), the dashboard's first password, and each key
// create, update, rotate and revoke through the admin API as the session's
// actor — and a refused change leaves none. No record holds a raw key or its
// hash. The real admin server on 127.0.0.1 port 0, a real data directory.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createAdminServer, type AdminServer } from '../../src/admin/admin-server.ts';
import { createBootstrapToken, type BootstrapToken } from '../../src/admin/bootstrap-token.ts';
import { createLoginThrottle, type LoginThrottle } from '../../src/admin/login-throttle.ts';
import type { AuditEvent } from '../../src/audit/audit-event.ts';
import { AuditLogError } from '../../src/audit/audit-log.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { hashApiKey } from '../../src/keys/api-key.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createDemoProvider } from '../../src/providers/demo.ts';
import { createAliasTargets } from '../../src/routing/alias-targets.ts';
import { openFileBackend, type FileBackend } from '../../src/state/file-backend.ts';
import { request, type RawResponse } from '../gateway/harness.ts';
import { recordingAuditTrail, type RecordingAuditTrail } from '../admin/recording-audit-trail.ts';
import { tempDir } from '../support/temp-dir.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';

const PASSWORD = 'correct horse battery staple';
const NOW = Date.parse('2026-11-22T05:30:00.000Z');
const CLIENT = '127.0.0.1';
const MAX_FAILURES = 3;
const NO_LIMITS = { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null, tokenBudget: null, costBudget: null };

let dir: string;
let dataDir: string;
let state: FileBackend;
let admin: AdminServer;
let base: string;
let bootstrap: BootstrapToken;
let throttle: LoginThrottle;
let trail: RecordingAuditTrail;
/** Every raw key an answer showed: none may appear in any record. */
const rawKeys: string[] = [];

before(async () => {
  dir = tempDir('audit-doors');
  dataDir = path.join(dir, 'data');
  const config = parseConfig(
    { dataDir, providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo' } }, auto: { default: 'service-chat' } },
    null,
    dir,
  );
  const routes = createAliasTargets(config, new Map([['demo', { provider: createDemoProvider(), maxTokensParam: 'max_tokens' as const, policy: null }]]));
  state = openFileBackend(dataDir, { watch: false });
  bootstrap = createBootstrapToken();
  throttle = createLoginThrottle({ scheduler: new ManualScheduler(), maxFailures: MAX_FAILURES });
  trail = recordingAuditTrail();
  admin = createAdminServer({
    view: () => ({ config, targets: routes }),
    state,
    audit: trail,
    clock: () => NOW,
    dataDir,
    limits: config.limits,
    logger: createLogger({ level: 'error', write: () => undefined }),
    bootstrap,
    throttle,
    session: { ttlMs: 3_600_000, idleMs: 600_000, secureCookies: false },
    dashboardDir: path.join(dir, 'no-dashboard'),
  });
  await new Promise<void>((resolve) => admin.server.listen(0, CLIENT, resolve));
  base = `http://${CLIENT}:${(admin.server.address() as AddressInfo).port}`;
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

function call(method: string, urlPath: string, session: Session | null, body?: unknown): Promise<RawResponse> {
  const headers: Record<string, string> = {};
  if (session !== null) {
    headers['cookie'] = session.cookie;
    if (method !== 'GET') headers['x-csrf-token'] = session.csrf;
  }
  if (body !== undefined) headers['content-type'] = 'application/json';
  return request(base, method, urlPath, { headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

function sessionOf(res: RawResponse): Session {
  assert.equal(res.status, 200, res.text);
  const cookie = ((res.headers['set-cookie'] as string[])[0] as string).split(';')[0] as string;
  return { cookie, csrf: (res.json() as { csrfToken: string }).csrfToken };
}

/** The records `action` adds; it must add exactly `expected`. */
async function recorded<T>(action: () => Promise<T>): Promise<{ result: T; events: AuditEvent[] }> {
  const mark = trail.events.length;
  const result = await action();
  return { result, events: trail.events.slice(mark) };
}

const failed = (): AuditEvent => ({
  actor: { kind: 'anonymous', id: '-' },
  source: CLIENT,
  action: 'admin.login_failed',
  target: 'admin',
  before: null,
  after: null,
  detail: { reason: 'wrong_password' },
});

let session: Session;

test('bootstrap login, a wrong token, the dashboard password, a password login and a wrong password: one record each', async () => {
  const boot = await recorded(async () => sessionOf(await call('POST', '/api/login', null, { password: bootstrap.token })));
  assert.deepEqual(boot.events, [{ actor: { kind: 'bootstrap', id: 'bootstrap' }, source: CLIENT, action: 'admin.login', target: 'admin', before: null, after: null }]);

  const reused = await recorded(() => call('POST', '/api/login', null, { password: bootstrap.token }));
  assert.equal(reused.result.status, 401);
  assert.deepEqual(reused.events, [failed()]);

  // A weak password is refused before anything is set: no record.
  const weak = await recorded(() => call('POST', '/api/password', boot.result, { password: 'short' }));
  assert.equal(weak.result.status, 400);
  assert.deepEqual(weak.events, []);

  const set = await recorded(() => call('POST', '/api/password', boot.result, { password: PASSWORD }));
  assert.equal(set.result.status, 200, set.result.text);
  const updatedAt = (JSON.parse(readFileSync(path.join(dataDir, 'admin.json'), 'utf8')) as { updatedAt: string }).updatedAt;
  assert.equal(updatedAt, new Date(NOW).toISOString());
  assert.deepEqual(set.events, [
    { actor: { kind: 'bootstrap', id: 'bootstrap' }, source: CLIENT, action: 'admin.password_set', target: 'admin', before: null, after: { updatedAt } },
  ]);

  const login = await recorded(async () => sessionOf(await call('POST', '/api/login', null, { password: PASSWORD })));
  assert.deepEqual(login.events, [{ actor: { kind: 'password', id: 'admin' }, source: CLIENT, action: 'admin.login', target: 'admin', before: null, after: null }]);
  session = login.result;

  const wrong = await recorded(() => call('POST', '/api/login', null, { password: 'not the password at all' }));
  assert.equal(wrong.result.status, 401);
  assert.deepEqual(wrong.events, [failed()]);

  // A malformed body is no login attempt.
  const malformed = await recorded(() => call('POST', '/api/login', null, { pass: PASSWORD }));
  assert.equal(malformed.result.status, 400);
  assert.deepEqual(malformed.events, []);
  throttle.success(CLIENT);
});

test('a flood of wrong passwords leaves one record per password checked; the throttle refusals leave none', async () => {
  const flood = await recorded(async () => {
    const statuses: number[] = [];
    for (let i = 0; i < MAX_FAILURES + 10; i++) statuses.push((await call('POST', '/api/login', null, { password: `guess number ${i} guess` })).status);
    return statuses;
  });
  assert.deepEqual(flood.result, [...Array<number>(MAX_FAILURES).fill(401), ...Array<number>(10).fill(429)]);
  assert.deepEqual(flood.events, Array.from({ length: MAX_FAILURES }, failed));
  // Refused by the throttle even with the right password: no record either.
  const locked = await recorded(() => call('POST', '/api/login', null, { password: PASSWORD }));
  assert.equal(locked.result.status, 429);
  assert.deepEqual(locked.events, []);
  throttle.success(CLIENT);
});

test('admin API: create, update, rotate and revoke each leave one record with the session actor and the key before and after', async () => {
  const who = { actor: { kind: 'password', id: 'admin' }, source: CLIENT } as const;
  const created = await recorded(() =>
    call('POST', '/api/keys', session, { name: 'ci', allowedAliases: ['service-chat'], expiresAt: '2027-01-31T00:00:00.000Z', limits: { requestsPerMinute: 60 } }),
  );
  assert.equal(created.result.status, 201, created.result.text);
  const { key, record } = created.result.json() as { key: string; record: { id: string; prefix: string } };
  rawKeys.push(key);
  const view = {
    id: record.id,
    name: 'ci',
    prefix: record.prefix,
    status: 'active',
    expiresAt: '2027-01-31T00:00:00.000Z',
    allowedAliases: ['service-chat'],
    limits: { ...NO_LIMITS, requestsPerMinute: 60 },
    guard: null,
    revokedAt: null,
    rotatedAt: null,
  };
  assert.deepEqual(created.events, [{ ...who, action: 'key.create', target: record.id, before: null, after: view }]);

  const updated = await recorded(() => call('PATCH', `/api/keys/${record.id}`, session, { name: 'ci-2', limits: { concurrentRequests: 2 }, guard: { detectors: { secrets: 'block' } } }));
  assert.equal(updated.result.status, 200, updated.result.text);
  const viewUpdated = { ...view, name: 'ci-2', limits: { ...NO_LIMITS, concurrentRequests: 2 }, guard: { detectors: { secrets: 'block' } } };
  assert.deepEqual(updated.events, [{ ...who, action: 'key.update', target: record.id, before: view, after: viewUpdated }]);

  const rotated = await recorded(() => call('POST', `/api/keys/${record.id}/rotate`, session, {}));
  assert.equal(rotated.result.status, 200, rotated.result.text);
  const afterRotate = rotated.result.json() as { key: string; record: { prefix: string; rotatedAt: string } };
  rawKeys.push(afterRotate.key);
  const viewRotated = { ...viewUpdated, prefix: afterRotate.record.prefix, rotatedAt: afterRotate.record.rotatedAt };
  assert.notEqual(afterRotate.record.prefix, record.prefix);
  assert.deepEqual(rotated.events, [{ ...who, action: 'key.rotate', target: record.id, before: viewUpdated, after: viewRotated }]);

  const revoked = await recorded(() => call('POST', `/api/keys/${record.id}/revoke`, session, {}));
  assert.equal(revoked.result.status, 200, revoked.result.text);
  const revokedAt = (revoked.result.json() as { revokedAt: string }).revokedAt;
  assert.deepEqual(revoked.events, [{ ...who, action: 'key.revoke', target: record.id, before: viewRotated, after: { ...viewRotated, status: 'revoked', revokedAt } }]);

  // Refused changes record nothing: an unknown id, a revoked key, a bad setting; reads record nothing.
  const refused = await recorded(async () => [
    (await call('PATCH', '/api/keys/key_ZZZZZZZZZZZZZZZZ', session, { name: 'x' })).status,
    (await call('POST', '/api/keys/key_ZZZZZZZZZZZZZZZZ/rotate', session, {})).status,
    (await call('POST', '/api/keys/key_ZZZZZZZZZZZZZZZZ/revoke', session, {})).status,
    (await call('PATCH', `/api/keys/${record.id}`, session, { name: 'x' })).status,
    (await call('POST', `/api/keys/${record.id}/rotate`, session, {})).status,
    (await call('POST', `/api/keys/${record.id}/revoke`, session, {})).status,
    (await call('POST', '/api/keys', session, { name: '' })).status,
    (await call('GET', '/api/keys', session)).status,
    (await call('GET', `/api/keys/${record.id}`, session)).status,
  ]);
  assert.deepEqual(refused.result, [404, 404, 404, 409, 409, 409, 400, 200, 200]);
  assert.deepEqual(refused.events, []);
});

test('admin API: a key change whose record cannot be appended is not made: 503 change_not_recorded', async () => {
  const before = (await state.keys.list()).length;
  trail.refuseBegin = new AuditLogError('cannot append to the audit log in /var/lib/portcullis: ENOSPC: no space left on device');
  try {
    const refused = await recorded(() => call('POST', '/api/keys', session, { name: 'never' }));
    assert.equal(refused.result.status, 503);
    assert.deepEqual(refused.result.json(), {
      error: {
        message: 'The change was not made: its audit record cannot be written. The gateway log says why; run portcullis audit verify on the server.',
        type: 'server_error',
        param: null,
        code: 'change_not_recorded',
      },
    });
    assert.deepEqual(refused.events, []);
  } finally {
    trail.refuseBegin = null;
  }
  assert.equal((await state.keys.list()).length, before);
});

test('no record holds a raw key, any part of its secret, or its hash', () => {
  assert.equal(rawKeys.length, 2);
  const serialized = JSON.stringify(trail.events);
  for (const key of rawKeys) {
    assert.equal(serialized.includes(key), false);
    assert.equal(serialized.includes(key.slice(12)), false, 'the secret after the display prefix');
    assert.equal(serialized.includes(hashApiKey(key)), false);
  }
  assert.equal(serialized.includes(PASSWORD), false);
});
