// The key list's "Guard findings" column: each key's findings by action over
// the period chosen above the table (48 hours or 30 days, from GET /api/usage).
// The column and its period choice are there only when the guard has found
// something in any key in the last 30 days; a key with none in the period
// then reads "None", a clear zero.
import { adminApi } from './api.ts';
import type { ApiFailure, Granularity, UsageByKey } from './admin-model.ts';
import { byId, el } from './dom.ts';
import { findingParts, findingsOf, hasFindings, LIMIT_SEPARATOR, type GuardFindings } from './format.ts';

const HEAD: Record<Granularity, string> = { hour: 'Guard findings, 48 hours', day: 'Guard findings, 30 days' };
const CAPTION: Record<Granularity, string> = { hour: "API keys, with the egress guard's findings over the last 48 hours", day: "API keys, with the egress guard's findings over the last 30 days" };

export interface KeyFindings {
  /** Reads the findings for the period on show; false when no key has any in 30 days (the column stays hidden). */
  load(): Promise<boolean>;
  /** The column's cell for a key, or null while the column is hidden. */
  cell(keyId: string): HTMLTableCellElement | null;
  reset(): void;
}

/** `changed` runs after the period changed and the findings for it were read: the list redraws its rows. */
export function createKeyFindings(onFailure: (failure: ApiFailure) => void, changed: () => void): KeyFindings {
  const bar = byId('keys-findings-bar', HTMLElement);
  const head = byId('keys-findings-head', HTMLElement);
  const caption = byId('keys-caption', HTMLElement);
  const hourButton = byId('keys-findings-hour', HTMLButtonElement);
  const dayButton = byId('keys-findings-day', HTMLButtonElement);
  let period: Granularity = 'day';
  let shown = false;
  let byKey = new Map<string, GuardFindings>();
  let generation = 0;

  const show = (on: boolean): void => {
    shown = on;
    bar.hidden = !on;
    head.hidden = !on;
    head.textContent = HEAD[period];
    caption.textContent = on ? CAPTION[period] : 'API keys';
  };

  async function read(granularity: Granularity): Promise<UsageByKey | null> {
    const outcome = await adminApi.usageByKey(granularity);
    if (outcome.ok) return outcome.value;
    // A server from before the guard has no such route: no column, nothing to report.
    if (outcome.failure.status !== 404) onFailure(outcome.failure);
    return null;
  }

  async function load(): Promise<boolean> {
    const mine = ++generation;
    const days = await read('day');
    const chosen = period === 'day' || days === null ? days : await read(period);
    if (mine !== generation) return shown;
    const any = days !== null && days.data.some((u) => hasFindings(findingsOf(u)));
    byKey = new Map((chosen?.data ?? []).map((u) => [u.keyId, findingsOf(u)]));
    show(any && chosen !== null);
    return shown;
  }

  const choose = (next: Granularity): void => {
    if (next === period) return;
    period = next;
    hourButton.setAttribute('aria-pressed', String(next === 'hour'));
    dayButton.setAttribute('aria-pressed', String(next === 'day'));
    void load().then(changed);
  };
  hourButton.addEventListener('click', () => choose('hour'));
  dayButton.addEventListener('click', () => choose('day'));

  return {
    load,
    cell(keyId) {
      if (!shown) return null;
      const parts = findingParts(byKey.get(keyId) ?? { blocked: 0, masked: 0, logged: 0 });
      const content =
        parts.length === 0
          ? [el('span', { className: 'findings-none', text: 'None' })]
          : parts.flatMap((part, i) => {
              const phrase = el('span', { className: 'limit', text: part });
              return i === 0 ? [phrase] : [el('span', { className: 'visually-hidden', text: LIMIT_SEPARATOR }), phrase];
            });
      // One child: on a phone the cell is a two-column grid (label, value), and every phrase belongs in the value.
      return el('td', { attrs: { 'data-label': 'Guard findings' }, testId: 'key-findings' }, [el('span', {}, content)]);
    },
    reset() {
      generation++;
      byKey = new Map();
      show(false);
    },
  };
}
