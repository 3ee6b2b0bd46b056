// GET /api/audit on the real admin server (port 0, loopback) over the file
// backend's chain: filters, paging, 400s naming the parameter, and the trail
// the server is given writing into the same chain.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setAdminPassword } from '../../src/admin/admin-credentials.ts';
import { createAdminServer, type AdminServer } from '../../src/admin/admin-server.ts';
import type { AuditRecord } from '../../src/audit/audit-record.ts';
import { createAuditTrail } from '../../src/audit/audit-trail.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createDemoProvider } from '../../src/providers/demo.ts';
import { createAliasTargets } from '../../src/routing/alias-targets.ts';
import { openFileBackend, type FileBackend } from '../../src/state/file-backend.ts';
import { request, type RawResponse } from '../gateway/harness.ts';
import { keyCreate } from './audit-fixtures.ts';
import { tempDir } from '../support/temp-dir.ts';

const PASSWORD = 'correct horse battery staple';
let dir: string;
let state: FileBackend;
let admin: AdminServer;
let base: string;
let cookie: string;

before(async () => {
  dir = tempDir('audit-api');
  const dashboardDir = path.join(dir, 'dashboard');
  mkdirSync(dashboardDir);
  writeFileSync(path.join(dashboardDir, 'index.html'), '<!doctype html><title>Portcullis</title>');
  const config = parseConfig({ dataDir: path.join(dir, 'data'), providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo' } } }, null, dir);
  const routes = createAliasTargets(config, new Map([['demo', { provider: createDemoProvider(), maxTokensParam: 'max_tokens' as const, policy: null }]]));
  state = openFileBackend(config.dataDir, { watch: false });
  await setAdminPassword(config.dataDir, PASSWORD, () => new Date(), { scrypt: { cost: 1024, blockSize: 8, parallelization: 1 } });
  for (let i = 1; i <= 12; i++) {
    await state.audit.append(keyCreate(i, i % 4 === 0 ? { action: 'key.revoke', target: 'key_0001', actor: { kind: 'token', id: 'tok_7', name: 'ci' } } : {}));
  }
  const logger = createLogger({ level: 'error', write: () => {} });
  admin = createAdminServer({
    view: () => ({ config, targets: routes }),
    state,
    audit: createAuditTrail({ logger, log: state.audit }),
    clock: Date.now,
    dataDir: config.dataDir,
    limits: config.limits,
    logger,
    bootstrap: null,
    session: { ttlMs: 3_600_000, idleMs: 600_000, secureCookies: false },
    dashboardDir,
  });
  await new Promise<void>((resolve) => admin.server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(admin.server.address() as AddressInfo).port}`;
  const login = await request(base, 'POST', '/api/login', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: PASSWORD }) });
  assert.equal(login.status, 200, login.text);
  cookie = ((login.headers['set-cookie'] as string[])[0] as string).split(';')[0] as string;
});

after(async () => {
  admin.server.closeAllConnections();
  await new Promise<void>((resolve) => admin.server.close(() => resolve()));
  await state.close();
});

const get = (query: string, withSession = true): Promise<RawResponse> => request(base, 'GET', `/api/audit${query}`, { headers: withSession ? { cookie } : {} });
const seqs = (res: RawResponse): number[] => (res.json() as { data: AuditRecord[] }).data.map((r) => r.seq);

test('GET /api/audit: newest first, the whole records, nextBefore', async () => {
  // The newest is the login this file's session began with (seq 13), recorded through the same chain.
  const newest = (await get('?limit=1')).json() as { data: AuditRecord[]; nextBefore: number | null };
  assert.deepEqual([newest.data[0]?.seq, newest.data[0]?.action, newest.data[0]?.actor, newest.nextBefore], [13, 'admin.login', { kind: 'password', id: 'admin' }, 13]);
  const res = await get('?limit=5&before=13');
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers['cache-control'], 'no-store');
  const body = res.json() as { object: string; data: AuditRecord[]; nextBefore: number | null };
  assert.equal(body.object, 'list');
  assert.deepEqual(body.data.map((r) => r.seq), [12, 11, 10, 9, 8]);
  assert.equal(body.nextBefore, 8);
  assert.deepEqual(Object.keys(body.data[0] as object).sort(), ['action', 'actor', 'after', 'before', 'hash', 'prev', 'seq', 'source', 'target', 'time']);
  assert.deepEqual(seqs(await get('?limit=5&before=8')), [7, 6, 5, 4, 3]);
  const last = await get('?limit=5&before=3');
  assert.deepEqual([seqs(last), (last.json() as { nextBefore: unknown }).nextBefore], [[2, 1], null]);
});

test('GET /api/audit filters by key, actor, action and time', async () => {
  assert.deepEqual(seqs(await get('?key=key_0001')), [12, 8, 4, 1]);
  assert.deepEqual(seqs(await get('?actor=ci')), [12, 8, 4]);
  assert.deepEqual(seqs(await get('?actor=tok_7&action=key.revoke')), [12, 8, 4]);
  assert.deepEqual(seqs(await get('?action=key.create&since=2026-11-26T12:00:09Z&until=2026-11-26T12:00:11.000Z')), [10, 9]);
  assert.deepEqual(seqs(await get('?key=nothing')), []);
});

test('GET /api/audit refuses bad parameters with a 400 naming the parameter', async () => {
  const cases: Array<[string, string, string]> = [
    ['?limit=0', 'limit', 'invalid_value'],
    ['?limit=1001', 'limit', 'invalid_value'],
    ['?limit=ten', 'limit', 'invalid_value'],
    ['?before=-1', 'before', 'invalid_value'],
    ['?action=key.delete', 'action', 'invalid_value'],
    ['?since=yesterday', 'since', 'invalid_value'],
    ['?since=2026-11-27T00:00:00Z&until=2026-11-26T00:00:00Z', 'until', 'invalid_value'],
    ['?key=', 'key', 'invalid_value'],
    ['?key=a&key=b', 'key', 'invalid_value'],
    ['?user=alice', 'user', 'unknown_parameter'],
  ];
  for (const [query, param, code] of cases) {
    const res = await get(query);
    assert.equal(res.status, 400, query);
    const error = (res.json() as { error: { param: string; code: string; type: string; message: string } }).error;
    assert.deepEqual([error.param, error.code, error.type], [param, code, 'invalid_request_error'], query);
    assert.ok(error.message.length > 10, query);
  }
});

test('GET /api/audit needs a session (or a token with read)', async () => {
  const res = await get('', false);
  assert.equal(res.status, 401);
  assert.equal((res.json() as { error: { code: string } }).error.code, 'session_required');
});

test('a log that cannot be read is 503 audit_log_unavailable, never the file content', async () => {
  const file = path.join(dir, 'data', 'audit.jsonl');
  const good = readFileSync(file, 'utf8');
  try {
    writeFileSync(file, good + 'not a record\n');
    const res = await get('');
    assert.equal(res.status, 503);
    assert.deepEqual((res.json() as { error: unknown }).error, {
      message: 'The audit log cannot be read right now; `portcullis audit verify` on the server says why.',
      type: 'server_error',
      param: null,
      code: 'audit_log_unavailable',
    });
    assert.equal(res.headers['retry-after'], '1');
  } finally {
    writeFileSync(file, good);
  }
});

test('a record made through a trail on the backend\'s log is listed at once', async () => {
  await createAuditTrail({ logger: createLogger({ level: 'error', write: () => {} }), log: state.audit }).record({
    actor: { kind: 'password', id: 'admin' },
    source: '127.0.0.1',
    action: 'admin.password_set',
    target: 'admin',
    before: null,
    after: null,
  });
  const newest = (await get('?limit=1')).json() as { data: AuditRecord[] };
  assert.equal(newest.data[0]?.action, 'admin.password_set');
  assert.equal((await state.audit.verify()).ok, true);
});
