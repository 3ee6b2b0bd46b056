// The dashboard in a real browser (Debian's chromium driven by playwright-core)
// against the real gateway: sign in with the bootstrap token, set a password,
// create a key with a token and a spending budget and read it from the
// shown-once dialog, use it through the `openai` SDK, see its usage and cost
// counted against both budgets, see the alias's price, revoke the key, see
// the SDK refused. Along
// the way: no console errors, no CSP violations, the raw key gone from the
// DOM once the dialog closes. At phone size (375x667) the create dialog's
// button and the usage panel are on screen where the user taps. Screenshots
// (desktop 1280 px, phone 390 px) go to test-output/screenshots/.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import type { BrowserContext, Page } from 'playwright-core';
import { startAdminGateway, type AdminGateway } from '../admin/harness.ts';
import { pageChecks, watchPage } from './page-checks.ts';
import { settles } from './page-settles.ts';
import { embeddedConfigValue } from '../../src/config/config-loader.ts';
import { useChromium } from '../support/chromium.ts';
import { repositoryRoot } from '../support/repository-root.ts';

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
/** A small phone: what must be reachable without scrolling is checked here. */
const SMALL_PHONE = { width: 375, height: 667 };
const NEW_PASSWORD = 'portcullis dashboard test 7!';
/** Markup in a key name must show as text, never become elements. */
const KEY_NAME = 'browser <b>test</b> & co';
const PHONE_KEY_NAME = 'made on a phone';
const PROMPT = 'Hello from the dashboard test';
/** service-chat's price per million tokens in the test's config: 0.0025 USD per prompt token, 0.01 per completion token. */
const PRICE = { input: 2.5, output: 10 };
const PRICE_TEXT = '2.50 / 10.00 USD per 1M tokens in/out';
const NANOS_PER_PROMPT_TOKEN = 2_500;
const NANOS_PER_COMPLETION_TOKEN = 10_000;
const TOKEN_BUDGET = 100_000;
const COST_BUDGET = '25.50';
/** The currency comes from GET /api/aliases (the config's, USD by default). */
const COST_BUDGET_LABEL = /^Spending budget \(USD\)$/;
const LIMITS_TEXT = /^600 req\/min · 100K tokens\/day · 25\.50 USD\/month$/;

// Page globals for the functions run inside the page (the tests compile without the DOM lib).
declare const document: { activeElement: unknown };
declare function getComputedStyle(element: unknown): { lineHeight: string };

const screenshotDir = path.join(repositoryRoot(), 'test-output', 'screenshots');

const chromium = useChromium();
let gateway: AdminGateway;
let context: BrowserContext;
let page: Page;
let rawKey = '';
let keyPrefix = '';
let promptTokens = 0;
let completionTokens = 0;
/** The first request the shown-once dialog offered, run with curl once the dialog is gone. */
let curlCommand = '';
const consoleProblems: string[] = [];
/** Failed loads the flow causes on purpose: the first /api/session (not signed in) and one wrong password. */
const expectedFailedLoads = new Set(['401 /api/session', '401 /api/login']);

before(async () => {
  mkdirSync(screenshotDir, { recursive: true });
  const embedded = embeddedConfigValue() as { aliases: Record<string, Record<string, unknown>> };
  gateway = await startAdminGateway({
    config: { aliases: { ...embedded.aliases, 'service-chat': { ...embedded.aliases['service-chat'], price: PRICE } } },
  });
  context = await chromium.newContext({ viewport: DESKTOP });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gateway.adminUrl });
  page = await context.newPage();
  await watchPage(page, () => gateway.adminUrl, expectedFailedLoads, consoleProblems);
});

after(async () => {
  await gateway?.close();
});

const byTestId = (id: string) => page.getByTestId(id);
const keyRow = (name: string) => page.getByTestId('key-row').filter({ has: page.getByTestId('key-name').getByText(name, { exact: true }) });

const { screenshot, viewportShot, assertOnScreen, checkUsageTable } = pageChecks(() => page, screenshotDir, DESKTOP);

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

