// Admin API tokens (docs/admin-api.md, "Tokens"): pure functions over records,
// no I/O besides the random source. The stores (src/state/*admin-token-store.ts)
// do only the reading and writing around them.
//
//   pca_ 3q2-7w... (43 characters)
//   ^^^^ ^^^^^^^^^^^^^^^^^^^^^^^^^^
//   |    32 random bytes (256 bits), base64url without padding
//   marker (pcl_ is an API key, pcb_ the bootstrap token, pca_ an admin token)
//
// - Only the SHA-256 of a token is stored (as for API keys: 256 random bits need
//   no slow hash), with its first 8 characters (`pca_` and 4 more, 24 of 256
//   bits) for people to tell tokens apart.
// - A token always has scopes (a non-empty subset of ADMIN_SCOPES) and an expiry
//   at most MAX_TOKEN_LIFETIME_DAYS ahead: a forgotten CI secret stops working.
// - At most MAX_LIVE_TOKENS tokens are live (neither revoked nor expired), and at
//   most MAX_STORED_TOKENS records are kept (the oldest dead ones are forgotten).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ADMIN_TOKEN_KIND } from '../log/secret-kinds.ts';
import { InvalidKeyNameError } from './errors.ts';
import { AdminTokenAlreadyRevokedError, AdminTokenLimitError, InvalidTokenSettingError } from './admin-token-errors.ts';
import { isRealCalendarTime } from './key-settings.ts';
import { validateKeyName } from './store-format.ts';

/**
 * What an admin principal may do (src/admin/admin-principal.ts re-exports these;
 * they live here, below admin/, so the token records can hold them).
 * - `read`: every GET of the admin API (keys, usage, aliases, audit).
 * - `keys`: `read`, and creating, updating, rotating and revoking API keys.
 */
export const ADMIN_SCOPES = ['read', 'keys'] as const;
export type AdminScope = (typeof ADMIN_SCOPES)[number];

/** Marker, alphabet (base64url) and length are ADMIN_TOKEN_KIND, from which every redaction's pattern is derived. */
export const ADMIN_TOKEN_MARKER = ADMIN_TOKEN_KIND.marker;
const TOKEN_RANDOM_BYTES = 32;
/** 32 bytes in base64url without padding: ceil(256 / 6). */
const TOKEN_RANDOM_LENGTH = ADMIN_TOKEN_KIND.length;
const ADMIN_TOKEN_LENGTH = ADMIN_TOKEN_MARKER.length + TOKEN_RANDOM_LENGTH;
export const ADMIN_TOKEN_PREFIX_LENGTH = 8;
export const MAX_LIVE_TOKENS = 100;
/** Records kept, revoked and expired ones included; beyond, the oldest of those are forgotten (the audit trail keeps their history). */
export const MAX_STORED_TOKENS = 1000;
export const MAX_TOKEN_LIFETIME_DAYS = 366;
const DAY_MS = 86_400_000;
const CREATED_BY_MAX_LENGTH = 256;

const TOKEN_ID_MARKER = 'tok_';
const TOKEN_ID_RANDOM_LENGTH = 16;
const TOKEN_ID_PATTERN = /^tok_[0-9A-Za-z]{16}$/;
const ID_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Zl}\p{Zp}]/u;

/** What the store keeps about a token. Never the token: only its SHA-256. */
export interface AdminTokenRecord {
  readonly id: string;
  readonly name: string;
  /** The token's first 8 characters, e.g. `pca_Q3x-`. */
  readonly prefix: string;
  /** SHA-256 of the token, lowercase hex. */
  readonly hash: string;
  /** Sorted in ADMIN_SCOPES order, no duplicates, never empty. */
  readonly scopes: readonly AdminScope[];
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly revokedAt: string | null;
  /** Who made it, `<actor kind>:<actor id>`: `password:admin`, `sso:<sub>`, `cli:<user>`. */
  readonly createdBy: string;
}

export type AdminTokenStatus = 'active' | 'expired' | 'revoked';

/** What the admin API and the CLI show of a token: everything but its hash. */
export interface AdminTokenView {
  id: string;
  name: string;
  prefix: string;
  scopes: AdminScope[];
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
  status: AdminTokenStatus;
  createdBy: string;
}

/** What a create request asks for, before any check. */
export interface NewAdminTokenInput {
  name: unknown;
  scopes: unknown;
  expiresAt: unknown;
  createdBy: string;
}

export interface CheckedNewToken {
  readonly name: string;
  readonly scopes: readonly AdminScope[];
  readonly expiresAt: string;
  readonly createdBy: string;
}

/** `random` exists for tests; crypto.randomBytes by default. */
export function generateAdminToken(random: (size: number) => Buffer = randomBytes): string {
  const bytes = random(TOKEN_RANDOM_BYTES);
  if (bytes.length !== TOKEN_RANDOM_BYTES) throw new RangeError(`random source returned ${bytes.length} bytes, expected ${TOKEN_RANDOM_BYTES}`);
  return ADMIN_TOKEN_MARKER + bytes.toString('base64url');
}

