// The dashboard's issue 17 views in a real browser (Debian's chromium driven
// by playwright-core) against the real admin server: key changes made in the
// dashboard (create, rotate, revoke) appear in the audit view, once each,
// newest first, and the filters (key, actor, action, time) narrow them; an
// admin API token is created in the dashboard, shown once, works as
// `Authorization: Bearer` from Node's fetch, its uses page the audit view
// past one page, and revoking it refuses it. With admin.oidc configured the
// login screen offers the sign-in button (Part D's tests run the whole
// single sign-on flow against a real provider), shows a refused sign-in in
// words and drops ?sso_error from the address. Screenshots (desktop 1280 px,
// phone 390 px) go to test-output/screenshots/.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { startAdminGateway, type AdminGateway } from '../admin/harness.ts';
import { pageChecks, watchPage } from './page-checks.ts';
import { settles, textSettles } from './page-settles.ts';
import { useChromium } from '../support/chromium.ts';
import { repositoryRoot } from '../support/repository-root.ts';

const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const NEW_PASSWORD = 'portcullis audit view test 7!';
const KEY_NAME = 'audited key';
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
let keyId = '';
let tokenId = '';
let rawToken = '';
/** Every raw secret the page showed: none may be in the audit view. */
const secretsShown: string[] = [];
/** When the test began, to the minute (datetime-local's precision), in the browser's time zone (UTC). */
let startedMinute = '';
const consoleProblems: string[] = [];
/** The gateway the page is at: the main one, or one of the sign-in screen's. */
let origin = '';
/** The first /api/session (not signed in) answers 401 on purpose. */
const expectedFailedLoads = new Set(['401 /api/session']);

before(async () => {
  mkdirSync(screenshotDir, { recursive: true });
  const now = new Date();
  startedMinute = now.toISOString().slice(0, 16);
  gateway = await startAdminGateway();
  origin = gateway.adminUrl;
  context = await chromium.newContext({ viewport: DESKTOP });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gateway.adminUrl });
  page = await context.newPage();
  await watchPage(page, () => origin, expectedFailedLoads, consoleProblems);
});

after(async () => {
  await gateway?.close();
});

const byTestId = (id: string) => page.getByTestId(id);
const { screenshot } = pageChecks(() => page, screenshotDir, DESKTOP);

interface AuditRow {
  seq: number;
  action: string;
  actorName: string;
  actorKind: string;
  source: string;
  target: string;
}

/** The audit rows on screen, top to bottom. */
async function auditRows(): Promise<AuditRow[]> {
  return (await byTestId('audit-row').evaluateAll((trs) =>
    trs.map((tr) => {
      const text = (id: string): string => tr.querySelector(`[data-testid="${id}"]`)?.textContent ?? '';
      return {
        seq: Number(tr.getAttribute('data-seq')),
        action: tr.getAttribute('data-action') ?? '',
        actorName: text('audit-actor-name'),
        actorKind: text('audit-actor-kind'),
        source: text('audit-source'),
        target: text('audit-target'),
      };
    }),
  )) as AuditRow[];
}

/** Applies the filter form and waits for the answer (the summary or the empty state changes). */
async function applyFilters(fields: Partial<Record<'key' | 'actor' | 'action' | 'since' | 'until', string>>): Promise<AuditRow[]> {
  await byTestId('audit-filter-key').fill(fields.key ?? '');
  await byTestId('audit-filter-actor').fill(fields.actor ?? '');
  await byTestId('audit-filter-action').selectOption(fields.action ?? '');
  await byTestId('audit-filter-since').fill(fields.since ?? '');
  await byTestId('audit-filter-until').fill(fields.until ?? '');
  const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/audit');
  await byTestId('audit-apply').click();
  assert.equal((await answered).status(), 200);
  await auditSettled();
  return auditRows();
}

/**
 * The page has drawn the last answer. (Locators, not waitForFunction: the
 * page's CSP refuses the eval a string predicate needs.)
 */
async function auditSettled(): Promise<void> {
  await page.locator('#audit-table[aria-busy]').waitFor({ state: 'detached' });
}

/** Opens a section from the nav; the audit view is read afresh, so its answer is awaited. */
async function openSection(section: 'tokens' | 'audit'): Promise<void> {
  const answered = section === 'audit' ? page.waitForResponse((r) => new URL(r.url()).pathname === '/api/audit') : null;
  await byTestId(`nav-${section}`).click();
  await page.locator(`[data-testid="nav-${section}"][aria-current="page"]`).waitFor();
  if (answered !== null) {
    assert.equal((await answered).status(), 200);
    await auditSettled();
  }
}

