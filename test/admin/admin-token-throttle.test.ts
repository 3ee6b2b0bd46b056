// Admin API tokens and the throttles, through the real admin server on
// 127.0.0.1 port 0, each client on its own loopback address (127.0.0.x), the
// throttles on a manual scheduler: a valid token is served whatever the
// password login's throttle says, unknown tokens have their own budget per
// address, and each refusal says what was limited, why, and for how long.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, test } from 'node:test';
import { setAdminPassword } from '../../src/admin/admin-credentials.ts';
import { createAdminServer } from '../../src/admin/admin-server.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { trustedProxies, type TrustedProxies } from '../../src/http/client-address.ts';
import { createLogger } from '../../src/log/logger.ts';
import { openFileBackend, type FileBackend } from '../../src/state/file-backend.ts';
import { request, type RawResponse } from '../gateway/harness.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { freshDir, tempDir } from '../support/temp-dir.ts';
import { recordingAuditTrail, type RecordingAuditTrail } from './recording-audit-trail.ts';

const PASSWORD = 'correct horse battery staple';
const T0 = Date.parse('2026-11-26T12:00:00.000Z');
const DAY = 86_400_000;
const MINUTE = 60_000;

const root = tempDir('admin-token-throttle');
const closers: Array<() => Promise<void>> = [];

after(async () => {
  for (const close of closers) await close();
});

interface Admin {
  scheduler: ManualScheduler;
  /** The access log lines so far, parsed. */
  accessLines(): Record<string, unknown>[];
  audit: RecordingAuditTrail;
  state: FileBackend;
  /** A valid token with the read scope. */
  token: string;
  /** A request from loopback address 127.0.0.`host`. */
  from(host: number, method: string, urlPath: string, headers: Record<string, string>, body?: string): Promise<RawResponse>;
}

/** A fresh admin server (its own throttles, data directory and trail) with the admin password set and one token. */
async function startAdmin(options: { trustedProxies?: TrustedProxies } = {}): Promise<Admin> {
  const dir = freshDir(root);
  const config = parseConfig({ dataDir: path.join(dir, 'data'), providers: { demo: { type: 'demo' } }, aliases: { a: { provider: 'demo' } } }, null, dir);
  const state = openFileBackend(config.dataDir, { watch: false });
  await setAdminPassword(config.dataDir, PASSWORD, () => new Date(T0 - DAY), { scrypt: { cost: 1024, blockSize: 8, parallelization: 1 } });
  const scheduler = new ManualScheduler({ startMs: T0 });
  const audit = recordingAuditTrail();
  const logs: string[] = [];
  const admin = createAdminServer({
    view: () => ({
      config,
      get targets(): never {
        throw new Error('unused');
      },
    }),
    state,
    audit,
    clock: scheduler.now,
    scheduler,
    dataDir: config.dataDir,
    limits: config.limits,
    logger: createLogger({ level: 'info', write: (text) => logs.push(text) }),
    bootstrap: null,
    session: { ttlMs: DAY, idleMs: DAY, secureCookies: false },
    dashboardDir: dir,
    ...options,
  });
  await new Promise<void>((resolve) => admin.server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    admin.server.closeAllConnections();
    await new Promise<void>((resolve) => admin.server.close(() => resolve()));
    await state.close();
  });
  const base = `http://127.0.0.1:${(admin.server.address() as AddressInfo).port}`;
  const { token } = await state.tokens.create({ name: 'ci', scopes: ['read'], expiresAt: new Date(T0 + 30 * DAY).toISOString(), createdBy: 'password:admin' }, T0);
  return {
    scheduler,
    accessLines: () =>
      logs
        .flatMap((text) => text.split('\n'))
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((line) => line['msg'] === 'request'),
    audit,
    state,
    token,
    from(host, method, urlPath, headers, body) {
      const agent = new http.Agent({ localAddress: `127.0.0.${host}` });
      return request(base, method, urlPath, { headers: { host: '127.0.0.1', ...headers }, agent, ...(body === undefined ? {} : { body }) }).finally(() => agent.destroy());
    },
  };
}

function login(admin: Admin, host: number, password: string): Promise<RawResponse> {
  return admin.from(host, 'POST', '/api/login', { 'content-type': 'application/json' }, JSON.stringify({ password }));
}

function withToken(admin: Admin, host: number, credential: string): Promise<RawResponse> {
  return admin.from(host, 'GET', '/api/keys', { authorization: `Bearer ${credential}` });
}

/** A well-formed token no gateway issued, different for each `i`. */
function junkToken(i: number): string {
  return `pca_${String(i).padStart(4, '0')}${'Q'.repeat(38)}A`;
}

