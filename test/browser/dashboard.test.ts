// The dashboard in a real browser (Debian's chromium driven by playwright-core)
// against the real gateway: sign in with the bootstrap token, set a password,
// create a key and read it from the shown-once dialog, use it through the
// `openai` SDK, see its usage counted, revoke it, see the SDK refused. Along
// the way: no console errors, no CSP violations, the raw key gone from the
// DOM once the dialog closes. Screenshots go to test-output/screenshots/.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, test, type TestContext } from 'node:test';
import OpenAI from 'openai';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startAdminGateway } from '../admin/harness.ts';
import { repositoryRoot } from '../repository-root.ts';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 375, height: 812 };
const NEW_PASSWORD = 'portcullis dashboard test 7!';
/** Markup in a key name must show as text, never become elements. */
const KEY_NAME = 'browser <b>test</b> & co';
const PROMPT = 'Hello from the dashboard test';
/** Usage may be recorded a moment after the response; the page is asked again at most this often. */
const USAGE_POLLS = 60;
const USAGE_POLL_MS = 250;

/** Records CSP violations before any page script runs (init scripts are not subject to the page's CSP). */
const RECORD_CSP_VIOLATIONS = `
  window.__cspViolations = [];
  document.addEventListener('securitypolicyviolation', (e) => {
    window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI);
  });
`;


// Page globals for the functions run inside the page (the tests compile without the DOM lib).
declare function getComputedStyle(element: unknown): { lineHeight: string };

const screenshotDir = path.join(repositoryRoot(), 'test-output', 'screenshots');

let gateway: Awaited<ReturnType<typeof startAdminGateway>>;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let rawKey = '';
let keyPrefix = '';
let promptTokens = 0;
const consoleProblems: string[] = [];
/** Failed loads the flow causes on purpose: the first /api/session (not signed in) and one wrong password. */
const expectedFailedLoads = new Set(['401 /api/session', '401 /api/login']);

