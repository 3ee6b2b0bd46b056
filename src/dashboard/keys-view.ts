// The key list and its actions: create, edit, rotate, revoke, usage; the
// guard's findings per key when there are any (key-findings.ts). A raw key
// only passes through here on its way to the shown-once dialog.
import { adminApi } from './api.ts';
import type { AliasCatalogue, ApiFailure, IssuedKey, KeyRecord } from './admin-model.ts';
import { firstRequest } from './first-request.ts';
import { createConfirmDialog, createSecretDialog } from './dialogs.ts';
import { byId, clear, el, whenElement } from './dom.ts';
import { describeAliases, describeGuard, describeLimits, formatShortDateTime, LIMIT_SEPARATOR, limitParts, STATUS_LABEL } from './format.ts';
import { createKeyFindings } from './key-findings.ts';
import { createKeyForm, type KeyFormChoices } from './key-form.ts';
import { createUsageView } from './usage-view.ts';

interface KeysViewContext {
  notify(text: string): void;
  failed(failure: ApiFailure): void;
  /**
   * The alias catalogue (loaded once, then as last loaded): alias names for the
   * allowed-aliases checkboxes, the currency of money values, and the API
   * listener's address for the first request the dialog offers; null when it
   * could not be read.
   */
  catalogue(): Promise<AliasCatalogue | null>;
}

