// Admin API tokens in the dashboard, in a real browser (Debian's chromium
// driven by playwright-core) against the real admin server, signed in with
// a password (set from Node: signing in is dashboard-audit's to check): a
// token is created in the dashboard and shown once, works as
// `Authorization: Bearer` from Node's fetch, its uses page the audit view
// past one page, and revoking it refuses it. With admin.oidc configured the
// login screen offers the sign-in button (sso.system.test.ts runs the whole
// single sign-on flow against a real provider), shows a refused sign-in in
// words and drops ?sso_error from the address. Screenshots (desktop 1280 px,
// phone 390 px) go to test-output/screenshots/.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { startAdminGateway, type AdminGateway } from '../admin/harness.ts';
import { auditViewPage, type AuditRow } from './audit-view-page.ts';
import { pageChecks, watchPage } from './page-checks.ts';
import { settles, textSettles } from './page-settles.ts';
import { useChromium } from '../support/chromium.ts';
import { repositoryRoot } from '../support/repository-root.ts';

const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const PASSWORD = 'portcullis tokens view test 7!';
const TOKEN_NAME = 'ci-deploy';
/** The audit view's page size (src/dashboard/audit-query.ts AUDIT_PAGE_SIZE). */
const PAGE_SIZE = 50;
/** Token uses made from Node: with the records before them, more than one page. */
const TOKEN_USES = 55;
const SSO_LABEL = 'Sign in with Example ID';
const screenshotDir = path.join(repositoryRoot(), 'test-output', 'screenshots');

const chromium = useChromium();
let gateway: AdminGateway;
let context: BrowserContext;
let page: Page;
/** A key made before the tests, for the token to list. */
let keyId = '';
let tokenId = '';
let rawToken = '';
const consoleProblems: string[] = [];
/** The gateway the page is at: the main one, or one of the sign-in screen's. */
let origin = '';
/** The sign-in screen's gateways answer the first /api/session (not signed in) 401 on purpose. */
const expectedFailedLoads = new Set(['401 /api/session']);

