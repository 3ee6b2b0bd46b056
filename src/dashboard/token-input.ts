// The create-token form as the body of POST /api/tokens: a name, the scopes,
// and an expiry of 7, 30 or 90 days or a picked date. Pure (no DOM), tested on its own.
import type { TokenRequest, TokenScope } from './admin-model.ts';
import { expiryFromDateInput } from './format.ts';

export const TOKEN_SCOPES: readonly TokenScope[] = ['read', 'keys'];

export const SCOPE_LABEL: Record<TokenScope, string> = { read: 'Read', keys: 'Manage keys' };

/** The expiries offered, in days; "date" takes the date field. */
export const EXPIRY_CHOICES = ['7', '30', '90', 'date'] as const;
export type ExpiryChoice = (typeof EXPIRY_CHOICES)[number];

const DAY_MS = 86_400_000;
/** The server refuses an expiry further ahead (docs/admin-api.md, "Tokens"). */
export const MAX_TOKEN_DAYS = 366;
export const MAX_TOKEN_NAME = 64;

export interface TokenFormInput {
  name: string;
  scopes: TokenScope[];
  expiry: string;
  /** `<input type="date">` value, read when expiry is "date". */
  date: string;
}

export type TokenFormField = 'name' | 'scopes' | 'expiry' | 'date';
export type TokenFormOutcome = { ok: true; request: TokenRequest } | { ok: false; field: TokenFormField; message: string };

function isExpiryChoice(value: string): value is ExpiryChoice {
  return (EXPIRY_CHOICES as readonly string[]).includes(value);
}

export function tokenRequest(input: TokenFormInput, now: Date): TokenFormOutcome {
  const name = input.name.trim();
  if (name === '') return { ok: false, field: 'name', message: 'Name the token after what uses it, e.g. “ci-deploy”.' };
  if (name.length > MAX_TOKEN_NAME) return { ok: false, field: 'name', message: `Shorten the name to at most ${MAX_TOKEN_NAME} characters.` };
  const scopes = TOKEN_SCOPES.filter((scope) => input.scopes.includes(scope));
  if (scopes.length === 0) return { ok: false, field: 'scopes', message: 'Choose what the token may do: read, manage keys, or both.' };
  if (!isExpiryChoice(input.expiry)) return { ok: false, field: 'expiry', message: 'Choose when the token expires.' };
  if (input.expiry !== 'date') {
    return { ok: true, request: { name, scopes, expiresAt: new Date(now.getTime() + Number(input.expiry) * DAY_MS).toISOString() } };
  }
  if (input.date === '') return { ok: false, field: 'date', message: 'Pick the day the token expires.' };
  const expiresAt = expiryFromDateInput(input.date);
  if (expiresAt === null) return { ok: false, field: 'date', message: 'Enter the expiry as a date, e.g. 2027-03-31.' };
  const at = Date.parse(expiresAt);
  if (at <= now.getTime()) return { ok: false, field: 'date', message: 'Pick a day from today on: the token would already have expired.' };
  if (at > now.getTime() + MAX_TOKEN_DAYS * DAY_MS) return { ok: false, field: 'date', message: `Pick a day at most ${MAX_TOKEN_DAYS} days ahead; create a new token when this one nears its end.` };
  return { ok: true, request: { name, scopes, expiresAt } };
}

/** "Read, Manage keys". */
export function describeScopes(scopes: readonly string[]): string {
  return scopes.map((s) => (SCOPE_LABEL as Record<string, string>)[s] ?? s).join(', ');
}
