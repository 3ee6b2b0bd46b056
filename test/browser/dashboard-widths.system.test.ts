// The dashboard at the widths people use it at (375, 768, 1024, 1280 and
// 1440 px) with the longest things a list can hold: a 64-character name
// without a space, every alias, every limit at its largest, a token with
// both scopes. In each view (keys, a key's usage, aliases, tokens, audit) at
// each width: the page never scrolls sideways, no table scrolls sideways
// inside its box, and every action button of every row lies wholly inside
// the viewport once scrolled to, and takes a click there (nothing covers
// it). Full-page screenshots go to test-output/screenshots/dashboard-<view>-<width>.png.
// Along the way: the spending bar says why it shows less than the key
// spent, and an unpriced alias says it is unpriced.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { startAdminGateway, type AdminGateway } from '../admin/harness.ts';
import { watchPage } from './page-checks.ts';
import { textSettles } from './page-settles.ts';
import { useChromium } from '../support/chromium.ts';
import { repositoryRoot } from '../support/repository-root.ts';

// Page globals for the functions run inside the page (the tests compile without the DOM lib).
declare const document: {
  documentElement: { scrollWidth: number; clientWidth: number };
  querySelectorAll(selector: string): Iterable<{ scrollWidth: number; clientWidth: number; checkVisibility(): boolean }>;
  elementFromPoint(x: number, y: number): unknown;
};
interface PageElement {
  getBoundingClientRect(): { x: number; y: number; width: number; height: number };
  contains(other: unknown): boolean;
}

const WIDTHS = [375, 768, 1024, 1280, 1440] as const;
const HEIGHT = 900;
const PASSWORD = 'portcullis widths test 7!';
/** The longest name a key may have (64 characters), with no space to break at. */
const LONG_NAME = 'billing-reconciliation-service-eu-west-1-production-primary-0001';
const SPENDER = 'spent before its budget';
const TOKEN_NAME = 'terraform-infrastructure-pipeline-for-the-platform-team-eu-west1';
const PRICE = { input: 2.5, output: 10 };

const screenshotDir = path.join(repositoryRoot(), 'test-output', 'screenshots');
const chromium = useChromium();
let gateway: AdminGateway;
let context: BrowserContext;
let page: Page;
const consoleProblems: string[] = [];

