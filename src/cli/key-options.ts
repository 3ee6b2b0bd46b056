// Command-line flags for a key's settings, shared by `keys create` and
// `keys update`. Flags become the same JSON-shaped values the admin API
// takes, so src/keys/key-settings.ts checks both the same way.
//
//   --allow ALIAS[,ALIAS...] | all     aliases the key may resolve to
//   --expires ISO-TIME | never         e.g. 2027-01-31T00:00:00Z
//   --rpm N | none                     requests per minute
//   --tpm N | none                     tokens per minute
//   --concurrency N | none             requests at once
//   --budget N/day | N/month | none    tokens per UTC day or month
//   --cost-budget AMOUNT/day | AMOUNT/month | none
//                                      money per UTC day or month, in the config's currency
//   --guard DETECTOR=ACTION | none     repeatable; the key's guard detectors, whole
import { InvalidKeyNameError, type InvalidKeySettingError } from '../keys/errors.ts';
import type { KeyGuard } from '../guard/guard-policy.ts';
import { MAX_BUDGET_TOKENS, MAX_COST_BUDGET, MAX_RATE_LIMIT, NO_LIMITS, type KeyLimits } from '../limits/key-limits.ts';

export const KEY_SETTING_OPTIONS = {
  allow: { type: 'string' },
  expires: { type: 'string' },
  rpm: { type: 'string' },
  tpm: { type: 'string' },
  concurrency: { type: 'string' },
  budget: { type: 'string' },
  'cost-budget': { type: 'string' },
  guard: { type: 'string', multiple: true },
} as const;

export const KEY_SETTING_HELP = `  --allow ALIASES       Comma-separated aliases the key may use, or "all" (default all)
  --expires TIME        Expiry as an ISO 8601 time with a zone (2027-01-31T00:00:00Z), or "never"
  --rpm N               Requests per minute ("none" for unlimited)
  --tpm N               Tokens per minute, estimated before and settled after each call ("none")
  --concurrency N       Requests at once ("none")
  --budget N/PERIOD     Tokens per UTC day or month, e.g. 2000000/month ("none")
  --cost-budget AMOUNT  Money per UTC day or month in the config's currency, e.g. 25.50/month ("none")
  --guard NAME=ACTION   The egress guard for this key's requests, stricter than the alias's only: a
                        detector or group (secrets, personal) and off, log, mask or block, e.g.
                        --guard secrets=block --guard email=mask. Repeat it for each; the ones given
                        replace the key's whole guard ("none" removes it)
`;

/** A flag value that cannot be read; the message is shown as a usage error. */
export class KeyOptionError extends Error {
  override name = 'KeyOptionError';
}

type Values = Record<string, string | boolean | string[] | undefined>;
type MutableLimits = { -readonly [K in keyof KeyLimits]: KeyLimits[K] };

/** The settings named on the command line; absent flags are absent fields. */
export function keySettingsFromFlags(values: Values, current: KeyLimits | null): { allowedAliases?: unknown; expiresAt?: unknown; limits?: unknown; guard?: unknown } {
  const out: { allowedAliases?: unknown; expiresAt?: unknown; limits?: unknown; guard?: unknown } = {};
  const allow = values['allow'];
  if (typeof allow === 'string') {
    out.allowedAliases = allow === 'all' ? null : allow.split(',').map((a) => a.trim()).filter((a) => a !== '');
  }
  const expires = values['expires'];
  if (typeof expires === 'string') out.expiresAt = expires === 'never' ? null : expires;

  const changes = limitChangesFromFlags(values);
  if (changes !== undefined) out.limits = { ...NO_LIMITS, ...current, ...changes };
  const guard = guardFromFlags(values['guard']);
  if (guard !== undefined) out.guard = guard;
  return out;
}

/**
 * The key's guard from repeated `--guard NAME=ACTION` ("none": null), or
 * undefined when none is given. The names and actions are checked by the key
 * settings; only the shape of each flag is checked here.
 */
export function guardFromFlags(given: Values[string]): { detectors: Record<string, string> } | null | undefined {
  if (given === undefined || typeof given === 'boolean') return undefined;
  const entries = typeof given === 'string' ? [given] : given;
  if (entries.includes('none')) {
    if (entries.length > 1) throw new KeyOptionError('--guard none removes the key\'s guard; give it alone');
    return null;
  }
  const detectors = new Map<string, string>();
  for (const entry of entries) {
    const m = /^([^=\s]+)=([^=\s]+)$/.exec(entry.trim());
    if (m === null) throw new KeyOptionError(`--guard must look like DETECTOR=ACTION (secrets=block, email=mask), or be "none"; got ${JSON.stringify(entry)}`);
    const [, name, action] = m as unknown as [string, string, string];
    if (detectors.has(name)) throw new KeyOptionError(`--guard names ${name} twice`);
    detectors.set(name, action);
  }
  // Own properties, whatever the names (`__proto__` too): the settings check refuses what is not a detector.
  return { detectors: Object.fromEntries(detectors) };
}

/** One line describing a key's guard: `secrets=block, email=mask`, or none. */
export function describeGuard(guard: KeyGuard | null): string {
  if (guard === null) return 'none';
  const entries = Object.entries(guard.detectors);
  return entries.length === 0 ? 'none' : entries.map(([name, action]) => `${name}=${action}`).join(', ');
}

const LIMIT_FLAGS: ReadonlyArray<[flag: string, field: 'requestsPerMinute' | 'tokensPerMinute' | 'concurrentRequests']> = [
  ['rpm', 'requestsPerMinute'],
  ['tpm', 'tokensPerMinute'],
  ['concurrency', 'concurrentRequests'],
];