test('sign in with the bootstrap token, set the password; the header says who is signed in', async () => {
  const offered = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/sso');
  await page.goto(gateway.adminUrl + '/');
  await byTestId('login-password').waitFor({ state: 'visible' });
  // Without admin.oidc: the password form only (the page's default, so the answer that could change it is awaited first).
  assert.deepEqual(await (await offered).json(), { password: true, sso: null });
  assert.equal(await byTestId('sso-block').isVisible(), false);
  await byTestId('login-password').fill(gateway.bootstrapToken);
  await byTestId('login-submit').click();
  await byTestId('password-form').waitFor({ state: 'visible' });
  await byTestId('new-password').fill(NEW_PASSWORD);
  await byTestId('confirm-password').fill(NEW_PASSWORD);
  await byTestId('password-submit').click();
  await byTestId('create-key').waitFor({ state: 'visible' });
  // Who it is comes from GET /api/session, asked once the key list is on its way.
  await textSettles(byTestId('whoami-name'), 'admin');
  assert.equal(await byTestId('whoami-kind').textContent(), '(password)');
  assert.equal(await byTestId('whoami').isVisible(), true);
});

test('create, rotate and revoke a key in the dashboard', async () => {
  await byTestId('create-key').click();
  await byTestId('key-form-name').fill(KEY_NAME);
  await byTestId('key-form-submit').click();
  await byTestId('secret-dialog').waitFor({ state: 'visible' });
  secretsShown.push(await byTestId('secret-value').inputValue());
  await byTestId('secret-done').click();
  const row = byTestId('key-row');
  assert.equal(await row.count(), 1);
  keyId = (await row.getAttribute('data-key-id')) ?? '';
  assert.match(keyId, /^key_/);

  await row.getByTestId('key-rotate').click();
  await byTestId('confirm-ok').click();
  await byTestId('secret-dialog').waitFor({ state: 'visible' });
  secretsShown.push(await byTestId('secret-value').inputValue());
  await byTestId('secret-done').click();
  await byTestId('secret-dialog').waitFor({ state: 'hidden' });

  await row.getByTestId('key-revoke').click();
  await byTestId('confirm-ok').click();
  await row.getByTestId('key-status').getByText('Revoked', { exact: true }).waitFor();
  assert.equal(secretsShown.length, 2);
  assert.notEqual(secretsShown[0], secretsShown[1]);
});

test('the audit view lists the three key changes newest first, each once, by the signed-in admin', async (t) => {
  await openSection('audit');
  const rows = await auditRows();
  const mine = rows.filter((r) => r.target === keyId);
  assert.deepEqual(
    mine.map((r) => r.action),
    ['key.revoke', 'key.rotate', 'key.create'],
  );
  for (const r of mine) assert.deepEqual({ actorName: r.actorName, actorKind: r.actorKind, source: r.source }, { actorName: 'admin', actorKind: 'password', source: '127.0.0.1' });
  assert.deepEqual(rows.slice(0, 3).map((r) => r.action), ['key.revoke', 'key.rotate', 'key.create'], 'the newest records are on top');
  for (let i = 1; i < rows.length; i++) assert.ok((rows[i] as AuditRow).seq < (rows[i - 1] as AuditRow).seq, 'newest first');
  // Earlier: the bootstrap sign-in and the first password.
  assert.ok(rows.some((r) => r.action === 'admin.login' && r.actorKind === 'bootstrap token'), JSON.stringify(rows));
  assert.ok(rows.some((r) => r.action === 'admin.password_set'), JSON.stringify(rows));
  assert.equal(await byTestId('audit-older').isVisible(), false, 'one page holds them all');

  await screenshot(t, 'dashboard-audit-desktop', DESKTOP);
  await screenshot(t, 'dashboard-audit-phone', PHONE);
});

test('a record\'s details show the changed fields, and no raw key is anywhere in the view', async (t) => {
  const rotate = page.locator('[data-testid="audit-row"][data-action="key.rotate"]').first();
  const seq = await rotate.getAttribute('data-seq');
  await rotate.getByTestId('audit-toggle').click();
  const details = page.locator(`#audit-details-${seq}`);
  await details.waitFor({ state: 'visible' });
  assert.equal(await rotate.getByTestId('audit-toggle').getAttribute('aria-expanded'), 'true');
  const fields = await details.getByTestId('audit-diff-row').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-field')));
  assert.ok(fields.includes('prefix'), `a rotation changes the prefix: ${JSON.stringify(fields)}`);
  assert.ok(fields.includes('rotatedAt'), `and sets rotatedAt: ${JSON.stringify(fields)}`);
  assert.ok(!fields.includes('name') && !fields.includes('id'), 'unchanged fields are left out');
  const prefixRow = details.locator('[data-testid="audit-diff-row"][data-field="prefix"] code');
  const [was, now] = await prefixRow.allTextContents();
  assert.ok(was !== undefined && now !== undefined && was !== now);
  assert.ok(secretsShown[0]?.startsWith(was) && secretsShown[1]?.startsWith(now), 'before and after are the two keys\' prefixes');

  const revoke = page.locator(`[data-testid="audit-row"][data-action="key.revoke"]`).first();
  await revoke.getByTestId('audit-toggle').click();
  const revokeFields = await page.locator(`#audit-details-${await revoke.getAttribute('data-seq')}`).getByTestId('audit-diff-row').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-field')));
  assert.ok(revokeFields.includes('status') && revokeFields.includes('revokedAt'), JSON.stringify(revokeFields));

  const html = await page.content();
  for (const secret of secretsShown) assert.equal(html.includes(secret), false, 'a raw key in the audit view');
  await screenshot(t, 'dashboard-audit-details-desktop', DESKTOP);
  await screenshot(t, 'dashboard-audit-details-phone', PHONE);
  await rotate.getByTestId('audit-toggle').click();
  await details.waitFor({ state: 'hidden' });
});

