// The admin API's cost side over HTTP (docs/admin-api.md): usage bodies with cost in
// nanos and currency units, the cost budget beside the token budget, limits.costBudget
// on create and patch, and usage stored before cost was recorded. The limiter is a
// recording stand-in, so the budget figures the API shows are exactly what it answered.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setAdminPassword } from '../../src/admin/admin-credentials.ts';
import { createAdminServer, type AdminServer } from '../../src/admin/admin-server.ts';
import { createBootstrapToken } from '../../src/admin/bootstrap-token.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import type { KeyLimits } from '../../src/limits/key-limits.ts';
import type { Limiter } from '../../src/limits/limiter.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createDemoProvider } from '../../src/providers/demo.ts';
import { createAliasTargets } from '../../src/routing/alias-targets.ts';
import { openFileBackend, type FileBackend } from '../../src/state/file-backend.ts';
import type { StateBackend } from '../../src/state/state-backend.ts';
import { createUsageLedger } from '../../src/usage/usage-ledger.ts';
import { request, type RawResponse } from '../gateway/harness.ts';
import { recordingAuditTrail } from './recording-audit-trail.ts';
import { tempDir } from '../support/temp-dir.ts';

const PASSWORD = 'correct horse battery staple';
const NOW = Date.parse('2026-11-22T05:30:00.000Z');
const HOUR = 3_600_000;
let dir: string;
let files: FileBackend;
let admin: AdminServer;
let base: string;
let session: { cookie: string; csrf: string };
/** What the stand-in limiter answers, and the calls it received. */
let budgetAnswer = { tokens: 0, costNanos: 0 };
const budgetCalls: Array<{ keyId: string; limits: KeyLimits; nowMs: number }> = [];

