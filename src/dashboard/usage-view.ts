// The per-key usage panel: totals, the budgets, the egress guard's findings in
// the period (for a key the guard has found anything in), bar charts (requests,
// tokens, cost, findings) and the same numbers as a table for screen readers
// and copying.
import { adminApi } from './api.ts';
import type { ApiFailure, BudgetPeriod, Granularity, KeyRecord, KeyUsage, UsageCounts } from './admin-model.ts';
import { byId, clear, el, timeElement, type Child } from './dom.ts';
import { findingsOf, formatBucketStart, formatCount, formatDateTime, hasFindings, sumFindings, type GuardFindings } from './format.ts';
import { formatAmount, formatCost, nanosOfAmount, uncountedNote } from './money.ts';
import { buildBarChart } from './usage-chart.ts';
import { usageRows } from './usage-rows.ts';

const TOTALS: Array<{ field: keyof UsageCounts; label: string; testId: string }> = [
  { field: 'requests', label: 'Requests', testId: 'usage-total-requests' },
  { field: 'errors', label: 'Errors', testId: 'usage-total-errors' },
  { field: 'promptTokens', label: 'Prompt tokens', testId: 'usage-total-prompt-tokens' },
  { field: 'completionTokens', label: 'Completion tokens', testId: 'usage-total-completion-tokens' },
  { field: 'cachedTokens', label: 'Cached prompt tokens', testId: 'usage-total-cached-tokens' },
];

/** Budgets run per UTC day or month (the server's windows). */
const BUDGET_WINDOW: Record<BudgetPeriod, string> = { day: 'today (UTC)', month: 'this month (UTC)' };

/** Why `used` can be more than what the table adds up to, said beside the bars. */
const IN_FLIGHT_NOTE = 'Used includes requests still in flight, each reserved at its upper bound until it finishes.';

const PERIOD_WORDS: Record<Granularity, string> = { hour: 'last 48 hours, per hour', day: 'last 30 days, per day' };
const PERIOD_SPAN: Record<Granularity, string> = { hour: 'last 48 hours', day: 'last 30 days' };
const PERIOD_NOUN: Record<Granularity, [one: string, many: string]> = { hour: ['hour', 'hours'], day: ['day', 'days'] };

const FINDINGS: Array<{ field: keyof GuardFindings; label: string; testId: string }> = [
  { field: 'blocked', label: 'Blocked', testId: 'usage-findings-blocked' },
  { field: 'masked', label: 'Masked', testId: 'usage-findings-masked' },
  { field: 'logged', label: 'Logged', testId: 'usage-findings-logged' },
];

interface UsageView {
  /**
   * Shows a key's usage. `opener` is the button that asked: the panel is then
   * scrolled to and focused (on a phone it sits below every key), and Close
   * gives the focus back to that button, in its row.
   */
  show(key: KeyRecord, opener?: HTMLElement): Promise<void>;
  hide(): void;
  /** The key whose usage is on screen, if any. */
  shownKeyId(): string | null;
}

