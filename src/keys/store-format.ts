// The two files of the key store, as pure parse/serialize functions.
//
// <dataDir>/keys.json (written only by create/update/rotate/revoke, under the lock):
//   {"version":2,"keys":[{"id","name","prefix","hash","createdAt","revokedAt",
//                         "rotatedAt","expiresAt","allowedAliases","limits"[,"guard"]}, ...]}
//   Version 1 files (the first six fields only) are read with default settings
//   and written back as version 2 by the next change.
// <dataDir>/keys-last-used.json (written only by servers, under its own lock):
//   {"version":1,"lastUsed":{"<key id>":"<ISO time>", ...}}
//
// Parsing is strict: a wrong version, a missing or unknown field, a malformed value
// or a duplicate id/hash is an error naming the file and the JSON path. Unknown
// fields are refused rather than ignored so that a rewrite can never drop data that a
// newer version put there. Format documented in docs/keys.md.

import { randomBytes } from 'node:crypto';
import { API_KEY_DISPLAY_CHARS, API_KEY_MARKER } from './api-key.ts';
import { InvalidKeyNameError, InvalidKeySettingError, KeyFileInvalidError } from './errors.ts';
import { DEFAULT_KEY_SETTINGS, parseAllowedAliases, parseExpiresAt, parseKeyGuard, parseLimits, type KeySettings } from './key-settings.ts';

export const KEY_FILE_VERSION = 2;
const LAST_USED_FILE_VERSION = 1;
const KEY_NAME_MAX_LENGTH = 64;

/** What the store keeps about a key. Never the raw key: only its SHA-256. */
export interface KeyRecord extends KeySettings {
  readonly id: string;
  readonly name: string;
  /** Display prefix of the key, e.g. `pcl_AbC1x9Qz` (see keyDisplayPrefix). */
  readonly prefix: string;
  /** SHA-256 of the raw key, lowercase hex. */
  readonly hash: string;
  /** ISO 8601, as produced by Date#toISOString. */
  readonly createdAt: string;
  readonly revokedAt: string | null;
  /** When the secret was last replaced (same id, same history); null if never. */
  readonly rotatedAt: string | null;
}

/** Last use per key id, ISO 8601. */
type LastUsedMap = ReadonlyMap<string, string>;

const KEY_ID_MARKER = 'key_';
const KEY_ID_RANDOM_LENGTH = 16;
const KEY_ID_PATTERN = /^key_[0-9A-Za-z]{16}$/;
const PREFIX_PATTERN = new RegExp(`^${API_KEY_MARKER}[0-9A-Za-z]{${API_KEY_DISPLAY_CHARS}}$`);
const HASH_PATTERN = /^[0-9a-f]{64}$/;
const V1_FIELDS = ['id', 'name', 'prefix', 'hash', 'createdAt', 'revokedAt'] as const;
const RECORD_FIELDS = [...V1_FIELDS, 'rotatedAt', 'expiresAt', 'allowedAliases', 'limits'] as const;
/** Stored only when set, so a file stays readable by versions before them until a key has one. */
const OPTIONAL_FIELDS = ['guard'] as const;
// Control, format, surrogate and private-use characters, and the Unicode line/paragraph
// separators: anything that would corrupt a terminal table or hide characters. Listed by
// category instead of "not printable" (\p{C}) because unassigned code points (Cn) shift
// between the Unicode versions of Node 20, 22 and 24.
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Zl}\p{Zp}]/u;
const ID_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

const KEYS_FILE_ADVICE = 'The file was left untouched; repair it or restore it from a backup.';
const LAST_USED_FILE_ADVICE =
  'The file was left untouched; it only holds last-used times, so deleting it is safe.';

/**
 * The trimmed name, or InvalidKeyNameError. Names are labels for humans (1 to 64
 * printable characters after trimming); they need not be unique, keys are told apart
 * by id.
 */
export function validateKeyName(name: unknown): string {
  if (typeof name !== 'string') throw new InvalidKeyNameError('it must be a string');
  const trimmed = name.trim();
  if (trimmed.length === 0) throw new InvalidKeyNameError('it is empty');
  const length = [...trimmed].length;
  if (length > KEY_NAME_MAX_LENGTH) {
    throw new InvalidKeyNameError(`it has ${length} characters, the limit is ${KEY_NAME_MAX_LENGTH}`);
  }
  if (UNPRINTABLE.test(trimmed)) throw new InvalidKeyNameError('it contains control or invisible characters');
  return trimmed;
}