before(async () => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium package (.ci/run does)`);
  mkdirSync(screenshotDir, { recursive: true });
  gateway = await startAdminGateway();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  context = await browser.newContext({ viewport: DESKTOP, locale: 'en-US', timezoneId: 'UTC' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gateway.adminUrl });
  page = await context.newPage();
  await page.addInitScript({ content: RECORD_CSP_VIOLATIONS });
  page.on('pageerror', (error) => consoleProblems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    const text = message.text();
    if (/content security policy/i.test(text)) consoleProblems.push(`csp: ${text}`);
    if (message.type() !== 'error') return;
    const failedLoad = /^Failed to load resource: the server responded with a status of (\d{3})/.exec(text);
    if (failedLoad !== null) {
      const where = new URL(message.location().url);
      if (where.origin === gateway.adminUrl && expectedFailedLoads.has(`${failedLoad[1]} ${where.pathname}`)) return;
    }
    consoleProblems.push(`console error: ${text} (${message.location().url})`);
  });
});

after(async () => {
  try {
    await browser?.close();
  } finally {
    await gateway?.close();
  }
});

/** Saves a full-page screenshot at this width; nothing may stick out sideways (no horizontal scrolling). */
async function screenshot(t: TestContext, name: string, viewport: { width: number; height: number }): Promise<void> {
  await page.setViewportSize(viewport);
  const [contentWidth, pageWidth] = (await page.evaluate(`[document.body.scrollWidth, document.body.clientWidth]`)) as [number, number];
  assert.ok(contentWidth <= pageWidth, `${name}: content ${contentWidth} px wide on a ${pageWidth} px page`);
  const file = path.join(screenshotDir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  t.diagnostic(`screenshot: ${file}`);
  await page.setViewportSize(DESKTOP);
}

const byTestId = (id: string) => page.getByTestId(id);

test('the page is served with the strict CSP and asks to sign in', async () => {
  const response = await page.goto(gateway.adminUrl + '/');
  assert.equal(response?.status(), 200);
  assert.equal(response?.headers()['content-security-policy'], CSP);
  await byTestId('login-password').waitFor({ state: 'visible' });
  assert.equal(await page.title(), 'Portcullis admin');
  assert.equal(await byTestId('create-key').isVisible(), false);
});

test('a wrong password is refused with a readable message', async () => {
  await byTestId('login-password').fill('not the token');
  await byTestId('login-submit').click();
  await page.getByText('That password or token is not right.').waitFor();
  assert.equal(await byTestId('login-error').textContent(), 'That password or token is not right.');
});

test('the bootstrap token signs in once and asks for a password, then the key list opens', async () => {
  await byTestId('login-password').fill(gateway.bootstrapToken);
  await byTestId('login-submit').click();
  await byTestId('password-form').waitFor({ state: 'visible' });
  await byTestId('new-password').fill(NEW_PASSWORD);
  await byTestId('confirm-password').fill(NEW_PASSWORD);
  await byTestId('password-submit').click();
  await byTestId('create-key').waitFor({ state: 'visible' });
  await byTestId('keys-empty').waitFor({ state: 'visible' });
  assert.equal(await byTestId('key-row').count(), 0);
});

test('creating a key shows the raw key once, with a copy button and the warning', async (t) => {
  await byTestId('create-key').click();
  await byTestId('key-form-dialog').waitFor({ state: 'visible' });
  await byTestId('key-form-name').fill(KEY_NAME);
  await byTestId('key-form-all-aliases').uncheck();
  await byTestId('alias-choice-service-chat').check();
  await byTestId('key-form-rpm').fill('600');
  await byTestId('key-form-submit').click();

  const dialog = byTestId('secret-dialog');
  await dialog.waitFor({ state: 'visible' });
  rawKey = await byTestId('secret-value').inputValue();
  assert.match(rawKey, /^pcl_[A-Za-z0-9_-]{20,}$/);
  assert.equal(await byTestId('secret-warning').textContent(), 'You will not see this key again.');
  assert.equal(await byTestId('secret-value').getAttribute('readonly'), '');

  await byTestId('secret-copy').click();
  await page.getByText('Copied to the clipboard.').waitFor();
  assert.equal(await page.evaluate('navigator.clipboard.readText()'), rawKey);

  await screenshot(t, 'dashboard-shown-once-desktop', DESKTOP);
  await screenshot(t, 'dashboard-shown-once-phone', PHONE);

  await byTestId('secret-done').click();
  await dialog.waitFor({ state: 'hidden' });
});

test('after the dialog closes the raw key is nowhere in the DOM', async () => {
  assert.ok(rawKey.length > 0);
  assert.equal((await page.content()).includes(rawKey), false);
  const inFields = await page.evaluate(`[...document.querySelectorAll('input, textarea')].some((e) => e.value.includes(${JSON.stringify(rawKey)}))`);
  assert.equal(inFields, false);
  assert.equal(await byTestId('secret-value').inputValue(), '');
});

test('the key list shows the new key as text, scoped and limited', async (t) => {
  const row = byTestId('key-row');
  assert.equal(await row.count(), 1);
  assert.equal(await row.getByTestId('key-name').textContent(), KEY_NAME);
  assert.equal(await row.locator('b').count(), 0);
  assert.equal(await row.getByTestId('key-status').textContent(), 'Active');
  assert.equal(await row.getByTestId('key-aliases').textContent(), 'service-chat');
  assert.equal(await row.getByTestId('key-limits').textContent(), '600 req/min');
  assert.equal(await row.getByTestId('key-last-used').textContent(), 'Never');
  keyPrefix = ((await row.getByTestId('key-prefix').textContent()) ?? '').replace(/…$/, '');
  assert.ok(keyPrefix.startsWith('pcl_') && rawKey.startsWith(keyPrefix) && keyPrefix.length < rawKey.length, `prefix ${keyPrefix}`);

  // At 1280 px each date is one line; its title holds the whole instant.
  const created = row.getByTestId('key-created').locator('time');
  const iso = (await created.getAttribute('datetime')) ?? '';
  assert.ok(((await created.getAttribute('title')) ?? '').endsWith(`(${iso})`), 'the title ends with the ISO instant');
  const cells = row.locator('td time.when');
  assert.ok((await cells.count()) >= 1);
  for (const time of await cells.all()) {
    const [height, lineHeight] = (await time.evaluate((e) => [e.getBoundingClientRect().height, parseFloat(getComputedStyle(e).lineHeight)])) as [number, number];
    assert.ok(height < lineHeight * 1.5, `${await time.textContent()}: ${height} px high, line height ${lineHeight} px`);
  }

  await screenshot(t, 'dashboard-keys-desktop', DESKTOP);
  await screenshot(t, 'dashboard-keys-phone', PHONE);
});

test('the key works through the openai SDK', async () => {
  const client = new OpenAI({ baseURL: `${gateway.apiUrl}/v1`, apiKey: rawKey, maxRetries: 0, timeout: 10_000 });
  const completion = await client.chat.completions.create({ model: 'service-chat', messages: [{ role: 'user', content: PROMPT }] });
  assert.equal(completion.choices[0]?.message.content, `Portcullis demo provider (not a language model). You said: "${PROMPT}". The request had 1 message.`);
  promptTokens = completion.usage?.prompt_tokens ?? 0;
  assert.ok(promptTokens > 0);
});

test('after a reload the usage view counts the request', async (t) => {
  await page.reload();
  const row = byTestId('key-row');
  await row.waitFor({ state: 'visible' });
  await row.getByTestId('key-usage').click();
  await byTestId('usage-panel').waitFor({ state: 'visible' });

  // The panel is aria-busy while an answer is awaited. (Locators, not
  // waitForFunction: a string predicate is eval'd in the page, which the CSP refuses.)
  const usageSettled = page.locator('#usage-panel:not([aria-busy])');
  const requests = byTestId('usage-total-requests');
  await requests.waitFor();
  let counted = await requests.textContent();
  for (let poll = 0; poll < USAGE_POLLS && counted !== '1'; poll++) {
    await page.waitForTimeout(USAGE_POLL_MS);
    await byTestId('usage-refresh').click();
    await usageSettled.waitFor();
    counted = await requests.textContent();
  }
  assert.equal(counted, '1');
  assert.equal(await byTestId('usage-total-errors').textContent(), '0');
  assert.equal(await byTestId('usage-total-prompt-tokens').textContent(), String(promptTokens));

  const chart = byTestId('usage-chart-requests').locator('svg');
  assert.equal(await chart.getAttribute('role'), 'img');
  assert.equal(await chart.getAttribute('aria-label'), 'Requests, last 48 hours, per hour');
  assert.equal(await chart.locator('rect').count(), 1);
  assert.equal(await byTestId('usage-table').locator('tbody tr').count(), 48);
  await screenshot(t, 'dashboard-usage-desktop', DESKTOP);
  await screenshot(t, 'dashboard-usage-phone', PHONE);

  await byTestId('usage-day').click();
  await byTestId('usage-table').locator('caption', { hasText: 'per day' }).waitFor({ state: 'attached' });
  await usageSettled.waitFor();
  assert.equal(await byTestId('usage-table').locator('tbody tr').count(), 30);
  assert.equal(await byTestId('usage-day').getAttribute('aria-pressed'), 'true');
  assert.equal(await requests.textContent(), '1');

  // Recorded together with the usage, so by now the list shows it too.
  await page.reload();
  await row.waitFor({ state: 'visible' });
  assert.notEqual(await row.getByTestId('key-last-used').textContent(), 'Never');
});

test('the aliases view lists targets with their health', async (t) => {
  await byTestId('nav-aliases').click();
  const card = page.locator('[data-testid="alias-card"][data-alias="service-chat"]');
  await card.waitFor({ state: 'visible' });
  assert.equal(await card.getByTestId('alias-available').textContent(), 'Available');
  assert.equal(await card.getByTestId('circuit-badge').first().textContent(), 'Healthy');
  await screenshot(t, 'dashboard-aliases-desktop', DESKTOP);
  await screenshot(t, 'dashboard-aliases-phone', PHONE);
  await byTestId('nav-keys').click();
  await byTestId('key-row').waitFor({ state: 'visible' });
});

test('revoke asks first; once confirmed the SDK is refused with 401', async () => {
  const row = byTestId('key-row');
  await row.getByTestId('key-revoke').click();
  const confirm = byTestId('confirm-dialog');
  await confirm.waitFor({ state: 'visible' });
  assert.equal(await confirm.locator('h2').textContent(), `Revoke “${KEY_NAME}”?`);
  await byTestId('confirm-cancel').click();
  await confirm.waitFor({ state: 'hidden' });
  assert.equal(await row.getByTestId('key-status').textContent(), 'Active');

  await row.getByTestId('key-revoke').click();
  await byTestId('confirm-ok').click();
  await page.locator('[data-testid="key-row"] [data-testid="key-status"]', { hasText: 'Revoked' }).waitFor();
  assert.equal(await row.getByTestId('key-revoke').count(), 0);

  const client = new OpenAI({ baseURL: `${gateway.apiUrl}/v1`, apiKey: rawKey, maxRetries: 0, timeout: 10_000 });
  await assert.rejects(client.chat.completions.create({ model: 'service-chat', messages: [{ role: 'user', content: PROMPT }] }), (error: unknown) => {
    assert.ok(error instanceof OpenAI.AuthenticationError);
    assert.equal(error.status, 401);
    assert.equal(error.code, 'invalid_api_key');
    return true;
  });
});

test('signing out returns to the login form', async () => {
  await byTestId('logout').click();
  await byTestId('login-password').waitFor({ state: 'visible' });
  assert.equal(await byTestId('key-row').count(), 0);
});

test('no console errors, page errors or CSP violations along the way', async () => {
  assert.deepEqual(await page.evaluate('window.__cspViolations'), []);
  assert.deepEqual(consoleProblems, []);
});
