// The key form's text, checked and turned into the create/update body. Pure:
// no DOM, so it is unit-tested in Node; key-form.ts reads the fields into a
// KeyFormText and shows the FieldProblem beside the input it names.
import type { BudgetPeriod, KeyChanges } from './admin-model.ts';
import { expiryFromDateInput, formatCount } from './format.ts';
import { AmountProblem, MAX_BUDGET_AMOUNT, parseBudgetAmount } from './money.ts';

export interface KeyFormText {
  name: string;
  allAliases: boolean;
  aliases: string[];
  expiryDate: string;
  requestsPerMinute: string;
  tokensPerMinute: string;
  concurrentRequests: string;
  budgetTokens: string;
  budgetPeriod: string;
  costBudgetAmount: string;
  costBudgetPeriod: string;
  /** The gateway's currency, for the messages; '' when unknown. */
  currency: string;
}

export interface FieldProblem {
  /** The input's id in index.html. */
  field: string;
  message: string;
}

type KeyFormParse = { ok: true; changes: KeyChanges & { name: string } } | { ok: false; problem: FieldProblem };

/** Names are shown in lists and logs; the server enforces its own bound too. */
const MAX_NAME_LENGTH = 100;
const MAX_LIMIT = 1_000_000_000_000;

function parseLimit(text: string, field: string, label: string): { ok: true; value: number | null } | { ok: false; problem: FieldProblem } {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: true, value: null };
  if (!/^\d{1,13}$/.test(trimmed) || Number(trimmed) < 1 || Number(trimmed) > MAX_LIMIT) {
    return { ok: false, problem: { field, message: `${label} must be a whole number of at least 1, or empty for no limit.` } };
  }
  return { ok: true, value: Number(trimmed) };
}

function parsePeriod(text: string, field: string, label: string): { ok: true; value: BudgetPeriod } | { ok: false; problem: FieldProblem } {
  if (text === 'day' || text === 'month') return { ok: true, value: text };
  return { ok: false, problem: { field, message: `The ${label} period is a day or a month.` } };
}

const AMOUNT_EXAMPLE = '25.50';

function amountMessage(reason: AmountProblem, currency: string): string {
  const unit = currency === '' ? 'currency units' : currency;
  switch (reason) {
    case AmountProblem.comma:
      return `Write the spending budget with a dot for decimals and no commas, e.g. ${AMOUNT_EXAMPLE}.`;
    case AmountProblem.tooManyDecimals:
      return 'The spending budget has more than 6 decimals.';
    case AmountProblem.zero:
      return 'The spending budget must be more than 0, or empty for no budget.';
    case AmountProblem.tooLarge:
      return `The spending budget is at most ${formatCount(MAX_BUDGET_AMOUNT)} ${unit}.`;
    case AmountProblem.notAnAmount:
      return `The spending budget is an amount in ${unit} such as ${AMOUNT_EXAMPLE}, or empty for no budget.`;
  }
}

/** Checks the form's text and builds the request body; `now` makes "in the past" testable. */
export function parseKeyForm(text: KeyFormText, now: Date): KeyFormParse {
  const name = text.name.trim();
  if (name === '') return { ok: false, problem: { field: 'key-name', message: 'Give the key a name, such as the app or team that uses it.' } };
  if (name.length > MAX_NAME_LENGTH) return { ok: false, problem: { field: 'key-name', message: `The name is longer than ${MAX_NAME_LENGTH} characters.` } };
  if (!text.allAliases && text.aliases.length === 0) {
    return { ok: false, problem: { field: 'aliases-all', message: 'Pick at least one alias, or allow all aliases.' } };
  }
  let expiresAt: string | null = null;
  if (text.expiryDate !== '') {
    expiresAt = expiryFromDateInput(text.expiryDate);
    if (expiresAt === null) return { ok: false, problem: { field: 'key-expiry', message: 'The expiry date is not a valid date.' } };
    if (Date.parse(expiresAt) <= now.getTime()) return { ok: false, problem: { field: 'key-expiry', message: 'The expiry date is in the past.' } };
  }
  const rpm = parseLimit(text.requestsPerMinute, 'limit-rpm', 'Requests per minute');
  if (!rpm.ok) return rpm;
  const tpm = parseLimit(text.tokensPerMinute, 'limit-tpm', 'Tokens per minute');
  if (!tpm.ok) return tpm;
  const concurrent = parseLimit(text.concurrentRequests, 'limit-concurrent', 'Concurrent requests');
  if (!concurrent.ok) return concurrent;
  const budget = parseLimit(text.budgetTokens, 'limit-budget', 'The token budget');
  if (!budget.ok) return budget;
  const period = parsePeriod(text.budgetPeriod, 'limit-budget-period', 'token budget');
  if (!period.ok) return period;
  const cost = parseBudgetAmount(text.costBudgetAmount);
  if (!cost.ok) return { ok: false, problem: { field: 'limit-cost-budget', message: amountMessage(cost.reason, text.currency) } };
  const costPeriod = parsePeriod(text.costBudgetPeriod, 'limit-cost-budget-period', 'spending budget');
  if (!costPeriod.ok) return costPeriod;
  return {
    ok: true,
    changes: {
      name,
      allowedAliases: text.allAliases ? null : [...new Set(text.aliases)].sort(),
      expiresAt,
      limits: {
        requestsPerMinute: rpm.value,
        tokensPerMinute: tpm.value,
        concurrentRequests: concurrent.value,
        tokenBudget: budget.value === null ? null : { tokens: budget.value, period: period.value },
        costBudget: cost.amount === null ? null : { amount: cost.amount, period: costPeriod.value },
      },
    },
  };
}

/** Which input a server error's `param` is about (the longest known prefix of it). */
const PARAM_FIELDS: Record<string, string> = {
  name: 'key-name',
  allowedAliases: 'aliases-all',
  expiresAt: 'key-expiry',
  'limits.requestsPerMinute': 'limit-rpm',
  'limits.tokensPerMinute': 'limit-tpm',
  'limits.concurrentRequests': 'limit-concurrent',
  'limits.tokenBudget': 'limit-budget',
  'limits.tokenBudget.period': 'limit-budget-period',
  'limits.costBudget': 'limit-cost-budget',
  'limits.costBudget.period': 'limit-cost-budget-period',
};

export function fieldForParam(param: string | null): string {
  // "allowedAliases[2]" -> "allowedAliases"; "limits.tokenBudget.tokens" -> "limits.tokenBudget".
  let path = (param ?? '').replace(/\[\d+\]/g, '');
  for (let depth = 0; depth < 4 && path !== ''; depth++) {
    const field = PARAM_FIELDS[path];
    if (field !== undefined) return field;
    const dot = path.lastIndexOf('.');
    path = dot < 0 ? '' : path.slice(0, dot);
  }
  return 'key-name';
}
