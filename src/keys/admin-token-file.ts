// <dataDir>/admin-tokens.json, and one token record as Redis keeps it: pure
// parse/serialize functions.
//
//   {"version":1,"tokens":[{"id","name","prefix","hash","scopes","createdAt",
//                           "expiresAt","revokedAt","createdBy"}, ...]}
//
// Parsing is strict, as keys.json's: a wrong version, a missing or unknown field, a
// malformed value or a duplicate id/hash is an error naming the place, so a rewrite
// never drops what it does not understand and a broken file is never taken as empty.
import { AdminTokenError, AdminTokenFileInvalidError } from './admin-token-errors.ts';
import {
  ADMIN_SCOPES,
  ADMIN_TOKEN_MARKER,
  ADMIN_TOKEN_PREFIX_LENGTH,
  isAdminTokenId,
  parseTokenScopes,
  parseTokenTime,
  validateCreatedBy,
  validateTokenName,
  type AdminTokenRecord,
} from './admin-token.ts';

const ADMIN_TOKEN_FILE_VERSION = 1;
const RECORD_FIELDS = ['id', 'name', 'prefix', 'hash', 'scopes', 'createdAt', 'expiresAt', 'revokedAt', 'createdBy'] as const;
const HASH_PATTERN = /^[0-9a-f]{64}$/;
const PREFIX_PATTERN = new RegExp(`^${ADMIN_TOKEN_MARKER}[A-Za-z0-9_-]{${ADMIN_TOKEN_PREFIX_LENGTH - ADMIN_TOKEN_MARKER.length}}$`);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isIsoTimestamp(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const ms = Date.parse(value);
  return Number.isFinite(ms) && new Date(ms).toISOString() === value;
}

/** One stored record; AdminTokenFileInvalidError naming `location` and `at` (e.g. `tokens[3]`) otherwise. */
export function parseTokenRecord(raw: unknown, at: string, location: string): AdminTokenRecord {
  const fail = (problem: string): never => {
    throw new AdminTokenFileInvalidError(location, `${at}${problem}`);
  };
  if (!isPlainObject(raw)) return fail(' must be an object');
  for (const field of Object.keys(raw)) if (!(RECORD_FIELDS as readonly string[]).includes(field)) fail(` has an unknown field "${field}"`);
  for (const field of RECORD_FIELDS) if (!Object.hasOwn(raw, field)) fail(` is missing "${field}"`);
  const { id, name, prefix, hash, scopes, createdAt, expiresAt, revokedAt, createdBy } = raw;
  if (typeof id !== 'string' || !isAdminTokenId(id)) fail('.id must look like tok_ followed by 16 letters or digits');
  if (typeof prefix !== 'string' || !PREFIX_PATTERN.test(prefix)) fail(`.prefix must be ${ADMIN_TOKEN_MARKER} followed by 4 base64url characters`);
  if (typeof hash !== 'string' || !HASH_PATTERN.test(hash)) fail('.hash must be 64 lowercase hex digits');
  if (!isIsoTimestamp(createdAt)) fail('.createdAt must be an ISO 8601 time like 2026-01-31T12:00:00.000Z');
  if (!isIsoTimestamp(expiresAt)) fail('.expiresAt must be an ISO 8601 time like 2026-01-31T12:00:00.000Z');
  if (revokedAt !== null && !isIsoTimestamp(revokedAt)) fail('.revokedAt must be null or an ISO 8601 time');
  let checked: { name: string; scopes: AdminTokenRecord['scopes']; createdBy: string } = { name: '', scopes: [], createdBy: '' };
  try {
    checked = { name: validateTokenName(name), scopes: parseTokenScopes(scopes), createdBy: validateCreatedBy(createdBy) };
    parseTokenTime(expiresAt, 'expiresAt');
  } catch (error) {
    if (error instanceof AdminTokenError) fail(`.${error.message.replace(/^Invalid /, '').replace(/\.$/, '')}`);
    throw error;
  }
  if (checked.name !== name) fail('.name must not start or end with spaces');
  if (JSON.stringify(checked.scopes) !== JSON.stringify(scopes)) fail(`.scopes must be in the order ${JSON.stringify(ADMIN_SCOPES)}`);
  return Object.freeze({
    id: id as string,
    name: checked.name,
    prefix: prefix as string,
    hash: hash as string,
    scopes: Object.freeze([...checked.scopes]),
    createdAt: createdAt as string,
    expiresAt: expiresAt as string,
    revokedAt: revokedAt as string | null,
    createdBy: checked.createdBy,
  });
}

/** A record as stored: the fields in their order. */
export function storedTokenRecord(r: AdminTokenRecord): Record<(typeof RECORD_FIELDS)[number], unknown> {
  return { id: r.id, name: r.name, prefix: r.prefix, hash: r.hash, scopes: [...r.scopes], createdAt: r.createdAt, expiresAt: r.expiresAt, revokedAt: r.revokedAt, createdBy: r.createdBy };
}

/** The records of an admin-tokens.json text, in file order. */
export function parseTokenFile(text: string, location: string): AdminTokenRecord[] {
  if (text.trim().length === 0) throw new AdminTokenFileInvalidError(location, 'it is empty');
  let doc: unknown;
  try {
    doc = JSON.parse(text) as unknown;
  } catch (cause) {
    throw new AdminTokenFileInvalidError(location, `it is not valid JSON (${cause instanceof Error ? cause.message : String(cause)})`);
  }
  if (!isPlainObject(doc)) throw new AdminTokenFileInvalidError(location, `expected an object {"version":${ADMIN_TOKEN_FILE_VERSION},"tokens":[...]}`);
  if (doc['version'] !== ADMIN_TOKEN_FILE_VERSION) {
    throw new AdminTokenFileInvalidError(location, `"version" is ${JSON.stringify(doc['version']) ?? 'nothing'}, this version of portcullis reads version ${ADMIN_TOKEN_FILE_VERSION}`);
  }
  for (const field of Object.keys(doc)) if (field !== 'version' && field !== 'tokens') throw new AdminTokenFileInvalidError(location, `unknown top-level field "${field}"`);
  const raw = doc['tokens'];
  if (!Array.isArray(raw)) throw new AdminTokenFileInvalidError(location, '"tokens" must be an array');
  const records: AdminTokenRecord[] = [];
  const ids = new Set<string>();
  const hashes = new Set<string>();
  raw.forEach((item: unknown, i: number) => {
    const record = parseTokenRecord(item, `tokens[${i}]`, location);
    if (ids.has(record.id)) throw new AdminTokenFileInvalidError(location, `tokens[${i}].id ${record.id} appears twice`);
    if (hashes.has(record.hash)) throw new AdminTokenFileInvalidError(location, `tokens[${i}].hash appears twice`);
    ids.add(record.id);
    hashes.add(record.hash);
    records.push(record);
  });
  return records;
}

export function serializeTokenFile(records: readonly AdminTokenRecord[]): string {
  return JSON.stringify({ version: ADMIN_TOKEN_FILE_VERSION, tokens: records.map(storedTokenRecord) }, null, 2) + '\n';
}
