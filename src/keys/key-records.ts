// What create, update, rotate and revoke do to one key record, as plain functions
// from record to record, with their refusals as typed errors. The stores (the file
// adapter in file-key-store.ts, the Redis adapter in src/state/redis-key-store.ts)
// only read the current record under their lock or compare-and-set, apply one of
// these, and write the result; so both refuse exactly the same things.
//
// Randomness (the raw key, the id) and time are inputs, never read here.
import { hashApiKey, keyDisplayPrefix } from './api-key.ts';
import { InvalidKeySettingError, KeyAlreadyRevokedError, KeyNotFoundError, KeyRevokedError } from './errors.ts';
import { parseAllowedAliases, parseExpiresAt, parseKeyGuard, parseKeySettings, parseLimits, type KeySettings, type KeySettingsInput } from './key-settings.ts';
import { validateKeyName, type KeyRecord } from './store-format.ts';
import { generateApiKey } from './api-key.ts';

/** A change to a key as a caller asks for it; checked by checkPatch. */
export interface KeyPatch {
  name?: unknown;
  allowedAliases?: unknown;
  expiresAt?: unknown;
  /** The key's limits, whole: a field left out becomes null. */
  limits?: unknown;
  /** Only these limit fields (null clears one); merged with the current limits under the store's lock. */
  limitChanges?: unknown;
  /** The key's guard, whole (null: none). */
  guard?: unknown;
}

/** A checked request to create a key: its name and settings. */
export interface NewKey {
  readonly name: string;
  readonly settings: KeySettings;
}

/** A checked patch: the fields it sets, and the limit fields it merges into the current limits. */
export interface CheckedPatch {
  readonly changes: Partial<KeyRecord>;
  readonly limitChanges: object | null;
}

/** Checks a create request before any I/O; InvalidKeyNameError or InvalidKeySettingError. */
export function checkNewKey(name: unknown, input: KeySettingsInput, nowMs: number): NewKey {
  return { name: validateKeyName(name), settings: parseKeySettings(input, nowMs) };
}

/** The record of a new key `rawKey` with id `id`, created at `now` (ISO). */
export function createKeyRecord(id: string, rawKey: string, key: NewKey, now: string): KeyRecord {
  return Object.freeze({
    id,
    name: key.name,
    prefix: keyDisplayPrefix(rawKey),
    hash: hashApiKey(rawKey),
    createdAt: now,
    revokedAt: null,
    rotatedAt: null,
    ...key.settings,
  });
}

/** Checks a patch before any I/O; an empty patch is allowed (it changes nothing). InvalidKeySettingError/InvalidKeyNameError. */
export function checkPatch(patch: KeyPatch): CheckedPatch {
  const changes: { -readonly [K in keyof KeyRecord]?: KeyRecord[K] } = {};
  if (patch.name !== undefined) changes.name = validateKeyName(patch.name);
  if (patch.allowedAliases !== undefined) changes.allowedAliases = parseAllowedAliases(patch.allowedAliases);
  // A past expiry is allowed here: setting "now" is how a key is expired on purpose.
  if (patch.expiresAt !== undefined) changes.expiresAt = parseExpiresAt(patch.expiresAt);
  if (patch.limits !== undefined) changes.limits = parseLimits(patch.limits);
  if (patch.guard !== undefined) changes.guard = parseKeyGuard(patch.guard);
  if (patch.limitChanges === undefined) return { changes, limitChanges: null };
  if (patch.limits !== undefined) throw new InvalidKeySettingError('limits', 'give limits or limitChanges, not both');
  const c = patch.limitChanges;
  if (typeof c !== 'object' || c === null || Array.isArray(c)) throw new InvalidKeySettingError('limits', 'changes must be an object');
  // Checked whole against the current limits when applied; the fields are checked here already.
  parseLimits({ ...c });
  return { changes, limitChanges: { ...c } };
}

/** A revoked key stays revoked: its settings and secret no longer change. */
function requireActive(current: KeyRecord): void {
  if (current.revokedAt !== null) throw new KeyRevokedError(current.id);
}

/**
 * `current` with a checked patch applied: limitChanges are merged into the limits
 * as they are in `current` (the store's view under its lock) and checked whole.
 * KeyRevokedError when `current` is revoked.
 */
export function patchKeyRecord(current: KeyRecord, patch: CheckedPatch): KeyRecord {
  requireActive(current);
  const merged = patch.limitChanges === null ? {} : { limits: parseLimits({ ...current.limits, ...patch.limitChanges }) };
  return Object.freeze({ ...current, ...patch.changes, ...merged });
}

/** `current` with the new secret `rawKey`, rotated at `now`; id, settings and history stay. KeyRevokedError when revoked. */
export function rotateKeyRecord(current: KeyRecord, rawKey: string, now: string): KeyRecord {
  requireActive(current);
  return Object.freeze({ ...current, prefix: keyDisplayPrefix(rawKey), hash: hashApiKey(rawKey), rotatedAt: now });
}

/** `current` revoked at `now`; KeyAlreadyRevokedError when it already is. */
export function revokeKeyRecord(current: KeyRecord, now: string): KeyRecord {
  if (current.revokedAt !== null) throw new KeyAlreadyRevokedError(current.id, current.revokedAt);
  return Object.freeze({ ...current, revokedAt: now });
}

/** The record read for `id`, or KeyNotFoundError when there is none. */
export function requireRecord<R extends KeyRecord>(id: string, record: R | undefined): R {
  if (record === undefined) throw new KeyNotFoundError(String(id));
  return record;
}

/** One store's way to change a key: read it under the store's lock or transaction, apply `change`, write the record. */
export type ChangeKey = <T>(id: string, change: (current: KeyRecord) => { record: KeyRecord; result: T }, ahead?: WriteAheadOf) => Promise<T>;

/** Called with a decided change before the store writes it (src/state/key-store-port.ts, WriteAhead). */
export type WriteAheadOf = (change: { before: KeyRecord | null; after: KeyRecord }) => Promise<void>;

/**
 * The key changes every store offers, as record functions run inside the
 * store's own `changeKey`: the adapters differ only in that I/O.
 */
export function keyChanges(changeKey: ChangeKey, now: () => string) {
  return {
    patch: (id: string, checked: CheckedPatch, ahead?: WriteAheadOf) =>
      changeKey(
        id,
        (current) => {
          const record = patchKeyRecord(current, checked);
          return { record, result: record };
        },
        ahead,
      ),
    rotate: (id: string, ahead?: WriteAheadOf) =>
      changeKey(
        id,
        (current) => {
          const key = generateApiKey();
          const record = rotateKeyRecord(current, key, now());
          return { record, result: { key, record } };
        },
        ahead,
      ),
    revoke: (id: string, ahead?: WriteAheadOf) =>
      changeKey(
        id,
        (current) => {
          const record = revokeKeyRecord(current, now());
          return { record, result: record };
        },
        ahead,
      ),
  };
}