export function createKeysView(context: KeysViewContext): { load(): Promise<void>; reset(): void } {
  const body = byId('keys-body', HTMLTableSectionElement);
  const empty = byId('keys-empty', HTMLElement);
  const table = byId('keys-table', HTMLTableElement);
  const createButton = byId('create-key', HTMLButtonElement);
  const secret = createSecretDialog();
  const confirm = createConfirmDialog();
  const usage = createUsageView(context.failed);
  let keys: KeyRecord[] = [];
  let currency = '';
  const findings = createKeyFindings(context.failed, () => body.replaceChildren(...keys.map((k) => row(k, currency))));

  async function showIssued(issued: IssuedKey, verb: string): Promise<void> {
    const { record } = issued;
    context.notify(`Key “${record.name}” ${verb}.`);
    const [catalogue] = await Promise.all([context.catalogue(), load()]);
    // The raw key goes straight to the dialog; `issued` is not kept anywhere.
    await secret.show(issued.key, record.name, firstRequest(issued.key, record.allowedAliases, catalogue, location.hostname));
  }

  const form = createKeyForm({
    issued: (issued) => showIssued(issued, 'created'),
    async updated(record) {
      context.notify(`Key “${record.name}” saved.`);
      await load();
    },
    failed: context.failed,
  });

  async function formChoices(): Promise<KeyFormChoices> {
    const catalogue = await context.catalogue();
    return { aliases: catalogue?.data.map((a) => a.alias) ?? [], currency: catalogue?.currency ?? '' };
  }

  createButton.addEventListener('click', () => {
    void formChoices().then((choices) => form.create(choices));
  });

  async function rotate(key: KeyRecord): Promise<void> {
    const go = await confirm.ask({
      title: `Rotate “${key.name}”?`,
      body: 'A new secret replaces the current one at once: every client still using the old secret is refused from now on. The id, limits and usage history stay.',
      confirmLabel: 'Rotate key',
    });
    if (!go) return;
    const outcome = await adminApi.rotateKey(key.id);
    if (!outcome.ok) return context.failed(outcome.failure);
    await showIssued(outcome.value, 'rotated');
  }

  async function revoke(key: KeyRecord): Promise<void> {
    const go = await confirm.ask({
      title: `Revoke “${key.name}”?`,
      body: 'Every request with this key is refused from now on. This cannot be undone; its usage history stays.',
      confirmLabel: 'Revoke key',
    });
    if (!go) return;
    const outcome = await adminApi.revokeKey(key.id);
    if (!outcome.ok) return context.failed(outcome.failure);
    context.notify(`Key “${key.name}” revoked.`);
    await load();
  }

  async function edit(key: KeyRecord): Promise<void> {
    form.edit(key, await formChoices());
  }

  function actionButton(label: string, accessibleName: string, testId: string, run: (button: HTMLButtonElement) => Promise<void>, tone = ''): HTMLButtonElement {
    const button = el('button', { text: label, className: `button-small ${tone}`.trim(), testId, attrs: { type: 'button', 'aria-label': accessibleName } });
    button.addEventListener('click', () => void run(button));
    return button;
  }

  /** One line in the table; the whole instant is in the title (hover, long press, screen readers via datetime). */
  function when(iso: string | null): Node | string {
    return iso === null ? 'Never' : whenElement(iso, formatShortDateTime(iso));
  }

  /** The phrases of describeLimits, one per line; the separators are still read out (and copied). */
  function limitsText(key: KeyRecord, currency: string): (Node | string)[] {
    const parts = limitParts(key.limits, currency);
    if (parts.length === 0) return [describeLimits(key.limits, currency)];
    return parts.flatMap((part, i) => {
      const phrase = el('span', { className: 'limit', text: part });
      return i === 0 ? [phrase] : [el('span', { className: 'visually-hidden', text: LIMIT_SEPARATOR }), phrase];
    });
  }

  /** The key's own guard under its limits, read-only (set with the CLI or the admin API); nothing when it has none. */
  function guardLine(key: KeyRecord): Node | string {
    const text = describeGuard(key.guard);
    return text === '' ? '' : el('div', { className: 'key-guard', testId: 'key-guard', text: `Guard: ${text}` });
  }

  function row(key: KeyRecord, currency: string): HTMLTableRowElement {
    const live = key.status === 'active';
    const cell = (label: string, content: (Node | string)[], testId?: string): HTMLTableCellElement =>
      el('td', { attrs: { 'data-label': label }, ...(testId === undefined ? {} : { testId }) }, content);
    // The key's prefix goes under its name: one column less, and the two are read together.
    const tr = el('tr', { testId: 'key-row', attrs: { 'data-key-id': key.id } }, [
      el('th', { attrs: { scope: 'row', 'data-label': 'Name' }, className: 'key-name' }, [
        el('div', { className: 'key-ident' }, [
          el('span', { className: 'key-name-text', testId: 'key-name', text: key.name }),
          el('code', { className: 'key-prefix', testId: 'key-prefix', text: `${key.prefix}…`, attrs: { title: `Key id ${key.id}` } }),
        ]),
      ]),
      cell('Status', [el('span', { className: `badge badge-${key.status}`, text: STATUS_LABEL[key.status] })], 'key-status'),
      cell('Created', [when(key.createdAt)], 'key-created'),
      cell('Last used', [when(key.lastUsedAt)], 'key-last-used'),
      cell('Expires', [when(key.expiresAt)], 'key-expires'),
      cell('Aliases', [describeAliases(key.allowedAliases)], 'key-aliases'),
      // One child for the same reason as the findings' cell: the guard line goes under the limits, not beside the label.
      cell('Limits', [el('div', {}, [el('span', {}, limitsText(key, currency)), guardLine(key)])], 'key-limits'),
      findings.cell(key.id),
      el('td', { className: 'actions', attrs: { 'data-label': 'Actions' } }, [
        el('div', { className: 'action-group' }, [
          actionButton('Usage', `Usage of ${key.name}`, 'key-usage', (button) => usage.show(key, button)),
          key.status !== 'revoked' && actionButton('Edit', `Edit ${key.name}`, 'key-edit', () => edit(key)),
          live && actionButton('Rotate', `Rotate ${key.name}`, 'key-rotate', () => rotate(key)),
          key.status !== 'revoked' && actionButton('Revoke', `Revoke ${key.name}`, 'key-revoke', () => revoke(key), 'button-danger'),
        ]),
      ]),
    ]);
    return tr;
  }

  async function load(): Promise<void> {
    table.setAttribute('aria-busy', 'true');
    const [outcome] = await Promise.all([adminApi.listKeys(), findings.load()]);
    table.removeAttribute('aria-busy');
    if (!outcome.ok) return context.failed(outcome.failure);
    keys = outcome.value.data;
    // Only a spending budget needs the currency, which the key records do not carry.
    currency = keys.some((k) => k.limits.costBudget != null) ? ((await context.catalogue())?.currency ?? '') : '';
    body.replaceChildren(...keys.map((k) => row(k, currency)));
    empty.hidden = keys.length > 0;
    table.hidden = keys.length === 0;
    // Keep the usage panel in step with the list (a rotated or revoked key keeps its id).
    const shown = usage.shownKeyId();
    if (shown !== null) {
      const current = keys.find((k) => k.id === shown);
      if (current === undefined) usage.hide();
      else await usage.show(current);
    }
  }

  return {
    load,
    reset() {
      keys = [];
      clear(body);
      findings.reset();
      usage.hide();
    },
  };
}
