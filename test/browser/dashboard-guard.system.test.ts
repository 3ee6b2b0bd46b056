// The egress guard's findings in the dashboard, in a real browser (Debian's
// chromium driven by playwright-core) against the real gateway with a guard
// (cards blocked, secrets masked, e-mail logged): requests from Node with
// planted values, then the key list's "Guard findings" column over 30 days and
// 48 hours (a key without findings reads "None"), a key guard with no
// detectors shown as an empty policy, and a key's usage panel with the
// findings' counts, chart and table columns, absent for a key the guard found
// nothing in. The planted values appear nowhere on the page. Screenshots
// (desktop 1280 px, phone 390 px) go to test-output/screenshots/.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { startAdminGateway, type AdminGateway } from '../admin/harness.ts';
import { pageChecks, watchPage } from './page-checks.ts';
import { textSettles } from './page-settles.ts';
import { useChromium } from '../support/chromium.ts';
import { repositoryRoot } from '../support/repository-root.ts';

const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const PASSWORD = 'portcullis guard view test 7!';
const AWS_KEY = 'AKIAQ3EGRTWXZ7PLMN4K';
const CARD = '4111111111111111';
const EMAIL = 'alice.jones@example.org';
const screenshotDir = path.join(repositoryRoot(), 'test-output', 'screenshots');

const chromium = useChromium();
let gateway: AdminGateway;
let context: BrowserContext;
let page: Page;
const consoleProblems: string[] = [];

/** Creates a key through the admin API with the password session; returns its raw key. */
async function createKey(session: { name: string; value: string; csrfToken: string }, body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${gateway.adminUrl}/api/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: `${session.name}=${session.value}`, 'x-csrf-token': session.csrfToken },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as { key: string }).key;
}

