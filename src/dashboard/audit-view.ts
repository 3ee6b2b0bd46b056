// The audit log: records newest first, filtered by key, actor, action and a
// time range, paged back by "Older records", each record's changed fields and
// detail behind its Details button.
import { adminApi } from './api.ts';
import type { ApiFailure, AuditRecord } from './admin-model.ts';
import { actionLabel, actionTone, actorDescription, actorKindLabel, actorName, auditChanges, formatAuditValue } from './audit-labels.ts';
import { AUDIT_ACTIONS, auditFilter, auditQuery, isFiltered, NO_FILTER, type AuditFilter, type FilterField } from './audit-query.ts';
import { byId, clear, el, whenElement } from './dom.ts';
import { formatFullDateTime, formatInstant } from './format.ts';

interface AuditViewContext {
  failed(failure: ApiFailure): void;
}

export function createAuditView(context: AuditViewContext): { load(): Promise<void>; reset(): void } {
  const form = byId('audit-filters', HTMLFormElement);
  const inputs = {
    key: byId('audit-key', HTMLInputElement),
    actor: byId('audit-actor', HTMLInputElement),
    action: byId('audit-action', HTMLSelectElement),
    since: byId('audit-since', HTMLInputElement),
    until: byId('audit-until', HTMLInputElement),
  } satisfies Record<FilterField, HTMLInputElement | HTMLSelectElement>;
  const filterError = byId('audit-filter-error', HTMLElement);
  const summary = byId('audit-summary', HTMLElement);
  const empty = byId('audit-empty', HTMLElement);
  const table = byId('audit-table', HTMLTableElement);
  const body = byId('audit-body', HTMLTableSectionElement);
  const older = byId('audit-older', HTMLButtonElement);

  for (const action of AUDIT_ACTIONS) inputs.action.append(el('option', { text: `${actionLabel(action)} (${action})`, attrs: { value: action } }));

  let filter: AuditFilter = {};
  let shown = 0;
  let nextBefore: number | null = null;
  // A slow answer to an older filter must not land under a newer one.
  let generation = 0;

  function clearProblem(): void {
    filterError.textContent = '';
    for (const input of Object.values(inputs)) input.removeAttribute('aria-invalid');
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    clearProblem();
    const outcome = auditFilter({ key: inputs.key.value, actor: inputs.actor.value, action: inputs.action.value, since: inputs.since.value, until: inputs.until.value });
    if (!outcome.ok) {
      filterError.textContent = outcome.message;
      inputs[outcome.field].setAttribute('aria-invalid', 'true');
      inputs[outcome.field].focus();
      return;
    }
    filter = outcome.filter;
    void firstPage();
  });
  byId('audit-clear', HTMLButtonElement).addEventListener('click', () => {
    clearProblem();
    for (const [field, input] of Object.entries(inputs)) input.value = NO_FILTER[field as FilterField];
    filter = {};
    void firstPage();
  });
  byId('audit-refresh', HTMLButtonElement).addEventListener('click', () => void firstPage());
  older.addEventListener('click', () => void nextPage());

  /**
   * The current names of keys and admin tokens by id, for the Target column;
   * read again with each first page, so a key made since shows its name. A
   * list that cannot be read leaves its ids without names.
   */
  let names: ReadonlyMap<string, string> = new Map();

  async function readNames(): Promise<ReadonlyMap<string, string>> {
    const [keys, tokens] = await Promise.all([adminApi.listKeys(), adminApi.listTokens()]);
    const found = new Map<string, string>();
    for (const item of [...(keys.ok ? keys.value.data : []), ...(tokens.ok ? tokens.value.data : [])]) found.set(item.id, item.name);
    return found;
  }

  /** A page of records; null when it failed (said on the page) or a newer request overtook it. */
  async function fetchPage(before: number | null): Promise<AuditRecord[] | null> {
    const mine = ++generation;
    table.setAttribute('aria-busy', 'true');
    older.disabled = true;
    const [outcome, named] = await Promise.all([adminApi.audit(auditQuery(filter, before)), before === null ? readNames() : names]);
    names = named;
    if (mine !== generation) return null;
    table.removeAttribute('aria-busy');
    older.disabled = false;
    if (!outcome.ok) {
      showError(outcome.failure, before === null);
      return null;
    }
    nextBefore = outcome.value.nextBefore;
    return outcome.value.data;
  }

  /**
   * A bad filter is the form's to say. A first page that failed replaces the
   * list (rows of the previous filter would mislead); an older page that
   * failed leaves the list as it is and says so above it.
   */
  function showError(failure: ApiFailure, firstPage: boolean): void {
    if (failure.status === 401) return context.failed(failure);
    if (failure.param !== null && Object.hasOwn(inputs, failure.param)) {
      filterError.textContent = failure.message;
      inputs[failure.param as FilterField].setAttribute('aria-invalid', 'true');
      return;
    }
    if (!firstPage) return context.failed(failure);
    shown = 0;
    nextBefore = null;
    clear(body);
    summary.textContent = '';
    empty.textContent = `The audit log could not be read: ${failure.message}`;
    empty.classList.add('empty-error');
    empty.hidden = false;
    table.hidden = true;
    older.hidden = true;
  }

  async function firstPage(): Promise<void> {
    const records = await fetchPage(null);
    if (records === null) return;
    shown = 0;
    clear(body);
    render(records);
  }

  async function nextPage(): Promise<void> {
    if (nextBefore === null) return;
    const records = await fetchPage(nextBefore);
    if (records === null) return;
    const firstNew = render(records);
    // The first record of the new page takes the focus, so the keyboard continues from there.
    firstNew?.focus();
  }

  /** Appends rows; returns the first new row's Details button. */
  function render(records: AuditRecord[]): HTMLButtonElement | null {
    let first: HTMLButtonElement | null = null;
    for (const record of records) {
      const [line, details, button] = rows(record);
      body.append(line, details);
      first ??= button;
    }
    shown += records.length;
    empty.classList.remove('empty-error');
    empty.textContent = isFiltered(filter) ? 'No record matches these filters. Widen the time range or clear a filter.' : 'Nothing is recorded yet: key changes, sign-ins, token changes and config reloads appear here.';
    empty.hidden = shown > 0;
    table.hidden = shown === 0;
    older.hidden = nextBefore === null;
    const plural = shown === 1 ? 'record' : 'records';
    summary.textContent = shown === 0 ? '' : `${shown} ${plural}${isFiltered(filter) ? ' matching the filters' : ''}, newest first${nextBefore === null ? '.' : '; more are older.'}`;
    return first;
  }

  function rows(record: AuditRecord): [HTMLTableRowElement, HTMLTableRowElement, HTMLButtonElement] {
    const detailsId = `audit-details-${record.seq}`;
    const cell = (label: string, content: (Node | string)[], testId: string, className?: string): HTMLTableCellElement =>
      el('td', { attrs: { 'data-label': label }, testId, ...(className === undefined ? {} : { className }) }, content);
    const toggle = el('button', {
      text: 'Details',
      className: 'button-small',
      testId: 'audit-toggle',
      attrs: { type: 'button', 'aria-expanded': 'false', 'aria-controls': detailsId, 'aria-label': `Details of record ${record.seq}` },
    });
    const actor = el('span', { className: 'actor', attrs: { title: actorDescription(record.actor) } }, [
      el('span', { className: 'actor-name', text: actorName(record.actor), testId: 'audit-actor-name' }),
      el('span', { className: 'actor-kind', text: actorKindLabel(record.actor.kind), testId: 'audit-actor-kind' }),
    ]);
    const line = el('tr', { testId: 'audit-row', attrs: { 'data-seq': String(record.seq), 'data-action': record.action } }, [
      el('th', { attrs: { scope: 'row', 'data-label': 'Time' }, testId: 'audit-time' }, [whenElement(record.time, formatInstant(record.time))]),
      cell('Actor', [actor], 'audit-actor'),
      cell('Source', [record.source], 'audit-source', 'audit-source'),
      cell('Action', [el('span', { className: `action action-${actionTone(record.action)}`, text: actionLabel(record.action), attrs: { title: record.action } })], 'audit-action'),
      cell('Target', targetContent(record), 'audit-target'),
      el('td', { className: 'actions' }, [toggle]),
    ]);
    const details = el('tr', { className: 'audit-details', testId: 'audit-details', attrs: { id: detailsId } }, [el('td', { attrs: { colspan: '6' } }, [])]);
    details.hidden = true;
    toggle.addEventListener('click', () => {
      const open = details.hidden;
      // Built on first open: most records are never expanded.
      if (open && details.firstElementChild?.childElementCount === 0) details.firstElementChild.append(...detailContent(record));
      details.hidden = !open;
      toggle.setAttribute('aria-expanded', String(open));
      toggle.textContent = open ? 'Hide' : 'Details';
    });
    return [line, details, toggle];
  }

  /** The target's name (as it is now, else as the record wrote it) above its id. */
  function targetContent(record: AuditRecord): (Node | string)[] {
    if (record.target === null) return ['—'];
    const name = names.get(record.target) ?? recordedName(record);
    const id = el('code', { className: 'target-id', text: record.target, testId: 'audit-target-id' });
    return name === null ? [id] : [el('span', { className: 'target-name', text: name, testId: 'audit-target-name' }), id];
  }

  function detailContent(record: AuditRecord): Node[] {
    const nodes: Node[] = [];
    const changes = auditChanges(record.before, record.after);
    if (changes.length > 0) {
      const caption = record.before === null ? 'Fields as created' : record.after === null ? 'Fields before' : 'Changed fields';
      nodes.push(
        el('table', { className: 'data-table diff-table', testId: 'audit-diff' }, [
          el('caption', { text: caption }),
          el('thead', {}, [el('tr', {}, [el('th', { text: 'Field', attrs: { scope: 'col' } }), el('th', { text: 'Before', attrs: { scope: 'col' } }), el('th', { text: 'After', attrs: { scope: 'col' } })])]),
          el(
            'tbody',
            {},
            changes.map((c) =>
              el('tr', { testId: 'audit-diff-row', attrs: { 'data-field': c.field } }, [
                el('th', { text: c.field, attrs: { scope: 'row' } }),
                el('td', { className: 'diff-before' }, [el('code', { text: formatAuditValue(c.before) })]),
                el('td', { className: 'diff-after' }, [el('code', { text: formatAuditValue(c.after) })]),
              ]),
            ),
          ),
        ]),
      );
    } else if (record.before !== null || record.after !== null) {
      nodes.push(el('p', { className: 'hint', text: 'No field changed.' }));
    }
    // Values from the record (action, detail) in code type; the page's own words as text.
    const facts: [string, string, boolean][] = [['Actor', actorDescription(record.actor), false], ['Action', record.action, true]];
    for (const [field, value] of Object.entries(record.detail ?? {})) facts.push([field, formatAuditValue(value), true]);
    facts.push(['Record', `#${record.seq}`, false], ['Time', formatFullDateTime(record.time), false]);
    nodes.push(
      el(
        'dl',
        { className: 'facts audit-facts', testId: 'audit-detail' },
        facts.flatMap(([term, value, code]) => [el('dt', { text: term }), el('dd', {}, [code ? el('code', { text: value }) : value])]),
      ),
    );
    return nodes;
  }

  return {
    load: firstPage,
    reset() {
      // An answer still on its way is dropped, so nothing it would undo is left behind.
      generation++;
      table.removeAttribute('aria-busy');
      older.disabled = false;
      shown = 0;
      nextBefore = null;
      clear(body);
      summary.textContent = '';
      empty.hidden = true;
      table.hidden = true;
      older.hidden = true;
    },
  };
}

/** The name a record gives its target (a created, changed or revoked key or token), if any. */
function recordedName(record: AuditRecord): string | null {
  const name = record.after?.['name'] ?? record.before?.['name'] ?? record.detail?.['name'];
  return typeof name === 'string' && name !== '' ? name : null;
}