/**
 * Only the limits named on the command line ("none" as null), or undefined when
 * none is named. `keys update` hands these to the store, which merges them with
 * the key's current limits under its lock, so a concurrent change of another
 * limit is not undone.
 */
export function limitChangesFromFlags(values: Values): Partial<MutableLimits> | undefined {
  const changes: Partial<MutableLimits> = {};
  for (const [flag, field] of LIMIT_FLAGS) {
    const v = values[flag];
    if (typeof v === 'string') changes[field] = v === 'none' ? null : count(flag, v);
  }
  const budget = values['budget'];
  if (typeof budget === 'string') {
    if (budget === 'none') {
      changes.tokenBudget = null;
    } else {
      const m = /^(\d+)\/(day|month)$/.exec(budget);
      if (m === null) throw new KeyOptionError(`--budget must look like 2000000/month or 50000/day, or be "none"`);
      changes.tokenBudget = { tokens: count('budget', m[1] as string, MAX_BUDGET_TOKENS), period: m[2] as 'day' | 'month' };
    }
  }
  const costBudget = values['cost-budget'];
  if (typeof costBudget === 'string') changes.costBudget = costBudget === 'none' ? null : parseCostBudgetFlag(costBudget);
  return Object.keys(changes).length === 0 ? undefined : changes;
}

/** `25.50/month` -> { amount: 25.5, period: 'month' }; the amount as written, at most 6 decimals. */
function parseCostBudgetFlag(text: string): NonNullable<KeyLimits['costBudget']> {
  const m = /^(\d{1,7}(?:\.\d{1,6})?)\/(day|month)$/.exec(text);
  if (m === null) throw new KeyOptionError(`--cost-budget must look like 25.50/month or 5/day (an amount with at most 6 decimals, a slash, day or month), or be "none"`);
  const amount = Number(m[1]);
  if (amount <= 0 || amount > MAX_COST_BUDGET) throw new KeyOptionError(`--cost-budget: the amount must be above 0 and at most ${MAX_COST_BUDGET}; got ${m[1] as string}`);
  return { amount, period: m[2] as 'day' | 'month' };
}

/** A money amount as people read it: at least 2 decimals, up to the 6 a budget may have (25.5 -> "25.50"). */
export function formatAmount(amount: number): string {
  return amount.toFixed(6).replace(/(\.\d\d\d*?)0+$/, '$1');
}

function count(flag: string, text: string, max = MAX_RATE_LIMIT): number {
  if (!/^\d{1,13}$/.test(text) || Number(text) < 1 || Number(text) > max) {
    throw new KeyOptionError(`--${flag} must be a whole number from 1 to ${max}, or "none"`);
  }
  return Number(text);
}

/**
 * One line describing a key's limits for tables and show output. `currency` is the
 * config's, for the cost budget (`25.50 USD/month`); without one the code is left out.
 */
export function describeLimits(limits: KeyLimits, currency?: string): string {
  const parts: string[] = [];
  if (limits.requestsPerMinute !== null) parts.push(`${limits.requestsPerMinute} rpm`);
  if (limits.tokensPerMinute !== null) parts.push(`${limits.tokensPerMinute} tpm`);
  if (limits.concurrentRequests !== null) parts.push(`${limits.concurrentRequests} at once`);
  if (limits.tokenBudget !== null) parts.push(`${limits.tokenBudget.tokens} tokens/${limits.tokenBudget.period}`);
  if (limits.costBudget !== null) parts.push(`${formatAmount(limits.costBudget.amount)}${currency === undefined ? '' : ` ${currency}`}/${limits.costBudget.period}`);
  return parts.length === 0 ? 'none' : parts.join(', ');
}

/**
 * A refused key setting in the words of the command line: the flag that was
 * typed and, for one entry of --allow, that entry; never the record's field
 * names (allowedAliases[0], expiresAt).
 */
export function inFlagWords(error: InvalidKeySettingError | InvalidKeyNameError, values: Values): string {
  if (error instanceof InvalidKeyNameError) return `--name: ${error.problem}`;
  const entry = /^allowedAliases\[(\d+)\]$/.exec(error.param);
  if (entry !== null) {
    const typed = typeof values['allow'] === 'string' ? values['allow'].split(',').map((a) => a.trim()).filter((a) => a !== '') : [];
    const value = typed[Number(entry[1])];
    if (value === undefined || error.problem.includes(`'${value}'`)) return `--allow: ${error.problem}`;
    return `--allow: ${JSON.stringify(value)} ${error.problem.replace(/^must be an alias name$/, 'is not an alias name')}`;
  }
  if (error.param === 'allowedAliases') return `--allow ${error.problem.replace(/^must be null \(every alias\) or an array of alias names$/, 'must be "all" or a comma-separated list of aliases')}`;
  if (error.param === 'expiresAt') return `--expires ${error.problem.replace(/^must be null or /, 'must be "never" or ')}`;
  for (const [flag, field] of LIMIT_FLAGS) {
    if (error.param === `limits.${field}`) return `--${flag}: ${error.problem.replace(`limits.${field}`, `--${flag}`).replace('(or null for no limit)', '(or "none" for no limit)')}`;
  }
  if (error.param.startsWith('limits.tokenBudget')) return `--budget: ${error.problem}`;
  if (error.param.startsWith('limits.costBudget')) return `--cost-budget: ${error.problem}`;
  if (error.param.startsWith('guard.detectors.')) return `--guard ${error.param.slice('guard.detectors.'.length)}: ${error.problem}`;
  return error.message;
}