/** The status, Retry-After and error envelope of an answer. */
function refusal(res: RawResponse): unknown {
  return { status: res.status, retryAfter: res.headers['retry-after'], ...(res.json() as { error: object }).error };
}

function passwordRefusal(retryAfter: number, limit: 'client' | 'global'): unknown {
  const message =
    limit === 'global'
      ? `Too many failed password logins from all addresses together (100 within 15 minutes): password logins are refused for everyone for ${retryAfter} s. Admin API tokens and single sign-on are not affected.`
      : `Too many failed password logins from this address (5 within 15 minutes): password logins from it are refused for ${retryAfter} s. Admin API tokens are not affected.`;
  return { status: 429, retryAfter: String(retryAfter), message, type: 'rate_limit_error', param: null, code: 'login_rate_limited' };
}

function tokenRefusal(retryAfter: number): unknown {
  return {
    status: 429,
    retryAfter: String(retryAfter),
    message: `Too many unknown admin API tokens from this address (10 within 60 s): unknown tokens from it are refused for ${retryAfter} s. Tokens this gateway issued are still accepted from it: send the whole pca_... token as it was printed when it was created.`,
    type: 'rate_limit_error',
    param: null,
    code: 'admin_token_rate_limited',
  };
}

test('100 wrong passwords from 20 addresses trip the global password ceiling; a valid token from a fresh address (or a locked one) is still served', async () => {
  const admin = await startAdmin();
  for (let host = 2; host < 22; host++) {
    for (let i = 0; i < 5; i++) assert.equal((await login(admin, host, `wrong guess ${host}.${i}`)).status, 401);
  }
  // The password login: refused for everyone until the window of the first failure ends.
  assert.deepEqual(refusal(await login(admin, 30, PASSWORD)), passwordRefusal(900, 'global'));
  // Tokens are judged on their own merits, from a fresh address and from one the password login locked.
  for (const host of [31, 2]) {
    const served = await withToken(admin, host, admin.token);
    assert.equal(served.status, 200, served.text);
    assert.deepEqual(served.json(), { object: 'list', data: [] });
  }
  // An unknown token is answered as one (401), not as the password login's lockout.
  assert.equal((refusal(await withToken(admin, 31, junkToken(1))) as { code: string }).code, 'admin_token_invalid');

  await admin.scheduler.advance(15 * MINUTE - 1);
  assert.deepEqual(refusal(await login(admin, 30, PASSWORD)), passwordRefusal(1, 'global'));
  await admin.scheduler.advance(1);
  assert.equal((await login(admin, 30, PASSWORD)).status, 200);
});

test('a wrong password\'s address is refused after 5 within 15 minutes, for 15 minutes, with its own message', async () => {
  const admin = await startAdmin();
  for (let i = 0; i < 5; i++) assert.equal((await login(admin, 50, `wrong guess ${i}`)).status, 401);
  assert.deepEqual(refusal(await login(admin, 50, PASSWORD)), passwordRefusal(900, 'client'));
  await admin.scheduler.advance(MINUTE);
  assert.deepEqual(refusal(await login(admin, 50, PASSWORD)), passwordRefusal(840, 'client'));
  assert.equal((await login(admin, 51, PASSWORD)).status, 200, 'another address logs in');
  assert.equal((await withToken(admin, 50, admin.token)).status, 200, 'the locked address\'s token is served');
  await admin.scheduler.advance(14 * MINUTE);
  assert.equal((await login(admin, 50, PASSWORD)).status, 200);
});

test('5 junk Bearer tokens from one address lock it out of neither its valid token nor the password login', async () => {
  const admin = await startAdmin();
  for (let i = 0; i < 5; i++) assert.equal((refusal(await withToken(admin, 40, junkToken(i))) as { code: string }).code, 'admin_token_invalid');
  const served = await withToken(admin, 40, admin.token);
  assert.equal(served.status, 200, served.text);
  assert.equal((await login(admin, 40, PASSWORD)).status, 200);
});

