// What a key may do besides authenticate: the aliases it may call, when it
// expires, its limits, and its egress guard settings. Pure checks shared by keys.json parsing, the CLI and
// the admin API, so a setting is refused the same way wherever it comes from.
import { KeyLimitsError, NO_LIMITS, parseKeyLimits, type KeyLimits } from '../limits/key-limits.ts';
import { AUTO_ALIAS } from '../config/config.ts';
import { checkGuardDetectors, type KeyGuard } from '../guard/guard-policy.ts';
import { InvalidKeySettingError } from './errors.ts';

const MAX_ALLOWED_ALIASES = 64;
const ALIAS_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
/** Expiry further out than this is almost surely a typo (a year 20266). */
const MAX_EXPIRY_YEARS = 100;

export interface KeySettings {
  /** null: every alias; otherwise the aliases this key may resolve to. */
  readonly allowedAliases: readonly string[] | null;
  /** ISO 8601; null: never. */
  readonly expiresAt: string | null;
  readonly limits: KeyLimits;
  /** The egress guard's detectors for this key's requests, counted only where stricter than the alias's; null: none. */
  readonly guard: KeyGuard | null;
}

export const DEFAULT_KEY_SETTINGS: KeySettings = Object.freeze({ allowedAliases: null, expiresAt: null, limits: NO_LIMITS, guard: null });

/** Settings given to create; absent fields keep their defaults. */
export interface KeySettingsInput {
  allowedAliases?: unknown;
  expiresAt?: unknown;
  limits?: unknown;
  guard?: unknown;
}

export function parseAllowedAliases(value: unknown, at = 'allowedAliases'): readonly string[] | null {
  if (value === null) return null;
  if (!Array.isArray(value)) throw new InvalidKeySettingError(at, 'must be null (every alias) or an array of alias names');
  if (value.length === 0) throw new InvalidKeySettingError(at, 'must name at least one alias (a key allowed nothing is a revoked key)');
  if (value.length > MAX_ALLOWED_ALIASES) throw new InvalidKeySettingError(at, `must have at most ${MAX_ALLOWED_ALIASES} entries`);
  const out: string[] = [];
  value.forEach((name: unknown, i: number) => {
    if (typeof name !== 'string' || !ALIAS_NAME.test(name)) throw new InvalidKeySettingError(`${at}[${i}]`, 'must be an alias name');
    if (name === AUTO_ALIAS) {
      throw new InvalidKeySettingError(`${at}[${i}]`, `'${AUTO_ALIAS}' is always allowed when the alias it resolves to is; list concrete aliases`);
    }
    if (out.includes(name)) throw new InvalidKeySettingError(`${at}[${i}]`, `'${name}' is listed twice`);
    out.push(name);
  });
  return Object.freeze(out);
}

/** An ISO 8601 time with a zone, normalised to toISOString's form; null for never. */
export function parseExpiresAt(value: unknown, at = 'expiresAt'): string | null {
  if (value === null) return null;
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(value)) {
    throw new InvalidKeySettingError(at, 'must be null or an ISO 8601 time with a zone, like 2027-01-31T00:00:00Z');
  }
  const ms = Date.parse(value);
  if (!Number.isFinite(ms) || !isRealCalendarTime(value)) throw new InvalidKeySettingError(at, 'is not a real date and time');
  if (new Date(ms).getUTCFullYear() > new Date().getUTCFullYear() + MAX_EXPIRY_YEARS) {
    throw new InvalidKeySettingError(at, `must be within ${MAX_EXPIRY_YEARS} years`);
  }
  return new Date(ms).toISOString();
}

export function parseLimits(value: unknown, at = 'limits'): KeyLimits {
  try {
    return parseKeyLimits(value, at);
  } catch (err) {
    if (err instanceof KeyLimitsError) throw new InvalidKeySettingError(err.param, err.message.replace(/\.$/, ''));
    throw err;
  }
}

/**
 * A key's guard: null for none, else `{ "detectors": { NAME: ACTION } }` with
 * built-in detector or group names. The first problem is thrown, naming its path.
 */
export function parseKeyGuard(value: unknown, at = 'guard'): KeyGuard | null {
  if (value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidKeySettingError(at, 'must be null (no key-level guard) or an object like { "detectors": { "secrets": "block" } }');
  }
  for (const field of Object.keys(value)) {
    if (field !== 'detectors') throw new InvalidKeySettingError(`${at}.${field}`, 'is not a key guard setting; the only one is "detectors"');
  }
  const given = (value as { detectors?: unknown }).detectors;
  if (given === undefined) throw new InvalidKeySettingError(`${at}.detectors`, 'is required (or set guard to null)');
  const { detectors, problems } = checkGuardDetectors(given);
  const first = problems[0];
  if (first !== undefined) throw new InvalidKeySettingError(first.key === null ? `${at}.detectors` : `${at}.detectors.${first.key}`, first.message);
  return Object.freeze({ detectors });
}

/**
 * Settings for a new key. An expiry in the past is refused here (it would
 * make a key that never works); a stored past expiry is fine and means
 * "expired".
 */
export function parseKeySettings(input: KeySettingsInput, nowMs: number): KeySettings {
  const expiresAt = input.expiresAt === undefined ? null : parseExpiresAt(input.expiresAt);
  if (expiresAt !== null && Date.parse(expiresAt) <= nowMs) throw new InvalidKeySettingError('expiresAt', 'is in the past');
  return Object.freeze({
    allowedAliases: input.allowedAliases === undefined ? null : parseAllowedAliases(input.allowedAliases),
    expiresAt,
    limits: input.limits === undefined ? NO_LIMITS : parseLimits(input.limits),
    guard: input.guard === undefined ? null : parseKeyGuard(input.guard),
  });
}

/** True when the key's expiry has passed at `nowMs`. */
export function isExpired(settings: Pick<KeySettings, 'expiresAt'>, nowMs: number): boolean {
  return settings.expiresAt !== null && Date.parse(settings.expiresAt) <= nowMs;
}

/** True when the key may use `alias` (the resolved alias, after service-auto). */
export function allowsAlias(settings: Pick<KeySettings, 'allowedAliases'>, alias: string): boolean {
  return settings.allowedAliases === null || settings.allowedAliases.includes(alias);
}

// Date.parse rolls 2099-02-30 over to March 2 and accepts T24:00; an expiry must
// be the time written, so the fields are read back and compared.
export function isRealCalendarTime(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(text);
  if (m === null) return false;
  const [, y, mo, d, h, mi] = m.map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || h > 23 || mi > 59) return false;
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  return d >= 1 && d <= daysInMonth;
}

export type KeyStatus = 'active' | 'revoked' | 'expired';

/** What a key is at `nowMs`, as the CLI, the admin API and the dashboard show it. */
export function keyStatus(key: Pick<KeySettings, 'expiresAt'> & { readonly revokedAt: string | null }, nowMs: number): KeyStatus {
  return key.revokedAt !== null ? 'revoked' : isExpired(key, nowMs) ? 'expired' : 'active';
}
