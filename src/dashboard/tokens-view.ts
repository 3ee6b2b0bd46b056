// Admin API tokens: the list, the create dialog, the shown-once token, revoke.
// Only a signed-in session reaches the dashboard, and only a session may
// manage tokens (a token cannot mint tokens), so every signed-in user sees it.
// The raw token only passes through here on its way to the shown-once dialog.
import { adminApi } from './api.ts';
import type { ApiFailure, TokenScope, TokenView } from './admin-model.ts';
import { createdByLabel } from './audit-labels.ts';
import { createConfirmDialog, createSecretDialog, TOKEN_WORDING } from './dialogs.ts';
import { byId, clear, el, whenElement } from './dom.ts';
import { dateInputFromExpiry, formatShortDateTime, STATUS_LABEL } from './format.ts';
import { describeScopes, MAX_TOKEN_DAYS, TOKEN_SCOPES, tokenRequest, type TokenFormField } from './token-input.ts';

interface TokensViewContext {
  notify(text: string): void;
  failed(failure: ApiFailure): void;
}

export function createTokensView(context: TokensViewContext): { load(): Promise<void>; reset(): void } {
  const body = byId('tokens-body', HTMLTableSectionElement);
  const empty = byId('tokens-empty', HTMLElement);
  const table = byId('tokens-table', HTMLTableElement);
  const createButton = byId('create-token', HTMLButtonElement);
  const dialog = byId('token-form-dialog', HTMLDialogElement);
  const form = byId('token-form', HTMLFormElement);
  const nameInput = byId('token-name', HTMLInputElement);
  const dateInput = byId('token-date', HTMLInputElement);
  const formError = byId('token-form-error', HTMLElement);
  const submit = byId('token-form-submit', HTMLButtonElement);
  const secret = createSecretDialog();
  const confirm = createConfirmDialog();

  const fieldElement: Record<TokenFormField, HTMLElement> = {
    name: nameInput,
    scopes: byId('token-scope-read', HTMLInputElement),
    expiry: byId('token-expiry-30', HTMLInputElement),
    date: dateInput,
  };

  const expiryChoice = (): string => form.querySelector<HTMLInputElement>('input[name="expiry"]:checked')?.value ?? '';
  const syncDate = (): void => {
    dateInput.hidden = expiryChoice() !== 'date';
  };
  for (const radio of form.querySelectorAll<HTMLInputElement>('input[name="expiry"]')) {
    radio.addEventListener('change', () => {
      syncDate();
      if (!dateInput.hidden) dateInput.focus();
    });
  }

  function clearProblem(): void {
    formError.textContent = '';
    for (const input of Object.values(fieldElement)) input.removeAttribute('aria-invalid');
  }

  createButton.addEventListener('click', () => {
    form.reset();
    syncDate();
    // The picker offers only days the server accepts (tokenRequest checks them again).
    const now = Date.now();
    dateInput.min = dateInputFromExpiry(new Date(now).toISOString());
    // The last whole day: its end is at most MAX_TOKEN_DAYS ahead.
    dateInput.max = dateInputFromExpiry(new Date(now + (MAX_TOKEN_DAYS - 1) * 86_400_000).toISOString());
    clearProblem();
    submit.disabled = false;
    dialog.showModal();
    nameInput.focus();
  });
  byId('token-form-cancel', HTMLButtonElement).addEventListener('click', () => dialog.close());
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void create();
  });

  async function create(): Promise<void> {
    clearProblem();
    const scopes = [...form.querySelectorAll<HTMLInputElement>('input[name="scope"]:checked')].map((box) => box.value as TokenScope);
    const outcome = tokenRequest({ name: nameInput.value, scopes, expiry: expiryChoice(), date: dateInput.value }, new Date());
    if (!outcome.ok) {
      formError.textContent = outcome.message;
      const field = fieldElement[outcome.field];
      field.setAttribute('aria-invalid', 'true');
      field.focus();
      return;
    }
    submit.disabled = true;
    const created = await adminApi.createToken(outcome.request);
    submit.disabled = false;
    if (!created.ok) {
      if (created.failure.status === 401) return;
      formError.textContent = created.failure.message;
      const param = created.failure.param;
      const field = param === 'name' ? fieldElement.name : param === 'scopes' ? fieldElement.scopes : param === 'expiresAt' ? (expiryChoice() === 'date' ? dateInput : fieldElement.expiry) : null;
      field?.setAttribute('aria-invalid', 'true');
      field?.focus();
      return;
    }
    dialog.close();
    const { record } = created.value;
    context.notify(`Token “${record.name}” created.`);
    await load();
    // The raw token goes straight to the dialog; `created` is not kept anywhere.
    await secret.show(created.value.token, record.name, null, TOKEN_WORDING);
  }

  async function revoke(token: TokenView): Promise<void> {
    const go = await confirm.ask({
      title: `Revoke “${token.name}”?`,
      body: 'Every admin API request with this token is refused from now on. This cannot be undone.',
      confirmLabel: 'Revoke token',
    });
    if (!go) return;
    const outcome = await adminApi.revokeToken(token.id);
    if (!outcome.ok) return context.failed(outcome.failure);
    context.notify(`Token “${token.name}” revoked.`);
    await load();
  }

  function row(token: TokenView): HTMLTableRowElement {
    const cell = (label: string, content: (Node | string)[], testId: string): HTMLTableCellElement => el('td', { attrs: { 'data-label': label }, testId }, content);
    const scopes = TOKEN_SCOPES.filter((s) => token.scopes.includes(s));
    return el('tr', { testId: 'token-row', attrs: { 'data-token-id': token.id } }, [
      el('th', { attrs: { scope: 'row', 'data-label': 'Name' }, testId: 'token-name', className: 'key-name', text: token.name }),
      cell('Token', [el('code', { text: `${token.prefix}…` })], 'token-prefix'),
      cell('Scopes', [describeScopes(scopes.length === token.scopes.length ? scopes : token.scopes)], 'token-scopes'),
      cell('Created', [whenElement(token.createdAt, formatShortDateTime(token.createdAt))], 'token-created'),
      cell('Expires', [whenElement(token.expiresAt, formatShortDateTime(token.expiresAt))], 'token-expires'),
      cell('Status', [el('span', { className: `badge badge-${token.status}`, text: STATUS_LABEL[token.status] ?? token.status })], 'token-status'),
      cell('Created by', [createdByLabel(token.createdBy)], 'token-created-by'),
      el('td', { className: 'actions', attrs: { 'data-label': 'Actions' } }, [
        token.status === 'active' && (() => {
          const button = el('button', { text: 'Revoke', className: 'button-small button-danger', testId: 'token-revoke', attrs: { type: 'button', 'aria-label': `Revoke ${token.name}` } });
          button.addEventListener('click', () => void revoke(token));
          return button;
        })(),
      ]),
    ]);
  }

  async function load(): Promise<void> {
    table.setAttribute('aria-busy', 'true');
    const outcome = await adminApi.listTokens();
    table.removeAttribute('aria-busy');
    if (!outcome.ok) return context.failed(outcome.failure);
    const tokens = outcome.value.data;
    body.replaceChildren(...tokens.map((t) => row(t)));
    empty.hidden = tokens.length > 0;
    table.hidden = tokens.length === 0;
  }

  return {
    load,
    reset() {
      clear(body);
      if (dialog.open) dialog.close();
    },
  };
}