test('creating a key shows the raw key once, with the base URL, a first request, copy buttons and the warning', async (t) => {
  await byTestId('create-key').click();
  await byTestId('key-form-dialog').waitFor({ state: 'visible' });
  await byTestId('key-form-name').fill(KEY_NAME);
  await byTestId('key-form-all-aliases').uncheck();
  await byTestId('alias-choice-service-chat').check();
  await byTestId('key-form-rpm').fill('600');
  await byTestId('key-form-budget').fill(String(TOKEN_BUDGET));
  await byTestId('key-form-budget-period').selectOption('day');
  assert.match((await page.locator('label[for="limit-cost-budget"]').textContent()) ?? '', COST_BUDGET_LABEL);
  // A decimal comma is refused in the page, beside the field, before anything is sent.
  await byTestId('key-form-cost-budget').fill('25,50');
  await byTestId('key-form-submit').click();
  assert.equal(await byTestId('key-form-error').textContent(), 'Write the spending budget with a dot for decimals and no commas, e.g. 25.50.');
  assert.equal(await byTestId('key-form-cost-budget').getAttribute('aria-invalid'), 'true');
  assert.equal(await page.evaluate('document.activeElement?.id'), 'limit-cost-budget');
  await byTestId('key-form-cost-budget').fill(COST_BUDGET);
  assert.equal(await byTestId('key-form-error').textContent(), '', 'the message goes once the field is edited');
  assert.equal(await byTestId('key-form-cost-budget').getAttribute('aria-invalid'), null);
  assert.equal(await byTestId('key-form-cost-budget-period').inputValue(), 'month');
  await screenshot(t, 'dashboard-key-form-desktop', DESKTOP);
  await screenshot(t, 'dashboard-key-form-phone', PHONE);
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

  // The API listener's real address, and a request to it with this key and an alias it may use.
  const baseUrl = `${gateway.apiUrl}/v1`;
  assert.equal(await byTestId('secret-base-url').inputValue(), baseUrl);
  curlCommand = await byTestId('secret-curl').inputValue();
  assert.equal(
    curlCommand,
    [
      `curl ${baseUrl}/chat/completions \\`,
      `  -H 'Authorization: Bearer ${rawKey}' \\`,
      `  -H 'Content-Type: application/json' \\`,
      `  -d '{"model":"service-chat","messages":[{"role":"user","content":"Hello! Which model are you?"}]}'`,
    ].join('\n'),
  );
  assert.match((await byTestId('secret-curl-note').textContent()) ?? '', /alias “service-chat”/);
  // A copy lands in the clipboard a moment after the click (the page awaits the clipboard's write).
  for (const [button, expected] of [['secret-base-url-copy', baseUrl], ['secret-curl-copy', curlCommand]] as const) {
    await page.evaluate('navigator.clipboard.writeText("")');
    await byTestId(button).click();
    await settles(() => page.evaluate('navigator.clipboard.readText()'), expected, button);
  }

  await screenshot(t, 'dashboard-shown-once-desktop', DESKTOP);
  await screenshot(t, 'dashboard-shown-once-phone', PHONE);
  // On a small phone the dialog scrolls inside, and Done stays pinned on screen.
  await page.setViewportSize(SMALL_PHONE);
  await assertOnScreen('Done', await byTestId('secret-done').boundingBox(), SMALL_PHONE);
  await viewportShot(t, 'dashboard-shown-once-small-phone');
  await page.setViewportSize(DESKTOP);

  await byTestId('secret-done').click();
  await dialog.waitFor({ state: 'hidden' });
  for (const field of ['secret-value', 'secret-base-url', 'secret-curl']) assert.equal(await byTestId(field).inputValue(), '', field);
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
  assert.match((await row.getByTestId('key-limits').textContent()) ?? '', LIMITS_TEXT);
  assert.equal(await row.getByTestId('key-last-used').textContent(), 'Never');
  keyPrefix = ((await row.getByTestId('key-prefix').textContent()) ?? '').replace(/…$/, '');
  assert.ok(keyPrefix.startsWith('pcl_') && rawKey.startsWith(keyPrefix) && keyPrefix.length < rawKey.length, `prefix ${keyPrefix}`);

  // A date is in UTC and says so; it breaks after the day at most (two lines); its title holds the whole instant.
  const created = row.getByTestId('key-created').locator('time');
  const iso = (await created.getAttribute('datetime')) ?? '';
  assert.equal(await created.textContent(), `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`);
  assert.equal(await created.getAttribute('title'), `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC (${iso})`);
  const cells = row.locator('td time.when');
  assert.ok((await cells.count()) >= 1);
  for (const time of await cells.all()) {
    const [height, lineHeight] = (await time.evaluate((e) => [e.getBoundingClientRect().height, parseFloat(getComputedStyle(e).lineHeight)])) as [number, number];
    assert.ok(height < lineHeight * 2.5, `${await time.textContent()}: ${height} px high, line height ${lineHeight} px`);
  }

  await screenshot(t, 'dashboard-keys-desktop', DESKTOP);
  await screenshot(t, 'dashboard-keys-phone', PHONE);

  // Edit shows both budgets as stored; saving unchanged keeps them.
  await row.getByTestId('key-edit').click();
  await byTestId('key-form-dialog').waitFor({ state: 'visible' });
  assert.equal(await byTestId('key-form-budget').inputValue(), String(TOKEN_BUDGET));
  assert.equal(await byTestId('key-form-budget-period').inputValue(), 'day');
  assert.equal(await byTestId('key-form-cost-budget').inputValue(), '25.5');
  assert.equal(await byTestId('key-form-cost-budget-period').inputValue(), 'month');
  await byTestId('key-form-submit').click();
  await byTestId('key-form-dialog').waitFor({ state: 'hidden' });
  await page.getByText(`Key “${KEY_NAME}” saved.`).waitFor();
  assert.match((await row.getByTestId('key-limits').textContent()) ?? '', LIMITS_TEXT);
  assert.equal(await row.getByTestId('key-guard').count(), 0, 'no guard, no line');

  // A guard set through the admin API is shown under the limits; an edit saved here keeps it.
  const id = (await row.getAttribute('data-key-id')) ?? '';
  const status = await page.evaluate(async (keyId) => {
    const session = (await (await fetch('/api/session')).json()) as { csrfToken: string };
    const body = JSON.stringify({ guard: { detectors: { secrets: 'block', email: 'mask' } } });
    return (await fetch(`/api/keys/${keyId}`, { method: 'PATCH', headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken }, body })).status;
  }, id);
  assert.equal(status, 200);
  await page.reload();
  await row.getByTestId('key-guard').waitFor({ state: 'visible' });
  assert.equal(await row.getByTestId('key-guard').textContent(), 'Guard: secrets: block · email: mask');
  await row.getByTestId('key-edit').click();
  await byTestId('key-form-dialog').waitFor({ state: 'visible' });
  await byTestId('key-form-submit').click();
  await byTestId('key-form-dialog').waitFor({ state: 'hidden' });
  await page.getByText(`Key “${KEY_NAME}” saved.`).waitFor();
  assert.equal(await row.getByTestId('key-guard').textContent(), 'Guard: secrets: block · email: mask');
});