/**
 * True when `s` has the marker, the exact length and base64url characters that
 * decode to exactly 32 bytes (the last character carries 2 unused bits, which
 * must be zero). Free of I/O, so garbage is refused before anything is looked up.
 */
export function isWellFormedAdminToken(s: unknown): s is string {
  if (typeof s !== 'string' || s.length !== ADMIN_TOKEN_LENGTH || !s.startsWith(ADMIN_TOKEN_MARKER)) return false;
  const random = s.slice(ADMIN_TOKEN_MARKER.length);
  if (!BASE64URL.test(random)) return false;
  return Buffer.from(random, 'base64url').toString('base64url') === random;
}

export function hashAdminToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function adminTokenPrefix(token: string): string {
  return token.slice(0, ADMIN_TOKEN_PREFIX_LENGTH);
}

/** Constant-time: does `record` belong to the token whose SHA-256 is `hash`? */
export function tokenHashMatches(record: Pick<AdminTokenRecord, 'hash'>, hash: string): boolean {
  const a = Buffer.from(record.hash, 'hex');
  const b = Buffer.from(hash, 'hex');
  return a.length === 32 && b.length === 32 && timingSafeEqual(a, b);
}

/** A fresh token id, `tok_` plus 16 base62 characters (rejection-sampled, so unbiased). */
export function newAdminTokenId(): string {
  let id = TOKEN_ID_MARKER;
  while (id.length < TOKEN_ID_MARKER.length + TOKEN_ID_RANDOM_LENGTH) {
    for (const byte of randomBytes(TOKEN_ID_RANDOM_LENGTH * 2)) {
      // 248 = 4 * 62: bytes at or above it would favour the first characters.
      if (byte < 248 && id.length < TOKEN_ID_MARKER.length + TOKEN_ID_RANDOM_LENGTH) id += ID_ALPHABET.charAt(byte % 62);
    }
  }
  return id;
}

export function isAdminTokenId(s: string): boolean {
  return TOKEN_ID_PATTERN.test(s);
}

/** The trimmed name (1 to 64 printable characters, as key names). */
export function validateTokenName(name: unknown): string {
  try {
    return validateKeyName(name);
  } catch (error) {
    if (error instanceof InvalidKeyNameError) throw new InvalidTokenSettingError('name', error.problem);
    throw error;
  }
}

/** A non-empty list of distinct scopes from ADMIN_SCOPES, returned in ADMIN_SCOPES order. */
export function parseTokenScopes(value: unknown): AdminScope[] {
  const known = `one of ${ADMIN_SCOPES.map((s) => `"${s}"`).join(', ')}`;
  if (!Array.isArray(value)) throw new InvalidTokenSettingError('scopes', `must be a list of scopes, each ${known}`);
  if (value.length === 0) throw new InvalidTokenSettingError('scopes', `must name at least one scope (${known})`);
  if (value.length > ADMIN_SCOPES.length) throw new InvalidTokenSettingError('scopes', `has ${value.length} entries; there are only ${ADMIN_SCOPES.length} scopes`);
  const seen = new Set<AdminScope>();
  value.forEach((scope: unknown, i: number) => {
    if (typeof scope !== 'string' || !(ADMIN_SCOPES as readonly string[]).includes(scope)) {
      throw new InvalidTokenSettingError(`scopes[${i}]`, `must be ${known}`);
    }
    if (seen.has(scope as AdminScope)) throw new InvalidTokenSettingError(`scopes[${i}]`, `repeats "${scope}"`);
    seen.add(scope as AdminScope);
  });
  return ADMIN_SCOPES.filter((s) => seen.has(s));
}

/** An ISO 8601 time with a zone, as a real calendar time; normalised to toISOString(). */
export function parseTokenTime(value: unknown, param: string): string {
  if (typeof value !== 'string' || !ISO_WITH_ZONE.test(value)) {
    throw new InvalidTokenSettingError(param, 'must be an ISO 8601 time with a zone, like 2027-01-31T00:00:00Z');
  }
  const ms = Date.parse(value);
  if (!Number.isFinite(ms) || !isRealCalendarTime(value)) throw new InvalidTokenSettingError(param, 'is not a real date and time');
  return new Date(ms).toISOString();
}

/** A new token's expiry: required, after `nowMs`, at most MAX_TOKEN_LIFETIME_DAYS ahead. */
export function parseTokenExpiry(value: unknown, nowMs: number): string {
  if (value === undefined || value === null) {
    throw new InvalidTokenSettingError('expiresAt', `is required: every token expires, at most ${MAX_TOKEN_LIFETIME_DAYS} days ahead`);
  }
  const expiresAt = parseTokenTime(value, 'expiresAt');
  const ms = Date.parse(expiresAt);
  if (ms <= nowMs) throw new InvalidTokenSettingError('expiresAt', 'is in the past');
  if (ms > nowMs + MAX_TOKEN_LIFETIME_DAYS * DAY_MS) {
    throw new InvalidTokenSettingError('expiresAt', `is more than ${MAX_TOKEN_LIFETIME_DAYS} days ahead (the longest a token may live)`);
  }
  return expiresAt;
}

