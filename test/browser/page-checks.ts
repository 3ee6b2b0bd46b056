// The dashboard test's checks of what the page shows: screenshots that also
// refuse sideways scrolling, an element wholly on screen, the usage table.
// Kept apart so dashboard.system.test.ts reads as the user's path through the page.
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
    await currentPage().setViewportSize(viewport);
    const [contentWidth, pageWidth] = (await currentPage().evaluate(`[document.body.scrollWidth, document.body.clientWidth]`)) as [number, number];
    assert.ok(contentWidth <= pageWidth, `${name}: content ${contentWidth} px wide on a ${pageWidth} px page`);
    const file = path.join(screenshotDir, `${name}.png`);
    await currentPage().screenshot({ path: file, fullPage: true });
    t.diagnostic(`screenshot: ${file}`);
    await currentPage().setViewportSize(restore);
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