export function createUsageView(onFailure: (failure: ApiFailure) => void): UsageView {
  const panel = byId('usage-panel', HTMLElement);
  const title = byId('usage-title', HTMLElement);
  const hourButton = byId('usage-hour', HTMLButtonElement);
  const dayButton = byId('usage-day', HTMLButtonElement);
  const refreshButton = byId('usage-refresh', HTMLButtonElement);
  const closeButton = byId('usage-close', HTMLButtonElement);
  const totals = byId('usage-totals', HTMLElement);
  const budget = byId('usage-budget', HTMLElement);
  const charts = byId('usage-charts', HTMLElement);
  const table = byId('usage-table', HTMLElement);
  const findings = byId('usage-findings', HTMLElement);
  const findingsTitle = byId('usage-findings-title', HTMLElement);
  const findingsCounts = byId('usage-findings-counts', HTMLElement);

  let key: KeyRecord | null = null;
  let opener: HTMLElement | null = null;
  let granularity: Granularity = 'hour';
  // Answers can arrive out of order when the operator clicks quickly; only the latest is drawn.
  let generation = 0;

  const setGranularity = (next: Granularity): void => {
    granularity = next;
    hourButton.setAttribute('aria-pressed', String(next === 'hour'));
    dayButton.setAttribute('aria-pressed', String(next === 'day'));
    void load();
  };
  hourButton.addEventListener('click', () => setGranularity('hour'));
  dayButton.addEventListener('click', () => setGranularity('day'));
  refreshButton.addEventListener('click', () => void load());
  closeButton.addEventListener('click', () => {
    const back = opener;
    view.hide();
    if (back?.isConnected) back.focus();
  });

  async function load(): Promise<void> {
    if (key === null) return;
    const mine = ++generation;
    panel.setAttribute('aria-busy', 'true');
    const outcome = await adminApi.keyUsage(key.id, granularity);
    if (mine !== generation) return;
    panel.removeAttribute('aria-busy');
    if (!outcome.ok) {
      onFailure(outcome.failure);
      return;
    }
    render(outcome.value);
  }

  function render(usage: KeyUsage): void {
    const g = usage.granularity;
    clear(totals);
    const currency = usage.currency ?? '';
    for (const t of TOTALS) {
      totals.append(el('div', { className: 'total' }, [el('dt', { text: t.label }), el('dd', { text: formatCount(usage.totals[t.field] ?? 0), testId: t.testId })]));
    }
    // The currency goes in the term, like the table's column head: the amount alone fills a phone's half width.
    totals.append(
      el('div', { className: 'total' }, [
        el('dt', { text: currency === '' ? 'Cost' : `Cost (${currency})` }),
        el('dd', { text: formatCost(usage.totals.costNanos ?? 0, ''), testId: 'usage-total-cost' }),
      ]),
    );
    const bars: HTMLElement[] = [];
    if (usage.budget !== null) {
      const b = usage.budget;
      bars.push(budgetBar('usage-budget-meter', `Token budget ${BUDGET_WINDOW[b.period]}: ${formatCount(b.used)} of ${formatCount(b.tokens)} tokens used`, b.used, b.tokens, b.resetsAt, 'usage-budget-tokens'));
    }
    const c = usage.costBudget ?? null;
    if (c !== null) {
      const limit = nanosOfAmount(c.amount);
      const label = `Spending budget ${BUDGET_WINDOW[c.period]}: ${formatCost(c.usedNanos, '')} of ${formatAmount(c.amount)} ${c.currency} used`;
      bars.push(budgetBar('usage-cost-budget-meter', label, c.usedNanos, limit, c.resetsAt, 'usage-budget-cost'));
      const uncounted = uncountedNote(c.usedNanos, c.recordedNanos ?? null, c.period, c.currency);
      if (uncounted !== null) bars.push(el('p', { className: 'hint budget-note', text: uncounted, testId: 'usage-budget-uncounted' }));
    }
    budget.replaceChildren(...bars);
    if (bars.length > 0) budget.append(el('p', { className: 'hint budget-note', text: IN_FLIGHT_NOTE, testId: 'usage-budget-note' }));
    // Shown for a key the guard has ever found anything in, zeros included: "none this week" is worth reading there.
    const guarded = hasFindings(findingsOf(usage.totals));
    findings.hidden = !guarded;
    clear(findingsCounts);
    if (guarded) {
      const inPeriod = sumFindings(usage.buckets);
      findingsTitle.textContent = `Guard findings, ${PERIOD_SPAN[g]}`;
      for (const f of FINDINGS) {
        findingsCounts.append(el('div', { className: 'total' }, [el('dt', { text: f.label }), el('dd', { text: formatCount(inPeriod[f.field]), testId: f.testId })]));
      }
    }
    const labels = usage.buckets.map((bucket) => formatBucketStart(bucket.start, g));
    charts.replaceChildren(
      buildBarChart({
        title: `Requests, ${PERIOD_WORDS[g]}`,
        unit: 'requests',
        testId: 'usage-chart-requests',
        series: [
          { name: 'Succeeded', className: 'fill-ok' },
          { name: 'Failed', className: 'fill-error' },
        ],
        columns: usage.buckets.map((b, i) => ({ label: labels[i] ?? b.start, values: [Math.max(0, b.requests - b.errors), b.errors] })),
      }),
      buildBarChart({
        title: `Tokens, ${PERIOD_WORDS[g]}`,
        unit: 'tokens',
        testId: 'usage-chart-tokens',
        series: [
          { name: 'Prompt', className: 'fill-prompt' },
          { name: 'Completion', className: 'fill-completion' },
        ],
        columns: usage.buckets.map((b, i) => ({ label: labels[i] ?? b.start, values: [b.promptTokens, b.completionTokens] })),
      }),
      buildBarChart({
        title: `Cost${currency === '' ? '' : ` in ${currency}`}, ${PERIOD_WORDS[g]}`,
        unit: 'cost',
        testId: 'usage-chart-cost',
        currency,
        series: [{ name: 'Cost', className: 'fill-cost' }],
        columns: usage.buckets.map((b, i) => ({ label: labels[i] ?? b.start, values: [b.costNanos ?? 0] })),
      }),
    );
    if (guarded) {
      charts.append(
        buildBarChart({
          title: `Guard findings, ${PERIOD_WORDS[g]}`,
          unit: 'findings',
          testId: 'usage-chart-findings',
          series: [
            { name: 'Blocked', className: 'fill-blocked' },
            { name: 'Masked', className: 'fill-masked' },
            { name: 'Logged', className: 'fill-logged' },
          ],
          columns: usage.buckets.map((b, i) => {
            const f = findingsOf(b);
            return { label: labels[i] ?? b.start, values: [f.blocked, f.masked, f.logged] };
          }),
        }),
      );
    }
    table.replaceChildren(usageNote(g), usageTable(usage, currency, guarded));
  }

  const view: UsageView = {
    async show(next, from) {
      key = next;
      title.textContent = `Usage of “${next.name}”`;
      panel.hidden = false;
      if (from !== undefined) {
        opener = from;
        // At once, before the numbers arrive: the tap shows where they will be.
        panel.scrollIntoView({ block: 'start' });
        title.focus({ preventScroll: true });
      }
      await load();
    },
    hide() {
      key = null;
      opener = null;
      generation++;
      panel.hidden = true;
      clear(totals);
      clear(budget);
      clear(charts);
      clear(table);
      clear(findingsCounts);
      findings.hidden = true;
    },
    shownKeyId: () => key?.id ?? null,
  };
  return view;
}