before(async () => {
  dir = tempDir('admin-usage');
  const config = parseConfig({ dataDir: path.join(dir, 'data'), providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo' } } }, null, dir);
  const routes = createAliasTargets(config, new Map([['demo', { provider: createDemoProvider(), maxTokensParam: 'max_tokens' as const, policy: null }]]));
  files = openFileBackend(config.dataDir, { watch: false });
  const limiter: Limiter = {
    admit: (input) => files.limiter.admit(input),
    settle: (input) => files.limiter.settle(input),
    budgetUsed: async (keyId, limits, nowMs) => {
      budgetCalls.push({ keyId, limits, nowMs });
      return budgetAnswer;
    },
    renew: (permit, nowMs) => files.limiter.renew(permit, nowMs),
    leaseMs: files.limiter.leaseMs,
    close: () => files.limiter.close(),
  };
  const state: StateBackend = { kind: 'memory', keys: files.keys, usage: files.usage, limiter, tokens: files.tokens, audit: files.audit, openResponseStore: (...args) => files.openResponseStore(...args), health: () => files.health(), checkWritable: () => files.checkWritable(), close: () => files.close() };
  await setAdminPassword(config.dataDir, PASSWORD, () => new Date(NOW), { scrypt: { cost: 1024, blockSize: 8, parallelization: 1 } });
  admin = createAdminServer({
    view: () => ({ config, targets: routes }),
    state,
    audit: recordingAuditTrail(),
    clock: () => NOW,
    dataDir: config.dataDir,
    limits: config.limits,
    logger: createLogger({ level: 'error', write: () => {} }),
    bootstrap: createBootstrapToken(),
    session: { ttlMs: HOUR, idleMs: 600_000, secureCookies: false },
    dashboardDir: dir,
  });
  await new Promise<void>((resolve) => admin.server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(admin.server.address() as AddressInfo).port}`;
  const login = await call('POST', '/api/login', { password: PASSWORD });
  assert.equal(login.status, 200, login.text);
  session = { cookie: (login.headers['set-cookie'] as string[])[0]?.split(';')[0] as string, csrf: (login.json() as { csrfToken: string }).csrfToken };
});

after(async () => {
  admin.server.closeAllConnections();
  await new Promise<void>((resolve) => admin.server.close(() => resolve()));
  await files.close();
});

function call(method: string, urlPath: string, body?: unknown): Promise<RawResponse> {
  const headers: Record<string, string> = {};
  if (session !== undefined) {
    headers['cookie'] = session.cookie;
    if (method !== 'GET') headers['x-csrf-token'] = session.csrf;
  }
  if (body !== undefined) headers['content-type'] = 'application/json';
  return request(base, method, urlPath, { headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

async function createKey(body: Record<string, unknown>): Promise<{ id: string; limits: unknown }> {
  const res = await call('POST', '/api/keys', body);
  assert.equal(res.status, 201, res.text);
  return (res.json() as { record: { id: string; limits: unknown } }).record;
}

const zero = { requests: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0, errors: 0, costNanos: 0, guardBlocked: 0, guardMasked: 0, guardLogged: 0, cost: 0 };
const NO_LIMITS = { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null, tokenBudget: null, costBudget: null };

test('limits.costBudget: created, shown in key views as stored, patched and cleared; bad values name the field', async () => {
  const record = await createKey({ name: 'priced', limits: { costBudget: { amount: 25.5, period: 'month' } } });
  assert.deepEqual(record.limits, { ...NO_LIMITS, costBudget: { amount: 25.5, period: 'month' } });
  assert.deepEqual(((await call('GET', `/api/keys/${record.id}`)).json() as { limits: unknown }).limits, { ...NO_LIMITS, costBudget: { amount: 25.5, period: 'month' } });
  const listed = ((await call('GET', '/api/keys')).json() as { data: Array<{ id: string; limits: unknown }> }).data.find((k) => k.id === record.id);
  assert.deepEqual(listed?.limits, { ...NO_LIMITS, costBudget: { amount: 25.5, period: 'month' } });

  const patched = await call('PATCH', `/api/keys/${record.id}`, { limits: { tokenBudget: { tokens: 9000, period: 'day' }, costBudget: { amount: 0.000001, period: 'day' } } });
  assert.equal(patched.status, 200, patched.text);
  assert.deepEqual((patched.json() as { limits: unknown }).limits, { ...NO_LIMITS, tokenBudget: { tokens: 9000, period: 'day' }, costBudget: { amount: 0.000001, period: 'day' } });
  const cleared = await call('PATCH', `/api/keys/${record.id}`, { limits: { costBudget: null } });
  assert.deepEqual((cleared.json() as { limits: unknown }).limits, NO_LIMITS);

  for (const [costBudget, param] of [
    [{ amount: 0, period: 'month' }, 'limits.costBudget.amount'],
    [{ amount: 1.0000001, period: 'month' }, 'limits.costBudget.amount'],
    [{ amount: '25.50', period: 'month' }, 'limits.costBudget.amount'],
    [{ amount: 5, period: 'week' }, 'limits.costBudget.period'],
    [{ amount: 5, period: 'day', currency: 'EUR' }, 'limits.costBudget.currency'],
  ] as const) {
    const res = await call('POST', '/api/keys', { name: 'bad', limits: { costBudget } });
    const error = (res.json() as { error: { code: string; param: string } }).error;
    assert.deepEqual({ status: res.status, code: error.code, param: error.param }, { status: 400, code: 'invalid_key_setting', param }, JSON.stringify(costBudget));
  }
});

test('usage: every bucket and the totals carry costNanos and cost; both budgets with what the limiter counts', async () => {
  const record = await createKey({ name: 'metered', limits: { tokenBudget: { tokens: 100_000, period: 'day' }, costBudget: { amount: 25.5, period: 'month' } } });
  const ledger = createUsageLedger();
  ledger.record(record.id, { charged: { promptTokens: 1000, completionTokens: 200, cachedTokens: 100, costNanos: 1_234_567 }, error: false, guard: { blocked: 0, masked: 2, logged: 1 } }, NOW - 2 * HOUR);
  ledger.record(record.id, { charged: { promptTokens: 10, completionTokens: 0, cachedTokens: 0, costNanos: 1 }, error: true }, NOW);
  ledger.record(record.id, { charged: null, error: true, guard: { blocked: 1, masked: 0, logged: 0 } }, NOW);
  await files.usage.add(ledger.drain(), NOW);
  budgetAnswer = { tokens: 41_210, costNanos: 12_750_000_001 };
  budgetCalls.length = 0;

  const hours = await call('GET', `/api/keys/${record.id}/usage`);
  assert.equal(hours.status, 200, hours.text);
  assert.equal(hours.headers['cache-control'], 'no-store');
  const early = { requests: 1, promptTokens: 1000, completionTokens: 200, cachedTokens: 100, errors: 0, costNanos: 1_234_567, guardBlocked: 0, guardMasked: 2, guardLogged: 1, cost: 0.001234567 };
  const late = { requests: 2, promptTokens: 10, completionTokens: 0, cachedTokens: 0, errors: 2, costNanos: 1, guardBlocked: 1, guardMasked: 0, guardLogged: 0, cost: 1e-9 };
  const total = { requests: 3, promptTokens: 1010, completionTokens: 200, cachedTokens: 100, errors: 2, costNanos: 1_234_568, guardBlocked: 1, guardMasked: 2, guardLogged: 1, cost: 0.001234568 };
  const first = Date.parse('2026-11-20T06:00:00.000Z');
  assert.deepEqual(hours.json(), {
    keyId: record.id,
    granularity: 'hour',
    buckets: Array.from({ length: 48 }, (_, i) => ({ start: new Date(first + i * HOUR).toISOString(), ...(i === 45 ? early : i === 47 ? late : zero) })),
    totals: total,
    currency: 'USD',
    budget: { tokens: 100_000, used: 41_210, period: 'day', resetsAt: '2026-11-23T00:00:00.000Z' },
    costBudget: { amount: 25.5, used: 12.750000001, usedNanos: 12_750_000_001, recordedNanos: 1_234_568, period: 'month', resetsAt: '2026-12-01T00:00:00.000Z', currency: 'USD' },
  });
  assert.deepEqual(budgetCalls, [{ keyId: record.id, limits: { ...NO_LIMITS, tokenBudget: { tokens: 100_000, period: 'day' }, costBudget: { amount: 25.5, period: 'month' } }, nowMs: NOW }]);

  const days = (await call('GET', `/api/keys/${record.id}/usage?granularity=day`)).json() as { buckets: unknown[]; totals: unknown };
  assert.equal(days.buckets.length, 30);
  assert.deepEqual(days.buckets.at(-1), { start: '2026-11-22T00:00:00.000Z', ...total });
  assert.deepEqual(days.buckets.at(-2), { start: '2026-11-21T00:00:00.000Z', ...zero });
  assert.deepEqual(days.totals, total);
});

test('usage: a key with a cost budget only has budget null; a key with no budget does not ask the limiter', async () => {
  const costOnly = await createKey({ name: 'cost only', limits: { costBudget: { amount: 3, period: 'day' } } });
  budgetAnswer = { tokens: 0, costNanos: 3_000_000_000 };
  const body = (await call('GET', `/api/keys/${costOnly.id}/usage?granularity=day`)).json() as Record<string, unknown>;
  assert.equal(body['budget'], null);
  assert.deepEqual(body['costBudget'], { amount: 3, used: 3, usedNanos: 3_000_000_000, recordedNanos: 0, period: 'day', resetsAt: '2026-11-23T00:00:00.000Z', currency: 'USD' });

  const free = await createKey({ name: 'free' });
  budgetCalls.length = 0;
  const unlimited = (await call('GET', `/api/keys/${free.id}/usage?granularity=day`)).json() as Record<string, unknown>;
  assert.deepEqual([unlimited['budget'], unlimited['costBudget'], unlimited['currency'], unlimited['totals']], [null, null, 'USD', zero]);
  assert.deepEqual(budgetCalls, []);
});

test('usage stored before cost and the guard findings were recorded shows them as 0', async () => {
  const record = await createKey({ name: 'old usage' });
  const old = { requests: 2, promptTokens: 30, completionTokens: 40, cachedTokens: 0, errors: 0 };
  writeFileSync(path.join(dir, 'data', 'usage.json'), JSON.stringify({ version: 2, keys: { [record.id]: { totals: old, hours: { '2026-11-22T05': old }, days: { '2026-11-22': old } } } }));
  const body = (await call('GET', `/api/keys/${record.id}/usage`)).json() as { buckets: unknown[]; totals: unknown };
  const none = { costNanos: 0, guardBlocked: 0, guardMasked: 0, guardLogged: 0, cost: 0 };
  assert.deepEqual(body.buckets.at(-1), { start: '2026-11-22T05:00:00.000Z', ...old, ...none });
  assert.deepEqual(body.totals, { ...old, ...none });
});

test('GET /api/usage: every key with usage, summed over the period, findings by action; a bad granularity names the parameter', async () => {
  writeFileSync(path.join(dir, 'data', 'usage.json'), JSON.stringify({ version: 2, keys: {} }));
  const a = await createKey({ name: 'finds' });
  const b = await createKey({ name: 'quiet' });
  const ledger = createUsageLedger();
  ledger.record(a.id, { charged: { promptTokens: 5, completionTokens: 1, cachedTokens: 0, costNanos: 20 }, error: true, guard: { blocked: 1, masked: 0, logged: 0 } }, NOW);
  ledger.record(a.id, { charged: null, error: false, guard: { blocked: 0, masked: 3, logged: 2 } }, NOW - 47 * HOUR);
  // Three days ago: in the 30 days, not in the 48 hours.
  ledger.record(a.id, { charged: null, error: false, guard: { blocked: 0, masked: 0, logged: 7 } }, NOW - 72 * HOUR);
  ledger.record(b.id, { charged: null, error: false }, NOW - 72 * HOUR);
  await files.usage.add(ledger.drain(), NOW);
  const [first, second] = [a.id, b.id].sort();
  const rowOf = (id: string | undefined, hours: boolean): unknown =>
    id === a.id
      ? { keyId: a.id, ...zero, requests: hours ? 2 : 3, promptTokens: 5, completionTokens: 1, errors: 1, costNanos: 20, cost: 2e-8, guardBlocked: 1, guardMasked: 3, guardLogged: hours ? 2 : 9 }
      : { keyId: b.id, ...zero, requests: hours ? 0 : 1 };

  const hours = await call('GET', '/api/usage');
  assert.equal(hours.status, 200, hours.text);
  assert.equal(hours.headers['cache-control'], 'no-store');
  assert.deepEqual(hours.json(), { granularity: 'hour', from: '2026-11-20T06:00:00.000Z', data: [rowOf(first, true), rowOf(second, true)], currency: 'USD' });
  const days = await call('GET', '/api/usage?granularity=day');
  assert.deepEqual(days.json(), { granularity: 'day', from: '2026-10-24T00:00:00.000Z', data: [rowOf(first, false), rowOf(second, false)], currency: 'USD' });

  const bad = await call('GET', '/api/usage?granularity=week');
  assert.equal(bad.status, 400);
  assert.deepEqual(bad.json(), { error: { message: "granularity must be 'hour' or 'day'.", type: 'invalid_request_error', param: 'granularity', code: 'invalid_value' } });
});