test('the filters narrow the list: by key, action, actor and time range; none matching says so', async () => {
  assert.deepEqual((await applyFilters({ key: keyId })).map((r) => r.action), ['key.revoke', 'key.rotate', 'key.create']);
  assert.match((await byTestId('audit-summary').textContent()) ?? '', /^3 records matching the filters, newest first\.$/);
  assert.deepEqual((await applyFilters({ action: 'key.rotate' })).map((r) => [r.action, r.target]), [['key.rotate', keyId]]);
  const byAdmin = await applyFilters({ actor: 'admin', key: keyId });
  assert.equal(byAdmin.length, 3);
  assert.ok((await applyFilters({ actor: 'bootstrap' })).every((r) => r.actorKind === 'bootstrap token'));
  assert.deepEqual((await applyFilters({ key: keyId, since: startedMinute })).map((r) => r.action), ['key.revoke', 'key.rotate', 'key.create']);
  assert.deepEqual(await applyFilters({ key: keyId, until: startedMinute }), [], 'nothing of this key before the test began');
  assert.equal(await byTestId('audit-empty').textContent(), 'No record matches these filters. Widen the time range or clear a filter.');
  assert.equal(await byTestId('audit-table').isVisible(), false);

  // A range that ends before it starts is refused in the page, beside the field, before anything is sent.
  let asked = 0;
  const count = (r: { url(): string }): void => {
    if (new URL(r.url()).pathname === '/api/audit') asked++;
  };
  page.on('request', count);
  await byTestId('audit-filter-since').fill(startedMinute);
  await byTestId('audit-filter-until').fill(startedMinute);
  await byTestId('audit-apply').click();
  assert.equal(await byTestId('audit-filter-error').textContent(), 'The end of the time range must be after its start.');
  assert.equal(await byTestId('audit-filter-until').getAttribute('aria-invalid'), 'true');
  page.off('request', count);
  assert.equal(asked, 0);

  const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/audit');
  await byTestId('audit-clear').click();
  await answered;
  await byTestId('audit-row').nth(3).waitFor();
  assert.equal(await byTestId('audit-filter-error').textContent(), '');
});

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
  assert.deepEqual(body.data.map((k) => [k.id, k.status]), [[keyId, 'revoked']]);
  for (let i = 1; i < TOKEN_USES; i++) {
    const again = await fetch(`${gateway.adminUrl}/api/keys`, { headers: { authorization: `Bearer ${rawToken}` } });
    assert.equal(again.status, 200);
    await again.body?.cancel();
  }
});

test('the token\'s uses page the audit view: Older records loads the rest; the actor filter finds them by name', async (t) => {
  // A use is recorded after its answer is sent, so the last few may still be on their way to the chain.
  const recorded = (): Promise<unknown> => page.evaluate(`fetch('/api/audit?action=token.use&limit=100', { cache: 'no-store' }).then((r) => r.json()).then((b) => b.data.length)`);
  await settles(recorded, TOKEN_USES, 'one token.use record per use');
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
  assert.equal(all.filter((r) => r.action === 'token.use').length, TOKEN_USES, 'one record per use');
  assert.equal(new Set(all.map((r) => r.seq)).size, all.length, 'no record twice');
  for (let i = 1; i < all.length; i++) assert.ok((all[i] as AuditRow).seq < (all[i - 1] as AuditRow).seq, 'newest first across pages');
  assert.ok(all.some((r) => r.action === 'token.create' && r.target === tokenId && r.actorName === 'admin'));
  assert.equal(await byTestId('audit-older').isVisible(), false, 'the last page');
  await screenshot(t, 'dashboard-audit-paged-phone', PHONE);

  const uses = await applyFilters({ actor: TOKEN_NAME, action: 'token.use' });
  assert.equal(uses.length, PAGE_SIZE);
  assert.equal(await byTestId('audit-older').isVisible(), true);
  const detail = page.locator(`[data-testid="audit-row"][data-action="token.use"]`).first();
  await detail.getByTestId('audit-toggle').click();
  const facts = await page.locator(`#audit-details-${await detail.getAttribute('data-seq')}`).getByTestId('audit-detail').textContent();
  assert.match(facts ?? '', /methodGET/);
  assert.match(facts ?? '', /path\/api\/keys/);
  assert.match(facts ?? '', /status200/);
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

test('signing out hides who was signed in', async () => {
  await byTestId('logout').click();
  await byTestId('login-password').waitFor({ state: 'visible' });
  assert.equal(await byTestId('whoami').isVisible(), false);
  assert.equal(await byTestId('whoami-name').textContent(), '');
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
