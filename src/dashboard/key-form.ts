// The create/edit key dialog: name, allowed aliases, expiry, limits. Field
// text is read into a plain record, checked by parseKeyForm (pure), then sent;
// the server's own 400s are shown beside the field they name.
import type { ApiFailure, IssuedKey, KeyRecord } from './admin-model.ts';
import { adminApi } from './api.ts';
import { byId, clear, el } from './dom.ts';
import { dateInputFromExpiry } from './format.ts';
import { fieldForParam, parseKeyForm, type FieldProblem } from './key-form-input.ts';

interface KeyFormCallbacks {
  issued(issued: IssuedKey): Promise<void>;
  updated(record: KeyRecord): Promise<void>;
  failed(failure: ApiFailure): void;
}

/** What the form offers: the configured alias names and the gateway's currency ('' when unknown). */
export interface KeyFormChoices {
  aliases: string[];
  currency: string;
}

export function createKeyForm(callbacks: KeyFormCallbacks): { create(choices: KeyFormChoices): void; edit(key: KeyRecord, choices: KeyFormChoices): void } {
  const dialog = byId('key-form-dialog', HTMLDialogElement);
  const form = byId('key-form', HTMLFormElement);
  const heading = byId('key-form-title', HTMLElement);
  const submit = byId('key-form-submit', HTMLButtonElement);
  const cancel = byId('key-form-cancel', HTMLButtonElement);
  const error = byId('key-form-error', HTMLElement);
  const name = byId('key-name', HTMLInputElement);
  const allAliases = byId('aliases-all', HTMLInputElement);
  const aliasChoices = byId('alias-choices', HTMLElement);
  const expiry = byId('key-expiry', HTMLInputElement);
  const rpm = byId('limit-rpm', HTMLInputElement);
  const tpm = byId('limit-tpm', HTMLInputElement);
  const concurrent = byId('limit-concurrent', HTMLInputElement);
  const budgetTokens = byId('limit-budget', HTMLInputElement);
  const budgetPeriod = byId('limit-budget-period', HTMLSelectElement);
  const costBudget = byId('limit-cost-budget', HTMLInputElement);
  const costBudgetPeriod = byId('limit-cost-budget-period', HTMLSelectElement);
  const costBudgetCurrency = byId('limit-cost-budget-currency', HTMLElement);
  let currency = '';
  let editing: KeyRecord | null = null;
  let busy = false;

  const aliasBoxes = (): HTMLInputElement[] => [...aliasChoices.querySelectorAll<HTMLInputElement>('input[type="checkbox"]')];
  const syncAliasBoxes = (): void => {
    for (const box of aliasBoxes()) box.disabled = allAliases.checked;
  };
  allAliases.addEventListener('change', syncAliasBoxes);
  cancel.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => {
    editing = null;
    form.reset();
    showProblem(null);
  });

  const actions = submit.parentElement as HTMLElement;

  /**
   * The message goes right below the field it is about (after its row of
   * fields, or at the end of its fieldset), so a phone shows both where the
   * focus lands instead of one screen apart; with no problem it goes home,
   * above the buttons.
   */
  function showProblem(problem: FieldProblem | null): void {
    for (const input of form.querySelectorAll('[aria-invalid]')) input.removeAttribute('aria-invalid');
    const input = problem === null ? null : document.getElementById(problem.field);
    const row = input?.closest('.field-grid');
    const fieldset = input?.closest('fieldset');
    if (input == null) actions.before(error);
    else if (row != null) row.after(error);
    else if (fieldset != null) fieldset.append(error);
    else input.after(error);
    error.textContent = problem?.message ?? '';
    if (input != null) {
      input.setAttribute('aria-invalid', 'true');
      input.focus();
    }
  }

  function fill(key: KeyRecord | null, { aliases, currency: gatewayCurrency }: KeyFormChoices): void {
    form.reset();
    currency = gatewayCurrency;
    costBudgetCurrency.textContent = currency === '' ? '' : ` (${currency})`;
    showProblem(null);
    const allowed = key?.allowedAliases ?? null;
    // An alias the key may use but the config no longer has stays listed, so saving does not drop it silently.
    const names = [...new Set([...aliases, ...(allowed ?? [])])].sort();
    clear(aliasChoices);
    for (const alias of names) {
      const id = `alias-choice-${alias.replace(/[^A-Za-z0-9_-]/g, '_')}`;
      const box = el('input', { attrs: { type: 'checkbox', id, name: 'alias', value: alias }, testId: `alias-choice-${alias}` });
      box.checked = allowed !== null && allowed.includes(alias);
      aliasChoices.append(el('div', { className: 'check' }, [box, el('label', { text: aliases.includes(alias) ? alias : `${alias} (not configured)`, attrs: { for: id } })]));
    }
    allAliases.checked = allowed === null;
    syncAliasBoxes();
    name.value = key?.name ?? '';
    expiry.value = dateInputFromExpiry(key?.expiresAt ?? null);
    expiry.min = dateInputFromExpiry(new Date().toISOString());
    const limits = key?.limits;
    rpm.value = limits?.requestsPerMinute == null ? '' : String(limits.requestsPerMinute);
    tpm.value = limits?.tokensPerMinute == null ? '' : String(limits.tokensPerMinute);
    concurrent.value = limits?.concurrentRequests == null ? '' : String(limits.concurrentRequests);
    budgetTokens.value = limits?.tokenBudget == null ? '' : String(limits.tokenBudget.tokens);
    budgetPeriod.value = limits?.tokenBudget?.period ?? 'month';
    // As stored: the amount the operator wrote, never reformatted to a rounded or grouped text.
    costBudget.value = limits?.costBudget == null ? '' : String(limits.costBudget.amount);
    costBudgetPeriod.value = limits?.costBudget?.period ?? 'month';
  }

  // Once the operator edits the field a problem names, the message is out of date.
  form.addEventListener('input', (event) => {
    if (event.target instanceof Element && event.target.getAttribute('aria-invalid') === 'true') showProblem(null);
  });

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (!busy) void save();
  });

  async function save(): Promise<void> {
    const parsed = parseKeyForm(
      {
        name: name.value,
        allAliases: allAliases.checked,
        aliases: aliasBoxes().filter((b) => b.checked).map((b) => b.value),
        expiryDate: expiry.value,
        requestsPerMinute: rpm.value,
        tokensPerMinute: tpm.value,
        concurrentRequests: concurrent.value,
        budgetTokens: budgetTokens.value,
        budgetPeriod: budgetPeriod.value,
        costBudgetAmount: costBudget.value,
        costBudgetPeriod: costBudgetPeriod.value,
        currency,
      },
      new Date(),
    );
    if (!parsed.ok) {
      showProblem(parsed.problem);
      return;
    }
    busy = true;
    submit.disabled = true;
    const target = editing;
    const outcome = target === null ? await adminApi.createKey(parsed.changes) : await adminApi.updateKey(target.id, parsed.changes);
    busy = false;
    submit.disabled = false;
    if (!outcome.ok) {
      const f = outcome.failure;
      if (f.status === 400 || f.status === 409 || f.status === 422) {
        showProblem({ field: fieldForParam(f.param), message: f.message });
      } else {
        dialog.close();
        callbacks.failed(f);
      }
      return;
    }
    dialog.close();
    if (target === null) await callbacks.issued(outcome.value as IssuedKey);
    else await callbacks.updated(outcome.value as KeyRecord);
  }

  return {
    create(choices) {
      fill(null, choices);
      heading.textContent = 'Create a key';
      submit.textContent = 'Create key';
      dialog.showModal();
      name.focus();
    },
    edit(key, choices) {
      fill(key, choices);
      editing = key;
      heading.textContent = `Edit “${key.name}”`;
      submit.textContent = 'Save changes';
      dialog.showModal();
      name.focus();
    },
  };
}