async function chat(key: string, content: string): Promise<number> {
  const res = await fetch(`${gateway.apiUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: 'service-chat', messages: [{ role: 'user', content }] }),
  });
  await res.arrayBuffer();
  return res.status;
}

before(async () => {
  mkdirSync(screenshotDir, { recursive: true });
  gateway = await startAdminGateway({ config: { guard: { detectors: { card_number: 'block', secrets: 'mask', email: 'log' } } } });
  const session = await gateway.signInSettingPassword(PASSWORD);
  const finds = await createKey(session, { name: 'support-bot' });
  const quiet = await createKey(session, { name: 'batch-jobs' });
  await createKey(session, { name: 'empty-guard', guard: { detectors: {} } });
  assert.equal(await chat(finds, `refund card ${CARD} for ${EMAIL}`), 400);
  assert.equal(await chat(finds, `deploy with ${AWS_KEY}, again ${AWS_KEY}`), 200);
  assert.equal(await chat(finds, 'a plain question'), 200);
  assert.equal(await chat(quiet, 'nothing to find'), 200);
  await gateway.usageSettled();
  context = await chromium.newContext({ viewport: DESKTOP });
  await context.addCookies([{ name: session.name, value: session.value, url: gateway.adminUrl, httpOnly: true, sameSite: 'Strict' }]);
  page = await context.newPage();
  await watchPage(page, () => gateway.adminUrl, new Set(), consoleProblems);
  await page.goto(gateway.adminUrl + '/');
  await textSettles(page.getByTestId('whoami-name'), 'admin');
});

after(async () => {
  await gateway?.close();
});

const byTestId = (id: string) => page.getByTestId(id);
const keyRow = (name: string) => page.getByTestId('key-row').filter({ has: page.getByTestId('key-name').getByText(name, { exact: true }) });
const { screenshot, viewportShot } = pageChecks(() => page, screenshotDir, DESKTOP);

test('the key list shows each key’s findings over 30 days, then 48 hours; a key with none reads None', async (t) => {
  await keyRow('support-bot').waitFor();
  await byTestId('keys-findings-bar').waitFor({ state: 'visible' });
  assert.equal(await byTestId('keys-findings-head').textContent(), 'Guard findings, 30 days');
  assert.equal(await byTestId('keys-findings-day').getAttribute('aria-pressed'), 'true');
  assert.equal(await page.locator('#keys-caption').textContent(), "API keys, with the egress guard's findings over the last 30 days");
  // The separators are read out (and copied), hidden from sight: one phrase per line.
  assert.equal(await keyRow('support-bot').getByTestId('key-findings').textContent(), '1 blocked · 2 masked · 1 logged');
  assert.equal(await keyRow('batch-jobs').getByTestId('key-findings').textContent(), 'None');
  assert.equal(await keyRow('support-bot').getByTestId('key-findings').getAttribute('data-label'), 'Guard findings');
  // Every row has the column's cell, under the column's head.
  const heads = await page.locator('#keys-table thead th').allTextContents();
  assert.deepEqual(heads.slice(6, 8), ['Limits', 'Guard findings, 30 days']);
  assert.equal(await page.locator('#keys-table tbody tr').count(), await page.locator('#keys-table tbody td[data-testid="key-findings"]').count());
  await screenshot(t, 'dashboard-guard-keys-desktop', DESKTOP);
  await screenshot(t, 'dashboard-guard-keys-phone', PHONE);
  await page.setViewportSize(PHONE);
  await keyRow('support-bot').scrollIntoViewIfNeeded();
  await viewportShot(t, 'dashboard-guard-keys-row-phone');
  await page.setViewportSize(DESKTOP);
  await screenshot(t, 'dashboard-guard-keys-1024', { width: 1024, height: 768 });

  const asked = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/usage' && new URL(r.url()).searchParams.get('granularity') === 'hour');
  await byTestId('keys-findings-hour').click();
  await asked;
  await textSettles(byTestId('keys-findings-head'), 'Guard findings, 48 hours');
  assert.equal(await byTestId('keys-findings-hour').getAttribute('aria-pressed'), 'true');
  assert.equal(await byTestId('keys-findings-day').getAttribute('aria-pressed'), 'false');
  assert.equal(await keyRow('support-bot').getByTestId('key-findings').textContent(), '1 blocked · 2 masked · 1 logged');
  assert.equal(await page.locator('#keys-caption').textContent(), "API keys, with the egress guard's findings over the last 48 hours");
});

test('a key guard with no detectors reads as an empty policy; a key without one has no guard line', async () => {
  assert.equal(await keyRow('empty-guard').getByTestId('key-guard').textContent(), 'Guard: empty policy (no detectors of its own)');
  assert.equal(await keyRow('batch-jobs').getByTestId('key-guard').count(), 0);
});

test('the usage panel of a key with findings: counts in the period, a chart, table columns; none for a key without', async (t) => {
  await keyRow('support-bot').getByTestId('key-usage').click();
  const panel = byTestId('usage-panel');
  await panel.waitFor({ state: 'visible' });
  await page.locator('#usage-panel:not([aria-busy])').waitFor();
  await byTestId('usage-findings').waitFor({ state: 'visible' });
  assert.equal(await byTestId('usage-findings-title').textContent(), 'Guard findings, last 48 hours');
  assert.deepEqual(
    [await byTestId('usage-findings-blocked').textContent(), await byTestId('usage-findings-masked').textContent(), await byTestId('usage-findings-logged').textContent()],
    ['1', '2', '1'],
  );
  const chart = byTestId('usage-chart-findings').locator('svg');
  assert.equal(await chart.getAttribute('aria-label'), 'Guard findings, last 48 hours, per hour');
  assert.match((await chart.locator('desc').textContent()) ?? '', /^4 findings from /);
  await page.locator('.usage-details summary').click();
  const table = byTestId('usage-table');
  assert.deepEqual((await table.locator('thead th').allTextContents()).slice(7), ['Guard blocked', 'Guard masked', 'Guard logged']);
  const busy = table.getByTestId('usage-row');
  assert.equal(await busy.count(), 1);
  assert.deepEqual((await busy.locator('td').allTextContents()).slice(6), ['1', '2', '1']);
  await screenshot(t, 'dashboard-guard-usage-desktop', DESKTOP);
  await screenshot(t, 'dashboard-guard-usage-phone', PHONE);
  // What a phone shows at the findings, and at the table's busy hour.
  await page.setViewportSize(PHONE);
  await byTestId('usage-findings').scrollIntoViewIfNeeded();
  await viewportShot(t, 'dashboard-guard-usage-findings-phone');
  await busy.scrollIntoViewIfNeeded();
  await viewportShot(t, 'dashboard-guard-usage-table-phone');
  await page.setViewportSize(DESKTOP);

  await byTestId('usage-day').click();
  await textSettles(byTestId('usage-findings-title'), 'Guard findings, last 30 days');
  assert.equal(await byTestId('usage-findings-masked').textContent(), '2');

  await keyRow('batch-jobs').getByTestId('key-usage').click();
  await textSettles(page.locator('#usage-title'), 'Usage of “batch-jobs”');
  await page.locator('#usage-panel:not([aria-busy])').waitFor();
  await textSettles(byTestId('usage-total-requests'), '1');
  assert.equal(await byTestId('usage-findings').isVisible(), false, 'no findings ever: no findings section');
  assert.equal(await byTestId('usage-chart-findings').count(), 0);
  assert.equal((await byTestId('usage-table').locator('thead th').allTextContents()).length, 7);
});

test('no planted value on the page, and nothing the page complained of', async () => {
  const html = await page.content();
  for (const value of [AWS_KEY, CARD, EMAIL]) assert.equal(html.includes(value), false, `the page holds ${value.slice(0, 6)}...`);
  assert.deepEqual(consoleProblems, []);
});