/** `<kind>:<id>` of the actor who creates a token: 1 to 256 printable characters. */
export function validateCreatedBy(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > CREATED_BY_MAX_LENGTH || UNPRINTABLE.test(value) || !value.includes(':')) {
    throw new InvalidTokenSettingError('createdBy', `must be "<kind>:<id>", 1 to ${CREATED_BY_MAX_LENGTH} printable characters`);
  }
  return value;
}

/** Checks a create request before any I/O; InvalidTokenSettingError naming the field otherwise. */
export function checkNewToken(input: NewAdminTokenInput, nowMs: number): CheckedNewToken {
  return {
    name: validateTokenName(input.name),
    scopes: parseTokenScopes(input.scopes),
    expiresAt: parseTokenExpiry(input.expiresAt, nowMs),
    createdBy: validateCreatedBy(input.createdBy),
  };
}

export function tokenStatus(record: Pick<AdminTokenRecord, 'revokedAt' | 'expiresAt'>, nowMs: number): AdminTokenStatus {
  if (record.revokedAt !== null) return 'revoked';
  return Date.parse(record.expiresAt) <= nowMs ? 'expired' : 'active';
}

/**
 * A new token and its record, added to `existing` (the store's records read
 * under its lock or compare-and-set); AdminTokenLimitError when MAX_LIVE_TOKENS
 * are live at `nowMs`.
 */
export function issueToken(checked: CheckedNewToken, existing: readonly AdminTokenRecord[], nowMs: number): { token: string; record: AdminTokenRecord } {
  const live = existing.filter((r) => tokenStatus(r, nowMs) === 'active').length;
  if (live >= MAX_LIVE_TOKENS) throw new AdminTokenLimitError(MAX_LIVE_TOKENS);
  const ids = new Set(existing.map((r) => r.id));
  let id = newAdminTokenId();
  while (ids.has(id)) id = newAdminTokenId();
  const token = generateAdminToken();
  const record: AdminTokenRecord = Object.freeze({
    id,
    name: checked.name,
    prefix: adminTokenPrefix(token),
    hash: hashAdminToken(token),
    scopes: Object.freeze([...checked.scopes]),
    createdAt: new Date(nowMs).toISOString(),
    expiresAt: checked.expiresAt,
    revokedAt: null,
    createdBy: checked.createdBy,
  });
  return { token, record };
}

/**
 * The records to drop before one more is added so at most MAX_STORED_TOKENS
 * remain: the oldest that are no longer live (there are always enough, since
 * at most MAX_LIVE_TOKENS are live).
 */
export function tokensToForget(existing: readonly AdminTokenRecord[], nowMs: number): AdminTokenRecord[] {
  const excess = existing.length + 1 - MAX_STORED_TOKENS;
  if (excess <= 0) return [];
  return existing
    .filter((r) => tokenStatus(r, nowMs) !== 'active')
    .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0))
    .slice(0, excess);
}

/** The record revoked at `nowMs`; AdminTokenAlreadyRevokedError when it already is. An expired token may still be revoked. */
export function revokeTokenRecord(record: AdminTokenRecord, nowMs: number): AdminTokenRecord {
  if (record.revokedAt !== null) throw new AdminTokenAlreadyRevokedError(record.id, record.revokedAt);
  return Object.freeze({ ...record, revokedAt: new Date(nowMs).toISOString() });
}

/** Does a token with `scopes` cover what a route needs? `keys` covers `read`; nothing a token holds covers `session`. */
export function scopesCover(scopes: readonly AdminScope[], need: AdminScope | 'session'): boolean {
  if (need === 'session') return false;
  return scopes.includes(need) || (need === 'read' && scopes.includes('keys'));
}

export function adminTokenView(record: AdminTokenRecord, nowMs: number): AdminTokenView {
  return {
    id: record.id,
    name: record.name,
    prefix: record.prefix,
    scopes: [...record.scopes],
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    revokedAt: record.revokedAt,
    status: tokenStatus(record, nowMs),
    createdBy: record.createdBy,
  };
}

/** The fields an audit record keeps before and after a token change (i17-shared.md): never the token, never its hash. */
export function adminTokenAuditFields(record: AdminTokenRecord): { id: string; name: string; prefix: string; scopes: string[]; expiresAt: string; revokedAt: string | null } {
  return { id: record.id, name: record.name, prefix: record.prefix, scopes: [...record.scopes], expiresAt: record.expiresAt, revokedAt: record.revokedAt };
}

/** A revoke's `before`: it changes only revokedAt, from null (revoking a revoked token is refused). */
export function adminTokenAuditFieldsBeforeRevoke(revoked: AdminTokenRecord): ReturnType<typeof adminTokenAuditFields> {
  return { ...adminTokenAuditFields(revoked), revokedAt: null };
}