test('at 375x667 the create dialog\'s button is on screen without scrolling', async (t) => {
  await page.setViewportSize(SMALL_PHONE);
  await byTestId('create-key').click();
  const form = byTestId('key-form-dialog');
  await form.waitFor({ state: 'visible' });
  const [scrollTop, scrollHeight, clientHeight] = (await form.evaluate((d) => [d.scrollTop, d.scrollHeight, d.clientHeight])) as [number, number, number];
  assert.equal(scrollTop, 0);
  assert.ok(scrollHeight > clientHeight, 'the form is taller than the screen (so this checks something)');
  await assertOnScreen('Create key', await byTestId('key-form-submit').boundingBox(), SMALL_PHONE);
  await viewportShot(t, 'dashboard-create-small-phone');
  await byTestId('key-form-name').fill(PHONE_KEY_NAME);
  await byTestId('key-form-submit').click();
  await byTestId('secret-dialog').waitFor({ state: 'visible' });
  await byTestId('secret-done').click();
  await byTestId('secret-dialog').waitFor({ state: 'hidden' });
  await keyRow(PHONE_KEY_NAME).waitFor({ state: 'visible' });
  assert.equal(await byTestId('key-row').count(), 2);
  await page.setViewportSize(DESKTOP);
});

test('the key works through the openai SDK and through the dialog\'s curl command', async () => {
  const client = new OpenAI({ baseURL: `${gateway.apiUrl}/v1`, apiKey: rawKey, maxRetries: 0, timeout: 10_000 });
  const completion = await client.chat.completions.create({ model: 'service-chat', messages: [{ role: 'user', content: PROMPT }] });
  assert.equal(completion.choices[0]?.message.content, `Portcullis demo provider (not a language model). You said: "${PROMPT}". The request had 1 message.`);
  promptTokens = completion.usage?.prompt_tokens ?? 0;
  completionTokens = completion.usage?.completion_tokens ?? 0;
  assert.ok(promptTokens > 0 && completionTokens > 0);

  const { stdout } = await promisify(execFile)('sh', ['-c', `${curlCommand} --silent --show-error --fail-with-body`], { timeout: 10_000 });
  const answer = JSON.parse(stdout) as { model: string; choices: Array<{ message: { content: string } }>; usage: { prompt_tokens: number; completion_tokens: number } };
  assert.equal(answer.model, 'service-chat');
  assert.match(answer.choices[0]?.message.content ?? '', /^Portcullis demo provider \(not a language model\)\. You said: "Hello! Which model are you\?"/);
  promptTokens += answer.usage.prompt_tokens;
  completionTokens += answer.usage.completion_tokens;
});