/** One budget: what is used of it in words, a meter, and when its window resets. */
function budgetBar(id: string, label: string, used: number, limit: number, resetsAt: string, testId: string): HTMLElement {
  return el('div', { className: 'budget-bar' }, [
    el('label', { text: label, attrs: { for: id }, testId }),
    el('meter', { attrs: { id, min: '0', max: String(limit), value: String(Math.min(used, limit)), high: String(limit * 0.8), title: IN_FLIGHT_NOTE } }),
    el('span', { className: 'hint' }, ['Resets ', timeElement(resetsAt, formatDateTime(resetsAt, ''))]),
  ]);
}

/** The note stays outside the table, above its rows. */
function usageNote(g: Granularity): HTMLElement {
  return el('p', { className: 'hint', text: `Newest first. Each run of ${PERIOD_NOUN[g][1]} without requests is one row.`, testId: 'usage-table-note' });
}

/** The table of the panel's numbers; `guarded` adds the guard's findings (blocked, masked, logged) as three columns. */
function usageTable(usage: KeyUsage, currency: string, guarded: boolean): HTMLTableElement {
  const g = usage.granularity;
  const [one, many] = PERIOD_NOUN[g];
  const head = ['Period starting', 'Requests', 'Errors', 'Prompt tokens', 'Completion tokens', 'Cached tokens', currency === '' ? 'Cost' : `Cost (${currency})`];
  if (guarded) head.push('Guard blocked', 'Guard masked', 'Guard logged');
  const num = (text: string, i: number): HTMLTableCellElement => el('td', { className: 'num', text, attrs: { 'data-label': head[i] ?? '' } });
  const rows = usageRows(usage.buckets).map((row) => {
    if (row.kind === 'traffic') {
      const b = row.bucket;
      const f = findingsOf(b);
      return el('tr', { attrs: { 'data-periods': '1' }, testId: 'usage-row' }, [
        el('th', { attrs: { scope: 'row', 'data-label': head[0] ?? '' } }, [timeElement(b.start, formatBucketStart(b.start, g))]),
        ...[b.requests, b.errors, b.promptTokens, b.completionTokens, b.cachedTokens].map((n, i) => num(formatCount(n), i + 1)),
        num(formatCost(b.costNanos ?? 0, ''), 6),
        ...(guarded ? [f.blocked, f.masked, f.logged].map((n, i) => num(formatCount(n), i + 7)) : []),
      ]);
    }
    const span: Child[] = row.count === 1
      ? [timeElement(row.newest, formatBucketStart(row.newest, g))]
      : [timeElement(row.oldest, formatBucketStart(row.oldest, g)), ' – ', timeElement(row.newest, formatBucketStart(row.newest, g))];
    return el('tr', { className: 'quiet-row', attrs: { 'data-periods': String(row.count) }, testId: 'usage-quiet-row' }, [
      el('th', { attrs: { scope: 'row', 'data-label': head[0] ?? '' } }, span),
      el('td', { text: `No requests in ${row.count === 1 ? `this ${one}` : `these ${row.count} ${many}`}`, attrs: { colspan: String(head.length - 1) } }),
    ]);
  });
  // On a phone each period is a card, its numbers labelled (seven to ten columns do not fit).
  return el('table', { className: 'data-table stacking-table', testId: 'usage-table' }, [
    el('caption', { className: 'visually-hidden', text: `Usage, ${PERIOD_WORDS[g]}, newest first. Each run of ${many} without requests is one row.` }),
    el('thead', {}, [el('tr', {}, head.map((h) => el('th', { text: h, attrs: { scope: 'col' } })))]),
    el('tbody', {}, rows),
  ]);
}
