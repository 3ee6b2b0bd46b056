// The dashboard's audit view in a real browser (Debian's chromium driven by
// playwright-core) against the real admin server: signed in with the
// bootstrap token and a new password, the header says who is signed in; key
// changes made in the dashboard (create, rotate, revoke) appear in the audit
// view, once each, newest first, with what changed; the filters (key, actor,
// action, time) narrow them. Admin API tokens and their uses in the audit
// view: dashboard-tokens.system.test.ts. Screenshots (desktop 1280 px, phone
// 390 px) go to test-output/screenshots/.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { startAdminGateway, type AdminGateway } from '../admin/harness.ts';
import { auditViewPage, type AuditRow } from './audit-view-page.ts';
import { pageChecks, watchPage } from './page-checks.ts';
import { textSettles } from './page-settles.ts';
import { useChromium } from '../support/chromium.ts';
import { repositoryRoot } from '../support/repository-root.ts';

const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const NEW_PASSWORD = 'portcullis audit view test 7!';
const KEY_NAME = 'audited key';
const screenshotDir = path.join(repositoryRoot(), 'test-output', 'screenshots');

const chromium = useChromium();
let gateway: AdminGateway;
let context: BrowserContext;
let page: Page;
let keyId = '';
/** Every raw secret the page showed: none may be in the audit view. */
const secretsShown: string[] = [];
/** When the test began, to the minute (datetime-local's precision), in UTC as the filter reads it. */
let startedMinute = '';
const consoleProblems: string[] = [];
/** The first /api/session (not signed in) answers 401 on purpose. */
const expectedFailedLoads = new Set(['401 /api/session']);

before(async () => {
  mkdirSync(screenshotDir, { recursive: true });
  startedMinute = new Date().toISOString().slice(0, 16);
  gateway = await startAdminGateway();
  context = await chromium.newContext({ viewport: DESKTOP });
  page = await context.newPage();
  await watchPage(page, () => gateway.adminUrl, expectedFailedLoads, consoleProblems);
});

after(async () => {
  await gateway?.close();
});

const byTestId = (id: string) => page.getByTestId(id);
const { screenshot } = pageChecks(() => page, screenshotDir, DESKTOP);
const { auditRows, applyFilters, openSection } = auditViewPage(() => page);

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
  for (const r of mine) assert.deepEqual({ actorName: r.actorName, actorKind: r.actorKind, source: r.source, targetName: r.targetName }, { actorName: 'admin', actorKind: 'password', source: '127.0.0.1', targetName: KEY_NAME });
  // Each time says its zone, to the second.
  for (const time of await byTestId('audit-time').allTextContents()) assert.match(time, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/);
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

test('signing out hides who was signed in', async () => {
  await byTestId('logout').click();
  await byTestId('login-password').waitFor({ state: 'visible' });
  assert.equal(await byTestId('whoami').isVisible(), false);
  assert.equal(await byTestId('whoami-name').textContent(), '');
});

test('no console errors, page errors or CSP violations along the way', async () => {
  assert.deepEqual(consoleProblems, []);
});