test('at 375 px, Usage opens the panel on screen; its table lists busy hours newest first', async (t) => {
  // Both requests have recorded their usage and it is in the state backend: the panel's first answer is final.
  await gateway.usageSettled();
  const row = keyRow(KEY_NAME);
  await page.setViewportSize(SMALL_PHONE);
  const usageButton = row.getByTestId('key-usage');
  await usageButton.click();
  const panel = byTestId('usage-panel');
  await panel.waitFor({ state: 'visible' });
  // Scrolled to and focused at once, below every key in the page but not off-screen.
  const top = (await panel.boundingBox())?.y ?? -1;
  assert.ok(top >= 0 && top < SMALL_PHONE.height / 4, `the panel starts at ${top} px in a ${SMALL_PHONE.height} px screen`);
  await assertOnScreen('the usage heading', await page.locator('#usage-title').boundingBox(), SMALL_PHONE);
  assert.equal(await page.evaluate('document.activeElement?.id'), 'usage-title');

  // The panel is aria-busy while an answer is awaited. (Locators, not
  // waitForFunction: a string predicate is eval'd in the page, which the CSP refuses.)
  const usageSettled = page.locator('#usage-panel:not([aria-busy])');
  const requests = byTestId('usage-total-requests');
  await usageSettled.waitFor();
  assert.equal(await requests.textContent(), '2', 'the SDK request and the curl request');
  assert.equal(await byTestId('usage-total-errors').textContent(), '0');
  assert.equal(await byTestId('usage-total-prompt-tokens').textContent(), String(promptTokens));
  // Cost at service-chat's price, worded like the CLI (6 decimals, more when not zero) with no float in between.
  const costNanos = promptTokens * NANOS_PER_PROMPT_TOKEN + completionTokens * NANOS_PER_COMPLETION_TOKEN;
  // Every digit that is not zero, at least 2 decimals.
  const cost = (costNanos / 1e9).toFixed(9).replace(/(\.\d\d\d*?)0+$/, '$1');
  assert.equal(await byTestId('usage-total-cost').textContent(), cost);
  assert.equal(await page.locator('dt', { hasText: 'Cost' }).textContent(), 'Cost (USD)');
  // Both budgets, nothing in flight now: used is what was charged.
  assert.equal(await byTestId('usage-budget-tokens').textContent(), `Token budget today (UTC): ${promptTokens + completionTokens} of 100,000 tokens used`);
  assert.equal(await byTestId('usage-budget-cost').textContent(), `Spending budget this month (UTC): ${cost} of ${COST_BUDGET} USD used`);
  assert.equal(await page.locator('#usage-cost-budget-meter').getAttribute('value'), String(costNanos));
  assert.equal(await page.locator('#usage-cost-budget-meter').getAttribute('max'), '25500000000');
  assert.equal(await byTestId('usage-budget-note').textContent(), 'Used includes requests still in flight, each reserved at its upper bound until it finishes.');
  await viewportShot(t, 'dashboard-usage-small-phone');

  const chart = byTestId('usage-chart-requests').locator('svg');
  assert.equal(await chart.getAttribute('role'), 'img');
  assert.equal(await chart.getAttribute('aria-label'), 'Requests, last 48 hours, per hour');
  assert.equal(await chart.locator('rect').count(), 1);
  const costChart = byTestId('usage-chart-cost').locator('svg');
  assert.equal(await costChart.getAttribute('aria-label'), 'Cost in USD, last 48 hours, per hour');
  assert.equal(await costChart.locator('rect').count(), 1);
  assert.match((await costChart.locator('rect title').textContent()) ?? '', new RegExp(`: ${cost.replace('.', '\\.')} USD cost$`));
  await page.locator('.usage-details summary').click();
  await checkUsageTable(48, 'hour', cost);
  await screenshot(t, 'dashboard-usage-desktop', DESKTOP);
  await screenshot(t, 'dashboard-usage-phone', PHONE);

  await byTestId('usage-day').click();
  await byTestId('usage-table').locator('caption', { hasText: 'per day' }).waitFor({ state: 'attached' });
  await usageSettled.waitFor();
  await checkUsageTable(30, 'day', cost);
  assert.equal(await byTestId('usage-day').getAttribute('aria-pressed'), 'true');
  assert.equal(await requests.textContent(), '2');

  // Close hands the focus back to the Usage button of that key.
  await page.setViewportSize(SMALL_PHONE);
  await byTestId('usage-close').click();
  await panel.waitFor({ state: 'hidden' });
  assert.equal(await usageButton.evaluate((b) => b === document.activeElement), true);
  await assertOnScreen('the Usage button', await usageButton.boundingBox(), SMALL_PHONE);
  await page.setViewportSize(DESKTOP);

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
  assert.equal(await card.getByTestId('alias-price').textContent(), PRICE_TEXT);
  assert.equal(await card.getByTestId('target-price').textContent(), PRICE_TEXT, 'the target inherits the alias price');
  // An alias without a price of its own whose targets are priced (its demo target is free) says so.
  const vision = page.locator('[data-testid="alias-card"][data-alias="service-vision"]');
  assert.equal(await vision.getByTestId('alias-price').textContent(), 'Per target (below)');
  assert.equal(await vision.getByTestId('target-price').textContent(), 'Free');
  // Each card says its kind; an embeddings alias shows what its targets take instead of the chat settings.
  assert.equal(await card.getByTestId('alias-kind').textContent(), 'Chat');
  const embed = page.locator('[data-testid="alias-card"][data-alias="service-embed"]');
  assert.equal(await embed.getByTestId('alias-kind').textContent(), 'Embeddings (POST /v1/embeddings)');
  assert.deepEqual(await embed.locator('dt').allTextContents(), ['Kind', 'Takes dimensions', 'Inputs per call', 'Price']);
  assert.deepEqual(await embed.locator('dd').allTextContents(), ['Embeddings (POST /v1/embeddings)', 'Every target', '2,048', 'Per target (below)']);
  await screenshot(t, 'dashboard-aliases-desktop', DESKTOP);
  await screenshot(t, 'dashboard-aliases-phone', PHONE);
  await byTestId('nav-keys').click();
  await keyRow(KEY_NAME).waitFor({ state: 'visible' });
});

test('revoke asks first; once confirmed the SDK is refused with 401', async () => {
  const row = keyRow(KEY_NAME);
  await row.getByTestId('key-revoke').click();
  const confirm = byTestId('confirm-dialog');
  await confirm.waitFor({ state: 'visible' });
  assert.equal(await confirm.locator('h2').textContent(), `Revoke “${KEY_NAME}”?`);
  await byTestId('confirm-cancel').click();
  await confirm.waitFor({ state: 'hidden' });
  assert.equal(await row.getByTestId('key-status').textContent(), 'Active');

  await row.getByTestId('key-revoke').click();
  await byTestId('confirm-ok').click();
  await row.getByTestId('key-status').getByText('Revoked').waitFor();
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
  assert.deepEqual(consoleProblems, []);
});