before(async () => {
  mkdirSync(screenshotDir, { recursive: true });
  gateway = await startAdminGateway();
  origin = gateway.adminUrl;
  const session = await gateway.signInSettingPassword(PASSWORD);
  const created = await fetch(`${gateway.adminUrl}/api/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: `${session.name}=${session.value}`, 'x-csrf-token': session.csrfToken },
    body: JSON.stringify({ name: 'listed key' }),
  });
  assert.equal(created.status, 201);
  keyId = ((await created.json()) as { record: { id: string } }).record.id;
  context = await chromium.newContext({ viewport: DESKTOP });
  await context.addCookies([{ name: session.name, value: session.value, url: gateway.adminUrl, httpOnly: true, sameSite: 'Strict' }]);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gateway.adminUrl });
  page = await context.newPage();
  await watchPage(page, () => origin, expectedFailedLoads, consoleProblems);
  // The dashboard opens signed in, as the password's admin.
  await page.goto(gateway.adminUrl + '/');
  await textSettles(byTestId('whoami-name'), 'admin');
});

after(async () => {
  await gateway?.close();
});

const byTestId = (id: string) => page.getByTestId(id);
const { screenshot } = pageChecks(() => page, screenshotDir, DESKTOP);
const { auditRows, applyFilters, openSection } = auditViewPage(() => page);

test('a token is created in the dashboard and shown once; the list shows it without the secret', async (t) => {
  await openSection('tokens');
  await byTestId('tokens-empty').waitFor({ state: 'visible' });
  await byTestId('create-token').click();
  await byTestId('token-form-dialog').waitFor({ state: 'visible' });
  // Nothing chosen: refused in the page, naming what to change.
  await byTestId('token-form-scope-read').uncheck();
  await byTestId('token-form-name').fill(TOKEN_NAME);
  await byTestId('token-form-submit').click();
  assert.equal(await byTestId('token-form-error').textContent(), 'Choose what the token may do: read, manage keys, or both.');
  await byTestId('token-form-scope-read').check();
  await byTestId('token-form-scope-keys').check();
  await byTestId('token-form-expiry-7').check();
  await screenshot(t, 'dashboard-token-form-phone', PHONE);
  const created = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/tokens' && r.request().method() === 'POST');
  await byTestId('token-form-submit').click();
  const sent = (await created).request().postDataJSON() as { name: string; scopes: string[]; expiresAt: string };
  assert.deepEqual({ name: sent.name, scopes: sent.scopes }, { name: TOKEN_NAME, scopes: ['read', 'keys'] });
  const days = (Date.parse(sent.expiresAt) - Date.now()) / 86_400_000;
  assert.ok(days > 6.99 && days <= 7, `expires in ${days} days`);

  await byTestId('secret-dialog').waitFor({ state: 'visible' });
  assert.equal(await page.locator('#secret-title').textContent(), 'Copy your new admin API token now');
  assert.equal(await byTestId('secret-warning').textContent(), 'You will not see this token again.');
  assert.equal(await byTestId('secret-first').isVisible(), false, 'no API base URL or chat request for an admin token');
  rawToken = await byTestId('secret-value').inputValue();
  assert.match(rawToken, /^pca_[A-Za-z0-9_-]{20,}$/);
  await byTestId('secret-copy').click();
  await page.getByText('Copied to the clipboard.').waitFor();
  assert.equal(await page.evaluate('navigator.clipboard.readText()'), rawToken);
  await screenshot(t, 'dashboard-token-shown-once-phone', PHONE);
  await byTestId('secret-done').click();
  await byTestId('secret-dialog').waitFor({ state: 'hidden' });
  assert.equal((await page.content()).includes(rawToken), false, 'the token is gone from the DOM');

  const row = byTestId('token-row');
  assert.equal(await row.count(), 1);
  tokenId = (await row.getAttribute('data-token-id')) ?? '';
  assert.match(tokenId, /^tok_/);
  assert.equal(await row.getByTestId('token-name').textContent(), TOKEN_NAME);
  const prefix = ((await row.getByTestId('token-prefix').textContent()) ?? '').replace(/…$/, '');
  assert.ok(prefix.startsWith('pca_') && rawToken.startsWith(prefix) && prefix.length < rawToken.length, `prefix ${prefix}`);
  assert.equal(await row.getByTestId('token-scopes').textContent(), 'Read, Manage keys');
  assert.equal(await row.getByTestId('token-status').textContent(), 'Active');
  assert.equal(await row.getByTestId('token-created-by').textContent(), 'admin (password)');
  await screenshot(t, 'dashboard-tokens-desktop', DESKTOP);
  await screenshot(t, 'dashboard-tokens-phone', PHONE);
});

test('the token works as Authorization: Bearer on /api/keys from Node, without cookie or CSRF token', async () => {
  const response = await fetch(`${gateway.adminUrl}/api/keys`, { headers: { authorization: `Bearer ${rawToken}` } });
  assert.equal(response.status, 200);
  const body = (await response.json()) as { data: Array<{ id: string; status: string }> };
  assert.deepEqual(body.data.map((k) => [k.id, k.status]), [[keyId, 'active']]);
  // Reads are counted per minute (one record at its end); a key change, even one that
  // fails, is a record of its own: these fill more than a page of the audit view.
  for (let i = 0; i < TOKEN_USES; i++) {
    const again = await fetch(`${gateway.adminUrl}/api/keys/key_missing${i}/rotate`, { method: 'POST', headers: { authorization: `Bearer ${rawToken}` } });
    assert.equal(again.status, 404);
    await again.body?.cancel();
  }
});

test('the token\'s uses page the audit view: Older records loads the rest; the actor filter finds them by name', async (t) => {
  // A use is recorded after its answer is sent, so the last few may still be on their way to the chain.
  // The GET's counted record lands when its minute ends: only the key changes' records (with a path) are counted here.
  const recorded = (): Promise<unknown> => page.evaluate(`fetch('/api/audit?action=token.use&limit=100', { cache: 'no-store' }).then((r) => r.json()).then((b) => b.data.filter((r) => (r.detail ?? {}).path !== undefined).length)`);
  await settles(recorded, TOKEN_USES, 'one token.use record per key change');
  await openSection('audit');
  const first = await auditRows();
  assert.equal(first.length, PAGE_SIZE);
  assert.deepEqual(new Set(first.map((r) => `${r.action} ${r.actorName} ${r.actorKind} ${r.target}`)), new Set([`token.use ${TOKEN_NAME} API token ${tokenId}`]));
  await byTestId('audit-older').waitFor({ state: 'visible' });
  const answered = page.waitForResponse((r) => new URL(r.url()).searchParams.has('before'));
  await byTestId('audit-older').click();
  assert.equal(new URL((await answered).url()).searchParams.get('before'), String(first.at(-1)?.seq));
  await byTestId('audit-row').nth(PAGE_SIZE).waitFor();
  const all = await auditRows();
  const uses = all.filter((r) => r.action === 'token.use').length;
  assert.ok(uses === TOKEN_USES || uses === TOKEN_USES + 1, `one record per key change, and the GET's count once its minute ended: ${uses}`);
  assert.equal(new Set(all.map((r) => r.seq)).size, all.length, 'no record twice');
  for (let i = 1; i < all.length; i++) assert.ok((all[i] as AuditRow).seq < (all[i - 1] as AuditRow).seq, 'newest first across pages');
  assert.ok(all.some((r) => r.action === 'token.create' && r.target === tokenId && r.actorName === 'admin'));
  assert.equal(await byTestId('audit-older').isVisible(), false, 'the last page');
  await screenshot(t, 'dashboard-audit-paged-phone', PHONE);

  const filtered = await applyFilters({ actor: TOKEN_NAME, action: 'token.use' });
  assert.equal(filtered.length, PAGE_SIZE);
  assert.equal(await byTestId('audit-older').isVisible(), true);
  // The newest key change's record (the GET's counted record may be newer, once its minute ended).
  const newestChange = await page.evaluate(`fetch('/api/audit?action=token.use&limit=100', { cache: 'no-store' }).then((r) => r.json()).then((b) => b.data.find((r) => (r.detail ?? {}).path !== undefined).seq)`);
  const detail = page.locator(`[data-testid="audit-row"][data-seq="${String(newestChange)}"]`);
  await detail.getByTestId('audit-toggle').click();
  const facts = await page.locator(`#audit-details-${await detail.getAttribute('data-seq')}`).getByTestId('audit-detail').textContent();
  assert.match(facts ?? '', /methodPOST/);
  assert.match(facts ?? '', /path\/api\/keys\/key_missing\d+\/rotate/);
  assert.match(facts ?? '', /status404/);
  assert.equal((await page.content()).includes(rawToken), false, 'the token is not in the audit view');
});

test('revoking the token asks first; then Node\'s request with it is refused', async () => {
  await openSection('tokens');
  const row = byTestId('token-row');
  await row.getByTestId('token-revoke').click();
  assert.equal(await page.locator('#confirm-title').textContent(), `Revoke “${TOKEN_NAME}”?`);
  await byTestId('confirm-ok').click();
  await row.getByTestId('token-status').getByText('Revoked', { exact: true }).waitFor();
  assert.equal(await row.getByTestId('token-revoke').count(), 0, 'a revoked token has no Revoke button');
  const response = await fetch(`${gateway.adminUrl}/api/keys`, { headers: { authorization: `Bearer ${rawToken}` } });
  assert.equal(response.status, 401);
  assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'admin_token_revoked');

  await openSection('audit');
  const revoked = await applyFilters({ action: 'token.revoke' });
  assert.deepEqual(revoked.map((r) => [r.target, r.actorName, r.actorKind]), [[tokenId, 'admin', 'password']]);
});

