// The dashboard's audit view as the browser tests read and drive it: the
// rows on screen, the filter form, the nav. Shared by the audit and the
// tokens browser tests (a token's uses page the audit view).
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';

export interface AuditRow {
  seq: number;
  action: string;
  actorName: string;
  actorKind: string;
  source: string;
  /** The target's id; `targetName` the name shown above it ('' for none). */
  target: string;
  targetName: string;
}

export type AuditFilterFields = Partial<Record<'key' | 'actor' | 'action' | 'since' | 'until', string>>;

const isAuditAnswer = (r: { url(): string }): boolean => new URL(r.url()).pathname === '/api/audit';

/** `currentPage` is read on every call (the tests open their page in before()). */
export function auditViewPage(currentPage: () => Page) {
  const byTestId = (id: string) => currentPage().getByTestId(id);

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
          target: text('audit-target-id') || text('audit-target'),
          targetName: text('audit-target-name'),
        };
      }),
    )) as AuditRow[];
  }

  /**
   * The page has drawn the last answer: it marks the table aria-busy from the
   * request until the rows are in. (Locators, not waitForFunction: the page's
   * CSP refuses the eval a string predicate needs.)
   */
  async function auditSettled(): Promise<void> {
    await currentPage().locator('#audit-table[aria-busy]').waitFor({ state: 'detached' });
  }

  /** Applies the filter form, waits for the answer to be drawn, and reads the rows. */
  async function applyFilters(fields: AuditFilterFields): Promise<AuditRow[]> {
    await byTestId('audit-filter-key').fill(fields.key ?? '');
    await byTestId('audit-filter-actor').fill(fields.actor ?? '');
    await byTestId('audit-filter-action').selectOption(fields.action ?? '');
    await byTestId('audit-filter-since').fill(fields.since ?? '');
    await byTestId('audit-filter-until').fill(fields.until ?? '');
    const answered = currentPage().waitForResponse(isAuditAnswer);
    await byTestId('audit-apply').click();
    assert.equal((await answered).status(), 200);
    await auditSettled();
    return auditRows();
  }

  /** Opens a section from the nav; the audit view is read afresh, so its answer is awaited. */
  async function openSection(section: 'tokens' | 'audit'): Promise<void> {
    const answered = section === 'audit' ? currentPage().waitForResponse(isAuditAnswer) : null;
    await byTestId(`nav-${section}`).click();
    await currentPage().locator(`[data-testid="nav-${section}"][aria-current="page"]`).waitFor();
    if (answered !== null) {
      assert.equal((await answered).status(), 200);
      await auditSettled();
    }
  }

  return { auditRows, auditSettled, applyFilters, openSection };
}
