// Single sign-on in a real browser (Debian's chromium driven by
// playwright-core) against a real OpenID provider (oidc-provider, started by
// the test on 127.0.0.1; the dashboard is at localhost, another site): sign in
// at the provider, land in the dashboard signed in, use the admin API, see
// the audit record. Then each refusal the issue names: wrong issuer, wrong
// audience, a replayed callback, an expired ID token (the gateway's clock
// moved past exp), a user outside allowedUsers/allowedGroups (an unverified
// email that would otherwise match), a callback without the binding cookie.
// Each ends in no session, /?sso_error=<code>, and one admin.login_failed.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { BrowserContext, Cookie, Page } from 'playwright-core';
import type { AuditEvent } from '../../src/audit/audit-event.ts';
import { startSsoGateway, CLIENT_SECRET, PUBLIC_CLIENT_ID, type SsoGateway } from '../oidc/sso-harness.ts';
import { useChromium } from '../support/chromium.ts';

/** The ID tokens of oidc-provider live an hour; two hours on, one has expired whatever the skew. */
const PAST_EXP_MS = 2 * 60 * 60 * 1000;

// Page globals for the functions run inside the page (the tests compile without the DOM lib).
declare function fetch(url: string, init?: Record<string, unknown>): Promise<{ status: number; json(): Promise<unknown> }>;

const chromium = useChromium();
let sso: SsoGateway;
/** One profile for the file, emptied before each test (cookies are all the state the flow keeps): a new context per test cost twice the browser's CPU. */
let context: BrowserContext;
let page: Page;
/** This test's answers of /sso/start and /sso/callback: the URL asked and where it sent the browser. */
let ssoAnswers: Array<{ url: string; location: string }> = [];

before(async () => {
  sso = await startSsoGateway();
  context = await chromium.newContext();
  page = await context.newPage();
  page.on('response', (response) => {
    const { pathname } = new URL(response.url());
    const location = response.headers()['location'];
    if ((pathname === '/sso/start' || pathname === '/sso/callback') && location !== undefined) ssoAnswers.push({ url: response.url(), location });
  });
});

after(async () => {
  await sso?.close();
});

beforeEach(async () => {
  sso.setOidc(sso.baseOidc);
  sso.setClockOffset(0);
  // No provider session, no gateway cookies, nothing of the last test's page left running.
  await page.goto('about:blank');
  await context.clearCookies();
  ssoAnswers = [];
});

/**
 * The last place /sso/start or /sso/callback sent the browser within the
 * dashboard ('/' or '/?sso_error=...'): the dashboard drops ?sso_error from
 * the address bar, so the redirect is what says it.
 */
function landedAt(): string {
  return `${sso.adminUrl}${ssoAnswers.filter((a) => a.location.startsWith('/')).at(-1)?.location ?? '(no redirect)'}`;
}

/** The browser at the provider's login form, filled in for `login`, its submit not yet pressed. */
async function atLoginForm(login: string): Promise<void> {
  await page.goto(`${sso.adminUrl}/sso/start`, { waitUntil: 'commit' });
  assert.ok(page.url().startsWith(`${sso.provider.issuer}/interaction/`), `at the provider's login form, not ${page.url()}`);
  await page.locator('input[name=login]').fill(login);
  await page.locator('input[name=password]').fill('any password');
}

/** Submits the provider's login form; resolves once the browser is back on the dashboard's origin. */
async function submitLogin(): Promise<void> {
  await Promise.all([page.waitForURL((url) => url.origin === sso.adminUrl, { waitUntil: 'commit' }), page.locator('button[type=submit]').click()]);
}

/** From /sso/start through the provider's login form and back to the dashboard (any query). */
async function signIn(login: string): Promise<void> {
  await atLoginForm(login);
  await submitLogin();
}

/** Bob's session cookie from the first test that signed him in, for tests that check what a session does rather than how it began. */
let bobsSession: Cookie[] | null = null;

/** The page on the dashboard with an SSO session of bob's: the one kept, or one made now. */
async function signedInAsBob(): Promise<void> {
  if (bobsSession === null) {
    await signIn('bob');
    assert.equal(landedAt(), `${sso.adminUrl}/`);
    bobsSession = await context.cookies(sso.adminUrl);
    return;
  }
  await context.addCookies(bobsSession);
  await page.goto(`${sso.adminUrl}/`, { waitUntil: 'commit' });
}

async function apiStatus(path: string): Promise<{ status: number; body: unknown }> {
  return page.evaluate(async (p) => {
    const response = await fetch(p);
    return { status: response.status, body: await response.json().catch(() => null) };
  }, path);
}

function loginEvents(): AuditEvent[] {
  return sso.audit.events.filter((e) => e.action === 'admin.login' || e.action === 'admin.login_failed');
}