/** A fresh public key id, `key_` plus 16 base62 characters (rejection-sampled, so unbiased). */
export function newKeyId(): string {
  let id = KEY_ID_MARKER;
  while (id.length < KEY_ID_MARKER.length + KEY_ID_RANDOM_LENGTH) {
    for (const byte of randomBytes(KEY_ID_RANDOM_LENGTH * 2)) {
      // 248 = 4 * 62: bytes at or above it would favour the first characters.
      if (byte < 248 && id.length < KEY_ID_MARKER.length + KEY_ID_RANDOM_LENGTH) id += ID_ALPHABET.charAt(byte % 62);
    }
  }
  return id;
}

export function isKeyId(s: string): boolean {
  return KEY_ID_PATTERN.test(s);
}

function isIsoTimestamp(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const time = Date.parse(value);
  return Number.isFinite(time) && new Date(time).toISOString() === value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseStoreJson(text: string, path: string, advice: string): unknown {
  if (text.trim().length === 0) throw new KeyFileInvalidError(path, 'it is empty', advice);
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    throw new KeyFileInvalidError(path, `it is not valid JSON (${detail})`, advice, { cause });
  }
}

function checkTopLevel(doc: unknown, path: string, listField: string, advice: string, versions: readonly number[]): Record<string, unknown> {
  const newest = versions[versions.length - 1];
  if (!isPlainObject(doc)) {
    throw new KeyFileInvalidError(path, `expected an object {"version":${newest},"${listField}":...}`, advice);
  }
  if (!versions.includes(doc['version'] as number)) {
    const found = JSON.stringify(doc['version']) ?? 'nothing';
    throw new KeyFileInvalidError(
      path,
      `"version" is ${found}, this version of portcullis reads version ${versions.join(' or ')}`,
      advice,
    );
  }
  for (const field of Object.keys(doc)) {
    if (field !== 'version' && field !== listField) {
      throw new KeyFileInvalidError(path, `unknown top-level field "${field}"`, advice);
    }
  }
  return doc;
}

function parseRecord(raw: unknown, at: string, path: string, version: number): KeyRecord {
  const fail = (problem: string): never => {
    throw new KeyFileInvalidError(path, `${at}${problem}`, KEYS_FILE_ADVICE);
  };
  if (!isPlainObject(raw)) return fail(' must be an object');
  const fields: readonly string[] = version === 1 ? V1_FIELDS : [...RECORD_FIELDS, ...OPTIONAL_FIELDS];
  for (const field of Object.keys(raw)) {
    if (!fields.includes(field)) fail(` has an unknown field "${field}"`);
  }
  if (version !== 1) {
    for (const field of RECORD_FIELDS) if (!Object.hasOwn(raw, field)) fail(` is missing "${field}"`);
  }
  const { id, name, prefix, hash, createdAt, revokedAt } = raw;
  if (typeof id !== 'string' || !isKeyId(id)) fail('.id must look like key_ followed by 16 letters or digits');
  if (typeof name !== 'string') return fail('.name must be a string');
  try {
    if (validateKeyName(name) !== name) fail('.name must not start or end with spaces');
  } catch (error) {
    if (error instanceof InvalidKeyNameError) fail(`.name is invalid: ${error.problem}`);
    throw error;
  }
  if (typeof prefix !== 'string' || !PREFIX_PATTERN.test(prefix)) {
    fail(`.prefix must be ${API_KEY_MARKER} followed by ${API_KEY_DISPLAY_CHARS} letters or digits`);
  }
  if (typeof hash !== 'string' || !HASH_PATTERN.test(hash)) fail('.hash must be 64 lowercase hex digits');
  if (!isIsoTimestamp(createdAt)) fail('.createdAt must be an ISO 8601 time like 2025-01-31T12:00:00.000Z');
  if (revokedAt !== null && !isIsoTimestamp(revokedAt)) {
    fail('.revokedAt must be null or an ISO 8601 time like 2025-01-31T12:00:00.000Z');
  }
  let settings: KeySettings = DEFAULT_KEY_SETTINGS;
  let rotatedAt: string | null = null;
  if (version !== 1) {
    if (raw['rotatedAt'] !== null && !isIsoTimestamp(raw['rotatedAt'])) fail('.rotatedAt must be null or an ISO 8601 time');
    rotatedAt = raw['rotatedAt'] as string | null;
    try {
      settings = {
        allowedAliases: parseAllowedAliases(raw['allowedAliases'], 'allowedAliases'),
        expiresAt: parseExpiresAt(raw['expiresAt'], 'expiresAt'),
        limits: parseLimits(raw['limits'], 'limits'),
        guard: raw['guard'] === undefined ? null : parseKeyGuard(raw['guard'], 'guard'),
      };
    } catch (error) {
      if (error instanceof InvalidKeySettingError) fail(`.${error.param} is invalid: ${error.message}`);
      throw error;
    }
  }
  return Object.freeze({
    id: id as string,
    name,
    prefix: prefix as string,
    hash: hash as string,
    createdAt: createdAt as string,
    revokedAt: revokedAt as string | null,
    rotatedAt,
    ...settings,
  });
}