/** An OpenID provider that is never asked: the sign-in page only reads the label (Part D's tests run the flow). */
function oidcAdmin(passwordLogin: boolean): Record<string, unknown> {
  return {
    admin: {
      oidc: {
        issuer: 'http://127.0.0.1:9/realms/test',
        clientId: 'portcullis-dashboard',
        redirectUrl: 'http://127.0.0.1/sso/callback',
        allowedUsers: ['alice@example.com'],
        label: SSO_LABEL,
        passwordLogin,
      },
    },
  };
}

/**
 * Runs `run` against a gateway of its own configured with admin.oidc, in the
 * same page: its cookies cleared first, as cookies are per host, not per
 * port, and nothing of the main flow's may reach it.
 */
async function withSsoGateway(passwordLogin: boolean, run: (ssoGateway: AdminGateway) => Promise<void>): Promise<void> {
  const ssoGateway = await startAdminGateway({ config: oidcAdmin(passwordLogin) });
  try {
    await context.clearCookies();
    origin = ssoGateway.adminUrl;
    await run(ssoGateway);
  } finally {
    origin = gateway.adminUrl;
    await ssoGateway.close();
  }
}

test('with admin.oidc the login screen offers the sign-in button beside the password', async (t) => {
  await withSsoGateway(true, async (ssoGateway) => {
    await page.goto(ssoGateway.adminUrl + '/');
    const button = byTestId('sso-start');
    await button.waitFor({ state: 'visible' });
    assert.equal(await button.textContent(), SSO_LABEL);
    assert.equal(await button.getAttribute('href'), '/sso/start');
    assert.equal(await byTestId('login-password').isVisible(), true);
    assert.equal(await byTestId('sso-or').isVisible(), true);
    await screenshot(t, 'dashboard-login-sso-desktop', DESKTOP);
    await screenshot(t, 'dashboard-login-sso-phone', PHONE);
    // The button leaves for the provider: /sso/start answers with a redirect (or a refusal), never the page itself.
    const start = await fetch(`${ssoGateway.adminUrl}/sso/start`, { redirect: 'manual' });
    assert.notEqual(start.status, 200);
    await start.body?.cancel();
  });
});

test('a refused sign-in comes back as ?sso_error: said in words, dropped from the address; without password login the form is gone', async (t) => {
  await withSsoGateway(false, async (ssoGateway) => {
    await page.goto(`${ssoGateway.adminUrl}/?sso_error=sso_user_not_allowed`);
    const message = byTestId('sso-error');
    await message.waitFor({ state: 'visible' });
    assert.equal(await message.textContent(), 'Your account signed in at the identity provider but is not allowed to use this dashboard. Ask the gateway’s operator to allow it.');
    assert.equal(page.url(), `${ssoGateway.adminUrl}/`);
    await byTestId('sso-start').waitFor({ state: 'visible' });
    assert.equal(await byTestId('password-block').isVisible(), false);
    assert.equal(await byTestId('sso-or').isVisible(), false);
    await screenshot(t, 'dashboard-login-sso-only-phone', PHONE);
    await page.goto(`${ssoGateway.adminUrl}/?sso_error=something_else`);
    await message.waitFor({ state: 'visible' });
    assert.equal(await message.textContent(), 'Single sign-on failed. Try again.');
  });
});

test('no console errors, page errors or CSP violations along the way', async () => {
  assert.deepEqual(consoleProblems, []);
});
