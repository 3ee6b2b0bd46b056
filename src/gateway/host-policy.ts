// A KeyPolicy from a host's Authenticator, checked as a stored key's settings
// are (../keys/key-settings.ts), so a policy means here what it means in the key
// store. A field of the wrong shape is never read as a default that widens
// access: the request fails with a generic 500 and an error log naming the field.
import type { KeyPolicy as HostKeyPolicy } from '../api/keys.ts';
import { ApiError } from '../errors/api-error.ts';
import type { KeyGuard } from '../guard/guard-policy.ts';
import { InvalidKeySettingError } from '../keys/errors.ts';
import { parseAllowedAliases, parseExpiresAt, parseKeyGuard, parseLimits } from '../keys/key-settings.ts';
import type { Logger } from '../log/logger.ts';
import type { KeyPolicy } from './key-policy.ts';

/** What a request runs with: the checked policy, its guard included. */
export type CheckedKeyPolicy = KeyPolicy & { readonly guard: KeyGuard | null };

const POLICY_FIELDS = new Set(['id', 'expiresAt', 'allowedAliases', 'limits', 'guard']);
const MAX_ID_LENGTH = 128;
// Control, format, surrogate, private-use and line/paragraph separators: an id goes into log lines and usage records.
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Zl}\p{Zp}]/u;

/** The policy to run the request with; throws the client's generic 500 (and logs why) when `answer` is not a valid KeyPolicy. */
export function checkHostPolicy(answer: unknown, logger: Logger): CheckedKeyPolicy {
  // Checked on every answer, never remembered by object: a host may change a policy object it returns again.
  try {
    return parseHostPolicy(answer);
  } catch (error) {
    if (!(error instanceof InvalidKeySettingError)) throw error;
    logger.error('the authenticator returned an invalid KeyPolicy; the request failed with a 500', { field: error.param, problem: error.problem });
    throw new ApiError('internal_error');
  }
}

/** Throws InvalidKeySettingError naming the field at fault. */
export function parseHostPolicy(answer: unknown): CheckedKeyPolicy {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) {
    throw new InvalidKeySettingError('(the policy)', 'must be an object { id, expiresAt?, allowedAliases?, limits?, guard? }, or null to refuse the key');
  }
  const fields = answer as { readonly [field: string]: unknown } & Partial<HostKeyPolicy>;
  for (const field of Object.keys(fields)) {
    if (!POLICY_FIELDS.has(field)) throw new InvalidKeySettingError(field, 'is not a KeyPolicy field (id, expiresAt, allowedAliases, limits, guard)');
  }
  return Object.freeze({
    id: parseId(fields['id']),
    expiresAt: fields['expiresAt'] === undefined ? null : parseExpiresAt(fields['expiresAt']),
    allowedAliases: fields['allowedAliases'] === undefined ? null : parseAllowedAliases(fields['allowedAliases']),
    limits: parseLimits(fields['limits']),
    guard: fields['guard'] === undefined ? null : parseKeyGuard(fields['guard']),
  });
}

function parseId(value: unknown): string {
  if (typeof value !== 'string') throw new InvalidKeySettingError('id', 'must be a string');
  if (value.length === 0 || value.length > MAX_ID_LENGTH) throw new InvalidKeySettingError('id', `must have 1 to ${MAX_ID_LENGTH} characters`);
  if (UNPRINTABLE.test(value)) throw new InvalidKeySettingError('id', 'contains control or invisible characters');
  return value;
}