async function adminCall(session: { name: string; value: string; csrfToken: string }, method: string, route: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${gateway.adminUrl}${route}`, {
    method,
    headers: { 'content-type': 'application/json', cookie: `${session.name}=${session.value}`, 'x-csrf-token': session.csrfToken },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  assert.ok(response.status < 300, `${method} ${route}: ${response.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

before(async () => {
  mkdirSync(screenshotDir, { recursive: true });
  gateway = await startAdminGateway({
    config: {
      // A target on an OpenAI-compatible server with no price: the alias is unpriced. Nothing is sent to it.
      providers: { demo: { type: 'demo' }, local: { type: 'openai', baseUrl: 'http://127.0.0.1:9/v1' } },
      aliases: {
        'service-chat': { provider: 'demo', model: 'portcullis-demo', price: PRICE, requestFields: ['json_schema', 'seed', 'user', 'parallel_tool_calls'] },
        'service-vision': { provider: 'demo', model: 'portcullis-demo', capabilities: ['vision'] },
        'service-local': { provider: 'local', model: 'llama-3.1-70b-instruct' },
      },
    },
  });
  const session = await gateway.signInSettingPassword(PASSWORD);
  const expiresAt = new Date(Date.now() + 200 * 86_400_000).toISOString();
  await adminCall(session, 'POST', '/api/keys', {
    name: LONG_NAME,
    allowedAliases: ['service-chat', 'service-vision', 'service-local'],
    expiresAt,
    limits: { requestsPerMinute: 600, tokensPerMinute: 100_000, concurrentRequests: 4, tokenBudget: { tokens: 1_000_000, period: 'month' }, costBudget: { amount: 1_000_000, period: 'month' } },
  });
  // Spends first, and only then is given a budget: the budget does not count what came before.
  const spender = await adminCall(session, 'POST', '/api/keys', { name: SPENDER });
  const spenderId = (spender['record'] as { id: string }).id;
  const completion = await fetch(`${gateway.apiUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${String(spender['key'])}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'service-chat', messages: [{ role: 'user', content: 'Hello' }] }),
  });
  assert.equal(completion.status, 200, await completion.text());
  await gateway.usageSettled();
  await adminCall(session, 'PATCH', `/api/keys/${spenderId}`, { limits: { costBudget: { amount: 5, period: 'month' } } });
  const revoked = await adminCall(session, 'POST', '/api/keys', { name: 'revoked, with a name that has spaces in it and runs on a while' });
  await adminCall(session, 'POST', `/api/keys/${(revoked['record'] as { id: string }).id}/revoke`);
  await adminCall(session, 'POST', '/api/tokens', { name: TOKEN_NAME, scopes: ['read', 'keys'], expiresAt });

  context = await chromium.newContext({ viewport: { width: 1280, height: HEIGHT } });
  await context.addCookies([{ name: session.name, value: session.value, url: gateway.adminUrl, httpOnly: true, sameSite: 'Strict' }]);
  page = await context.newPage();
  await watchPage(page, () => gateway.adminUrl, new Set(), consoleProblems);
  await page.goto(gateway.adminUrl + '/');
  await textSettles(page.getByTestId('whoami-name'), 'admin');
  await page.getByTestId('key-row').nth(2).waitFor();
});

after(async () => {
  await gateway?.close();
});

/**
 * At each width: nothing scrolls sideways, every button of `rows` is on
 * screen once scrolled to and takes the click there; then the screenshot.
 */
async function checkWidths(view: string, rows: Locator, expectedButtons: number): Promise<void> {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: HEIGHT });
    const where = `${view} at ${width} px`;
    const [pageWidth, viewportWidth] = (await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth])) as [number, number];
    if (pageWidth > viewportWidth) {
      // Names what sticks out, for the message.
      const out = await page.evaluate((limit: number) =>
        [...(document.querySelectorAll('body *') as unknown as Iterable<PageElement & { tagName: string; className: string; id: string }>)]
          .filter((e) => e.getBoundingClientRect().x + e.getBoundingClientRect().width > limit)
          .slice(-5)
          .map((e) => `${e.tagName}#${e.id}.${e.className}`),
      viewportWidth);
      assert.fail(`${where}: the page is ${pageWidth} px wide in a ${viewportWidth} px window: ${out.join(', ')}`);
    }
    // A table's box that scrolls sideways hides what sticks out.
    const wide = (await page.evaluate(() =>
      [...document.querySelectorAll('.table-wrap')].filter((w) => w.checkVisibility() && w.scrollWidth > w.clientWidth).map((w) => `${w.scrollWidth} > ${w.clientWidth}`),
    )) as string[];
    assert.deepEqual(wide, [], `${where}: a table scrolls sideways`);
    const buttons = await rows.locator('button').all();
    assert.equal(buttons.length, expectedButtons, `${where}: the buttons`);
    // Every button, in the page in one pass (a round trip each cost seconds per width): scrolled
    // to, inside the window, and itself under its own middle.
    const problems = await rows.evaluateAll(
      (elements: PageElement[], [limitX, limitY]: [number, number]) =>
        elements.flatMap((row) =>
          [...(row as unknown as { querySelectorAll(s: string): Iterable<PageElement & { textContent: string | null; getAttribute(n: string): string | null; scrollIntoView(o: unknown): void }> }).querySelectorAll('button')].flatMap((b) => {
            b.scrollIntoView({ block: 'center', inline: 'nearest' });
            const r = b.getBoundingClientRect();
            const name = b.getAttribute('aria-label') ?? b.textContent;
            if (r.width === 0 || r.height === 0) return [`${name} is not rendered`];
            if (r.x < 0 || r.x + r.width > limitX || r.y < 0 || r.y + r.height > limitY) return [`${name} at ${JSON.stringify(r)}, outside ${limitX}x${limitY}`];
            if (!b.contains(document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2))) return [`${name}: something else is under its middle`];
            return [];
          }),
        ),
      [viewportWidth, HEIGHT] as [number, number],
    );
    assert.deepEqual(problems, [], where);
    // Playwright's own check that a click would land (visible, stable, enabled, not covered), on the first and the last.
    for (const button of [buttons[0], buttons[buttons.length - 1]]) await button?.click({ trial: true, timeout: 10_000 });
    await page.screenshot({ path: path.join(screenshotDir, `dashboard-${view}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: HEIGHT });
}

test('keys: every action of every key on screen and clickable at 375, 768, 1024, 1280 and 1440 px', async () => {
  const rows = page.getByTestId('key-row');
  assert.equal(await rows.count(), 3);
  // Usage, Edit, Rotate, Revoke for two live keys; Usage alone for the revoked one.
  await checkWidths('keys', rows, 9);
  const long = rows.filter({ has: page.getByTestId('key-name').getByText(LONG_NAME, { exact: true }) });
  assert.match((await long.getByTestId('key-expires').textContent()) ?? '', /^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
  assert.equal((await long.getByTestId('key-limits').textContent())?.replace(/ · /g, '|'), '600 req/min|100K tokens/min|4 at once|1M tokens/month|1,000,000.00 USD/month');
});

test('usage: the spending bar and the cost agree, or the bar says why not; the panel fits every width', async () => {
  const row = page.getByTestId('key-row').filter({ has: page.getByTestId('key-name').getByText(SPENDER, { exact: true }) });
  await row.getByTestId('key-usage').click();
  await page.locator('#usage-panel:not([aria-busy])').waitFor();
  const cost = (await page.getByTestId('usage-total-cost').textContent()) ?? '';
  assert.match(cost, /^0\.\d*[1-9]$/, 'the cost shows its digits, without trailing zeros');
  assert.equal(await page.getByTestId('usage-budget-cost').textContent(), 'Spending budget this month (UTC): 0.00 of 5.00 USD used');
  assert.equal(
    await page.getByTestId('usage-budget-uncounted').textContent(),
    `The key spent ${cost} USD this month (UTC) in all; ${cost} USD of it is not counted against the budget: spent before the budget was set, above what one answer may be charged, or while the budget could not be counted.`,
  );
  assert.match((await page.locator('.budget-bar .hint time').textContent()) ?? '', /^\d{4}-\d{2}-01 00:00 UTC$/, 'resets at the start of next month, in UTC');
  await page.locator('.usage-details summary').click();
  assert.match((await page.getByTestId('usage-row').locator('th').first().textContent()) ?? '', /^\d{4}-\d{2}-\d{2} \d{2}:00 UTC$/);
  await checkWidths('usage', page.locator('#usage-panel .toolbar'), 4);
  await page.getByTestId('usage-close').click();
});

test('aliases: an unpriced alias says so, and what it means for budgeted keys; the cards fit every width', async () => {
  await page.getByTestId('nav-aliases').click();
  const local = page.locator('[data-testid="alias-card"][data-alias="service-local"]');
  await local.waitFor({ state: 'visible' });
  assert.equal(await local.getByTestId('alias-price').textContent(), 'Unpriced: its requests count no cost, so keys with a spending budget are refused it (403)');
  assert.equal(await local.getByTestId('target-price').textContent(), 'Unpriced');
  await checkWidths('aliases', page.getByTestId('alias-target'), 0);
});

test('tokens: Revoke on screen and clickable at every width', async () => {
  await page.getByTestId('nav-tokens').click();
  const rows = page.getByTestId('token-row');
  await rows.first().waitFor({ state: 'visible' });
  assert.match((await rows.first().getByTestId('token-created').textContent()) ?? '', /^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
  await checkWidths('tokens', rows, 1);
});

test('audit: targets show their names beside their ids; every Details button on screen at every width', async () => {
  await page.getByTestId('nav-audit').click();
  const rows = page.getByTestId('audit-row');
  await rows.first().waitFor({ state: 'visible' });
  const revoke = rows.filter({ has: page.getByText('Token created', { exact: true }) });
  assert.equal(await revoke.getByTestId('audit-target-name').textContent(), TOKEN_NAME);
  assert.match((await revoke.getByTestId('audit-target-id').textContent()) ?? '', /^tok_/);
  await checkWidths('audit', rows, await rows.count());
});

test('no console errors, page errors or CSP violations along the way', () => {
  assert.deepEqual(consoleProblems, []);
});
