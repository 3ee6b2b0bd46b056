// The dashboard tests' checks of what the page shows: screenshots that also
// refuse sideways scrolling, an element wholly on screen, the usage table,
// and what the page complained of (console errors, page errors, CSP
// violations). Kept apart so the test files read as the user's path through the page.
import assert from 'node:assert/strict';
import path from 'node:path';
import type { TestContext } from 'node:test';
import type { Page } from 'playwright-core';

interface Viewport {
  width: number;
  height: number;
}

/** `currentPage` is read on every call (the test opens its page in before()); screenshots restore `restore` after. */
export function pageChecks(currentPage: () => Page, screenshotDir: string, restore: Viewport) {
  const byTestId = (id: string) => currentPage().getByTestId(id);

  /** Saves a full-page screenshot at this width; nothing may stick out sideways (no horizontal scrolling). */
  async function screenshot(t: TestContext, name: string, viewport: Viewport): Promise<void> {
    await resize(viewport);
    const [contentWidth, pageWidth] = (await currentPage().evaluate(`[document.body.scrollWidth, document.body.clientWidth]`)) as [number, number];
    assert.ok(contentWidth <= pageWidth, `${name}: content ${contentWidth} px wide on a ${pageWidth} px page`);
    const file = path.join(screenshotDir, `${name}.png`);
    await currentPage().screenshot({ path: file, fullPage: true });
    t.diagnostic(`screenshot: ${file}`);
    await resize(restore);
  }

  /** A resize lays the page out again: skipped when it would change nothing. */
  async function resize(viewport: Viewport): Promise<void> {
    const now = currentPage().viewportSize();
    if (now?.width !== viewport.width || now.height !== viewport.height) await currentPage().setViewportSize(viewport);
  }

  /** What the user sees now: the viewport only, at its current size. */
  async function viewportShot(t: TestContext, name: string): Promise<void> {
    const file = path.join(screenshotDir, `${name}.png`);
    await currentPage().screenshot({ path: file });
    t.diagnostic(`screenshot: ${file}`);
  }

  /** The element's box lies wholly inside the viewport. */
  async function assertOnScreen(what: string, box: { x: number; y: number; width: number; height: number } | null, viewport: Viewport): Promise<void> {
    assert.ok(box !== null, `${what} is not rendered`);
    assert.ok(box.y >= 0 && box.y + box.height <= viewport.height && box.x >= 0 && box.x + box.width <= viewport.width, `${what} at ${JSON.stringify(box)}, outside ${viewport.width}x${viewport.height}`);
  }

  /**
   * The usage table: newest first, one row per period with traffic, one per run
   * of quiet periods, covering `periods` in all, and a caption that says so.
   */
  async function checkUsageTable(periods: number, noun: string, cost: string): Promise<void> {
    const table = byTestId('usage-table');
    assert.match((await byTestId('usage-table-note').textContent()) ?? '', new RegExp(`^Newest first\\. Each run of ${noun}s without requests is one row\\.$`));
    const rows = (await table.locator('tbody tr').evaluateAll((trs) =>
      trs.map((tr) => ({
        periods: Number(tr.getAttribute('data-periods')),
        quiet: tr.classList.contains('quiet-row'),
        times: [...tr.querySelectorAll('th time')].map((t) => Date.parse(t.getAttribute('datetime') ?? '')),
        cells: [...tr.querySelectorAll('td')].map((td) => td.textContent),
      })),
    )) as Array<{ periods: number; quiet: boolean; times: number[]; cells: string[] }>;
    assert.equal(rows.reduce((sum, r) => sum + r.periods, 0), periods, 'the rows cover every period');
    assert.ok(rows.length <= 3, `${rows.length} rows for one busy ${noun}`);
    const busy = rows.filter((r) => !r.quiet);
    assert.equal(busy.length, 1);
    assert.equal(busy[0]?.cells[0], '2', 'the busy row counts both requests');
    assert.equal(busy[0]?.cells[5], cost, 'the busy row costs both requests');
    assert.deepEqual(await table.locator('thead th').allTextContents(), ['Period starting', 'Requests', 'Errors', 'Prompt tokens', 'Completion tokens', 'Cached tokens', 'Cost (USD)']);
    rows.forEach((r, i) => {
      if (r.quiet) assert.equal(r.cells[0], r.periods === 1 ? `No requests in this ${noun}` : `No requests in these ${r.periods} ${noun}s`);
      if (i > 0) {
        assert.ok(!(r.quiet && rows[i - 1]?.quiet), 'quiet runs are merged');
        assert.ok(Math.max(...r.times) < Math.min(...(rows[i - 1]?.times ?? [])), 'newest first');
      }
    });
  }

  return { screenshot, viewportShot, assertOnScreen, checkUsageTable };
}

/**
 * Reports each CSP violation to the test as it happens, from before any page
 * script runs (init scripts and bindings are not subject to the page's CSP),
 * so that none is lost when the page navigates.
 */
const REPORT_CSP_VIOLATIONS = `
  document.addEventListener('securitypolicyviolation', (e) => {
    window.__cspViolation(e.violatedDirective + ' ' + e.blockedURI);
  });
`;

const FAILED_LOAD = /^Failed to load resource: the server responded with a status of (\d{3})/;

/**
 * Watches `page` from its next document on: CSP violations, console errors
 * and uncaught page errors go to `problems`, except the failed loads of
 * `expectedFailedLoads` ('401 /api/session': a status and a path at
 * `origin()`) that the flow causes on purpose.
 */
export async function watchPage(page: Page, origin: () => string, expectedFailedLoads: ReadonlySet<string>, problems: string[]): Promise<void> {
  await page.exposeBinding('__cspViolation', (_source, violation: unknown) => {
    problems.push(`csp violation: ${String(violation)}`);
  });
  await page.addInitScript({ content: REPORT_CSP_VIOLATIONS });
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    const text = message.text();
    if (/content security policy/i.test(text)) problems.push(`csp: ${text}`);
    if (message.type() !== 'error') return;
    const failedLoad = FAILED_LOAD.exec(text);
    if (failedLoad !== null) {
      const where = new URL(message.location().url);
      if (where.origin === origin() && expectedFailedLoads.has(`${failedLoad[1]} ${where.pathname}`)) return;
    }
    problems.push(`console error: ${text} (${message.location().url})`);
  });
}