/** The refusal ends on /?sso_error=<code>, with no session and exactly one new admin.login_failed of `reason`. */
async function assertRefused(before: number, code: string, reason: string, actor: AuditEvent['actor'] = { kind: 'anonymous', id: '-' }): Promise<void> {
  assert.equal(landedAt(), `${sso.adminUrl}/?sso_error=${code}`);
  const session = await apiStatus('/api/session');
  assert.equal(session.status, 401);
  assert.equal((session.body as { error: { code: string } }).error.code, 'session_required');
  const added = loginEvents().slice(before);
  assert.equal(added.length, 1, JSON.stringify(added));
  assert.deepEqual(added[0], {
    actor,
    source: '127.0.0.1',
    action: 'admin.login_failed',
    target: 'admin',
    before: null,
    after: null,
    detail: { reason, issuer: sso.provider.issuer },
  });
}

describe('single sign-on', () => {
  test('GET /api/sso offers the button and the password', async () => {
    await page.goto(`${sso.adminUrl}/`, { waitUntil: 'commit' });
    assert.deepEqual(await apiStatus('/api/sso'), { status: 200, body: { password: true, sso: { label: 'Sign in with Example ID' } } });
  });

  test('sign in at the provider, land in the dashboard signed in, use the admin API; one admin.login record', async () => {
    const before = loginEvents().length;
    await signIn('bob');
    assert.equal(landedAt(), `${sso.adminUrl}/`);
    // The dashboard, after the cross-site callback, found the (SameSite=Strict) session: the keys view shows.
    await page.getByTestId('create-key').waitFor({ state: 'visible' });
    const session = await apiStatus('/api/session');
    assert.equal(session.status, 200);
    assert.deepEqual((session.body as { actor: unknown }).actor, { kind: 'sso', id: 'bob', name: 'bob' });
    assert.equal((session.body as { mustSetPassword: boolean }).mustSetPassword, false);
    assert.deepEqual(await apiStatus('/api/keys'), { status: 200, body: { object: 'list', data: [] } });
    const cookies = await context.cookies(sso.adminUrl);
    const names = cookies.map((c) => `${c.name} ${c.sameSite} ${c.httpOnly}`).sort();
    assert.deepEqual(names, ['portcullis_session Strict true'], 'the binding cookie is gone, the session cookie is Strict and HttpOnly');
    assert.deepEqual(loginEvents().slice(before), [
      {
        actor: { kind: 'sso', id: 'bob', issuer: sso.provider.issuer, name: 'bob' },
        source: '127.0.0.1',
        action: 'admin.login',
        target: 'admin',
        before: null,
        after: null,
        detail: { issuer: sso.provider.issuer },
      },
    ]);
    // What the gateway asked of the provider: discovery, the token endpoint, the keys.
    for (const request of ['GET /.well-known/openid-configuration', 'POST /token', 'GET /jwks']) assert.ok(sso.provider.requests.includes(request), request);
    bobsSession = cookies;
  });

  test('a verified email in allowedUsers signs in (its domain compared without A-Z case, the local part exactly); a public client with PKCE only and ES256 tokens works', async () => {
    sso.setOidc({ ...sso.baseOidc, clientId: PUBLIC_CLIENT_ID, clientSecretFile: undefined });
    await signIn('alice');
    assert.equal(landedAt(), `${sso.adminUrl}/`);
    const session = await apiStatus('/api/session');
    assert.deepEqual((session.body as { actor: unknown }).actor, { kind: 'sso', id: 'alice', name: 'alice' });
  });

  test('a user in neither allow-list is refused: sso_user_not_allowed, the sso actor recorded (an unverified email does not count)', async () => {
    const before = loginEvents().length;
    await signIn('mallory');
    await assertRefused(before, 'sso_user_not_allowed', 'user_not_allowed', { kind: 'sso', id: 'mallory', issuer: sso.provider.issuer, name: 'mallory' });
  });

  test('wrong audience: the gateway accepts only an audience the client is not: sso_id_token_invalid', async () => {
    sso.setOidc({ ...sso.baseOidc, audiences: ['someone-else'] });
    const before = loginEvents().length;
    await signIn('bob');
    await assertRefused(before, 'sso_id_token_invalid', 'wrong_audience');
  });

  test('expired ID token: the gateway\'s clock two hours on: sso_id_token_invalid', async () => {
    sso.setClockOffset(PAST_EXP_MS);
    const before = loginEvents().length;
    await signIn('bob');
    await assertRefused(before, 'sso_id_token_invalid', 'expired');
  });

  test('a replayed callback (the same URL twice) is refused the second time: sso_state_invalid', async () => {
    const before = loginEvents().length;
    await signIn('bob');
    assert.equal(landedAt(), `${sso.adminUrl}/`);
    const callback = ssoAnswers.find((a) => a.url.startsWith(`${sso.adminUrl}/sso/callback?`))?.url ?? '';
    assert.match(callback, /[?&]code=.+&?/);
    // The same browser, still holding the binding cookie's successor: logged out first, so only the replay could sign in.
    await page.evaluate(async () => {
      const session = (await (await fetch('/api/session')).json()) as { csrfToken: string };
      await fetch('/api/logout', { method: 'POST', headers: { 'x-csrf-token': session.csrfToken } });
    });
    await page.goto(callback);
    assert.equal(loginEvents()[before]?.action, 'admin.login');
    await assertRefused(before + 1, 'sso_state_invalid', 'state_reused');
    // Nothing secret of the exchange reached the log or the audit trail.
    const url = new URL(callback);
    const written = JSON.stringify([sso.logs, sso.audit.events]);
    for (const name of ['code', 'state']) {
      const value = url.searchParams.get(name) ?? '';
      assert.ok(value.length >= 20, name);
      assert.ok(!written.includes(value), `the ${name} was written`);
    }
    assert.ok(!written.includes(CLIENT_SECRET));
  });

  test('a callback without the binding cookie (the login begun in another browser) is refused: sso_state_invalid', async () => {
    await atLoginForm('bob');
    assert.deepEqual((await context.cookies(sso.adminUrl)).map((c) => `${c.name} ${c.sameSite} ${c.httpOnly}`), ['portcullis_sso Lax true']);
    // The provider will send this browser back with a valid state and code, but without the cookie of the browser that began.
    await context.clearCookies({ name: 'portcullis_sso' });
    const before = loginEvents().length;
    await submitLogin();
    await assertRefused(before, 'sso_state_invalid', 'binding_missing');
  });

  test('passwordLogin false: /api/sso says so, POST /api/login is refused; an SSO session (no admin password set) works until SSO is switched off', async () => {
    sso.setOidc({ ...sso.baseOidc, passwordLogin: false });
    await signedInAsBob();
    const session = (await apiStatus('/api/session')).body as { actor: unknown; mustSetPassword: boolean };
    assert.deepEqual([session.actor, session.mustSetPassword], [{ kind: 'sso', id: 'bob', name: 'bob' }, false]);
    assert.deepEqual(await apiStatus('/api/sso'), { status: 200, body: { password: false, sso: { label: 'Sign in with Example ID' } } });
    const login = await page.evaluate(async () => {
      const response = await fetch('/api/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: 'whatever it is' }) });
      return { status: response.status, body: await response.json() };
    });
    assert.equal(login.status, 403);
    assert.equal((login.body as { error: { code: string } }).error.code, 'password_login_disabled');
    const setPassword = await page.evaluate(async () => {
      const session = (await (await fetch('/api/session')).json()) as { csrfToken: string };
      const body = JSON.stringify({ password: 'a long enough password 1!' });
      const response = await fetch('/api/password', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken }, body });
      return { status: response.status, body: await response.json() };
    });
    assert.equal(setPassword.status, 403);
    assert.equal((setPassword.body as { error: { code: string } }).error.code, 'password_set_refused');
    assert.equal((await apiStatus('/api/keys')).status, 200);
    // A reload without admin.oidc ends SSO sessions at their next request.
    sso.setOidc(null);
    const after = await apiStatus('/api/keys');
    assert.equal(after.status, 401);
    assert.equal((after.body as { error: { code: string } }).error.code, 'session_required');
    assert.deepEqual(await apiStatus('/api/sso'), { status: 200, body: { password: true, sso: null } });
    const start = await page.goto(`${sso.adminUrl}/sso/start`);
    assert.equal(start?.status(), 404);
  });

  test('a session opened with the bootstrap token ends when a reload sets passwordLogin false', async () => {
    await page.goto(`${sso.adminUrl}/`, { waitUntil: 'commit' });
    const login = await page.evaluate(async (token) => {
      const response = await fetch('/api/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: token }) });
      return response.status;
    }, sso.bootstrapToken);
    assert.equal(login, 200);
    const session = await apiStatus('/api/session');
    assert.deepEqual((session.body as { actor: unknown }).actor, { kind: 'bootstrap', id: 'bootstrap' });
    sso.setOidc({ ...sso.baseOidc, passwordLogin: false });
    const after = await apiStatus('/api/session');
    assert.equal(after.status, 401);
    assert.equal((after.body as { error: { code: string } }).error.code, 'session_required');
  });

  test('wrong issuer: configured with a different issuer string than the provider\'s: refused at discovery, no redirect to the provider', async () => {
    const wrong = `${sso.provider.issuer}/`;
    sso.setOidc({ ...sso.baseOidc, issuer: wrong });
    const before = loginEvents().length;
    await page.goto(`${sso.adminUrl}/sso/start`, { waitUntil: 'commit' });
    assert.equal(landedAt(), `${sso.adminUrl}/?sso_error=sso_provider_error`);
    const added = loginEvents().slice(before);
    assert.deepEqual(added, [
      { actor: { kind: 'anonymous', id: '-' }, source: '127.0.0.1', action: 'admin.login_failed', target: 'admin', before: null, after: null, detail: { reason: 'wrong_issuer', issuer: wrong } },
    ]);
    assert.equal((await apiStatus('/api/session')).status, 401);
  });
});