/** The records of a keys.json text, in file order; KeyFileInvalidError naming `path` otherwise. */
export function parseKeysFile(text: string, path: string): KeyRecord[] {
  const doc = checkTopLevel(parseStoreJson(text, path, KEYS_FILE_ADVICE), path, 'keys', KEYS_FILE_ADVICE, [1, KEY_FILE_VERSION]);
  const version = doc['version'] as number;
  const rawKeys = doc['keys'];
  if (!Array.isArray(rawKeys)) throw new KeyFileInvalidError(path, '"keys" must be an array', KEYS_FILE_ADVICE);
  const records: KeyRecord[] = [];
  const ids = new Set<string>();
  const hashes = new Set<string>();
  rawKeys.forEach((raw: unknown, index) => {
    const record = parseRecord(raw, `keys[${index}]`, path, version);
    if (ids.has(record.id)) {
      throw new KeyFileInvalidError(path, `keys[${index}].id '${record.id}' appears twice`, KEYS_FILE_ADVICE);
    }
    if (hashes.has(record.hash)) {
      throw new KeyFileInvalidError(path, `keys[${index}].hash appears twice`, KEYS_FILE_ADVICE);
    }
    ids.add(record.id);
    hashes.add(record.hash);
    records.push(record);
  });
  return records;
}

/** A record as stored, keys.json's fields in their order (the Redis store keeps the same JSON). */
export function storedRecord(r: KeyRecord): Record<(typeof RECORD_FIELDS)[number], unknown> & Partial<Record<(typeof OPTIONAL_FIELDS)[number], unknown>> {
  return {
    id: r.id,
    name: r.name,
    prefix: r.prefix,
    hash: r.hash,
    createdAt: r.createdAt,
    revokedAt: r.revokedAt,
    rotatedAt: r.rotatedAt,
    expiresAt: r.expiresAt,
    allowedAliases: r.allowedAliases,
    limits: storedLimits(r.limits),
    ...(r.guard === null ? {} : { guard: r.guard }),
  };
}

/**
 * The limits as stored: `costBudget` only when set, so a store written by this version
 * stays readable by the versions before cost budgets (their parser refuses unknown
 * fields) until a key actually gets one. Read back, an absent costBudget is null.
 */
function storedLimits(limits: KeyRecord['limits']): Record<string, unknown> {
  const { costBudget, ...rest } = limits;
  return costBudget === null ? rest : { ...rest, costBudget };
}

export function serializeKeysFile(records: readonly KeyRecord[]): string {
  return JSON.stringify({ version: KEY_FILE_VERSION, keys: records.map(storedRecord) }, null, 2) + '\n';
}

/** The id -> ISO time map of a keys-last-used.json text; KeyFileInvalidError naming `path` otherwise. */
export function parseLastUsedFile(text: string, path: string): Map<string, string> {
  const doc = checkTopLevel(parseStoreJson(text, path, LAST_USED_FILE_ADVICE), path, 'lastUsed', LAST_USED_FILE_ADVICE, [LAST_USED_FILE_VERSION]);
  const raw = doc['lastUsed'];
  if (!isPlainObject(raw)) {
    throw new KeyFileInvalidError(path, '"lastUsed" must be an object', LAST_USED_FILE_ADVICE);
  }
  const lastUsed = new Map<string, string>();
  for (const [id, time] of Object.entries(raw)) {
    if (!isKeyId(id)) {
      throw new KeyFileInvalidError(path, `lastUsed has a field "${id}" that is not a key id`, LAST_USED_FILE_ADVICE);
    }
    if (!isIsoTimestamp(time)) {
      throw new KeyFileInvalidError(path, `lastUsed.${id} must be an ISO 8601 time`, LAST_USED_FILE_ADVICE);
    }
    lastUsed.set(id, time);
  }
  return lastUsed;
}

export function serializeLastUsedFile(lastUsed: LastUsedMap): string {
  const entries = [...lastUsed].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify({ version: LAST_USED_FILE_VERSION, lastUsed: Object.fromEntries(entries) }, null, 2) + '\n';
}

/** The later of two ISO times (both produced by toISOString, so they compare as strings). */
export function laterTime(a: string | undefined, b: string): string {
  return a !== undefined && a > b ? a : b;
}