test('unknown tokens beyond 10 a minute from one address are 429 admin_token_rate_limited for a minute, unrecorded; valid and revoked tokens are judged on their merits', async () => {
  const admin = await startAdmin();
  const revoked = await admin.state.tokens.create({ name: 'old', scopes: ['read'], expiresAt: new Date(T0 + DAY).toISOString(), createdBy: 'password:admin' }, T0);
  await admin.state.tokens.revoke(revoked.record.id, T0);
  for (let i = 0; i < 10; i++) assert.equal((await withToken(admin, 60, junkToken(i))).status, 401);
  assert.equal(admin.audit.events.length, 10);
  await admin.scheduler.advance(20_000);
  // Malformed credentials count as unknown tokens too.
  for (const credential of [junkToken(10), 'not-even-a-token', admin.token.slice(0, -1)]) {
    assert.deepEqual(refusal(await withToken(admin, 60, credential)), tokenRefusal(40));
  }
  assert.equal(admin.audit.events.length, 10, 'the 429s leave no audit record');
  assert.deepEqual(
    admin.accessLines().slice(-3).map((l) => [l['status'], l['adminToken'], l['client']]),
    Array(3).fill([429, 'admin_token_rate_limited', '127.0.0.60']),
    'each is in the access log, with what refused it',
  );
  assert.equal((await withToken(admin, 60, admin.token)).status, 200);
  assert.equal((refusal(await withToken(admin, 60, revoked.token)) as { code: string }).code, 'admin_token_revoked');
  assert.equal((refusal(await withToken(admin, 61, junkToken(11))) as { code: string }).code, 'admin_token_invalid', 'another address has its own budget');
  assert.equal((await login(admin, 60, 'wrong guess')).status, 401, 'the password login has its own budget');

  await admin.scheduler.advance(40_000 - 1);
  assert.deepEqual(refusal(await withToken(admin, 60, junkToken(12))), tokenRefusal(1));
  await admin.scheduler.advance(1);
  assert.equal((refusal(await withToken(admin, 60, junkToken(13))) as { code: string }).code, 'admin_token_invalid');
});

/** Through the trusted proxy 127.0.0.9, from `client` as X-Forwarded-For names it. */
function forwarded(admin: Admin, client: string, method: string, urlPath: string, headers: Record<string, string>, body?: string): Promise<RawResponse> {
  return admin.from(9, method, urlPath, { 'x-forwarded-for': client, ...headers }, body);
}

test('the throttles count an IPv6 client by its /56, as the connection share does: two addresses in one /56 share a budget, another /56 has its own', async () => {
  const admin = await startAdmin({ trustedProxies: trustedProxies(['127.0.0.9']) });
  const token = (client: string, i: number) => forwarded(admin, client, 'GET', '/api/keys', { authorization: `Bearer ${junkToken(i)}` });
  for (let i = 0; i < 10; i++) assert.equal((await token(`2001:db8:1:2${i}0::${i + 1}`, i)).status, 401);
  assert.deepEqual(refusal(await token('2001:db8:1:2ff:ffff:ffff:ffff:ffff', 10)), tokenRefusal(60));
  assert.deepEqual(refusal(await token('[2001:DB8:1:200::7]:443', 11)), tokenRefusal(60));
  assert.equal((await token('2001:db8:1:300::1', 12)).status, 401, 'the next /56 has its own budget');
  assert.deepEqual(
    admin.accessLines().slice(-3).map((l) => [l['status'], l['client']]),
    [[429, '2001:db8:1:2ff:ffff:ffff:ffff:ffff'], [429, '2001:DB8:1:200::7'], [401, '2001:db8:1:300::1']],
    'the log names each client by its own address',
  );

  const login = (client: string, password: string) => forwarded(admin, client, 'POST', '/api/login', { 'content-type': 'application/json' }, JSON.stringify({ password }));
  for (let i = 0; i < 5; i++) assert.equal((await login(`2001:db8:5:${i}::1`, `wrong ${i}`)).status, 401);
  assert.deepEqual(refusal(await login('2001:db8:5:ff::9', PASSWORD)), passwordRefusal(900, 'client'));
  assert.equal((await login('2001:db8:5:100::1', PASSWORD)).status, 200, 'the next /56 logs in');
});

test('the throttles count an IPv4 client by its address, and an IPv4-mapped IPv6 address as that IPv4 address', async () => {
  const admin = await startAdmin({ trustedProxies: trustedProxies(['127.0.0.9']) });
  const token = (client: string, i: number) => forwarded(admin, client, 'GET', '/api/keys', { authorization: `Bearer ${junkToken(i)}` });
  for (let i = 0; i < 5; i++) assert.equal((await token('198.51.100.7', i)).status, 401);
  for (let i = 5; i < 10; i++) assert.equal((await token('::ffff:198.51.100.7', i)).status, 401);
  assert.deepEqual(refusal(await token('198.51.100.7', 10)), tokenRefusal(60));
  assert.deepEqual(refusal(await token('::ffff:c633:6407', 11)), tokenRefusal(60));
  assert.equal((await token('198.51.100.8', 12)).status, 401, 'the next address has its own budget');
});
