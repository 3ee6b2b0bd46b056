// The admin password as a scrypt hash (RFC 7914) or a PBKDF2-HMAC-SHA-256 hash
// (RFC 8018 section 5.2), in a self-describing string:
//
//   scrypt$<N>$<r>$<p>$<salt, base64url>$<hash, base64url>
//   scrypt$32768$8$1$3q2-7w...$Kx0f...
//   pbkdf2-sha256$<iterations>$<salt, base64url>$<hash, base64url>
//   pbkdf2-sha256$600000$3q2-7w...$Kx0f...
//
// Both verify; the operator picks which one new hashes use (security.passwordHash).
// PBKDF2 exists for deployments that must use FIPS 140-3 approved algorithms
// (NIST SP 800-132); scrypt is not one. docs/crypto.md.
//
// - N = 2^15, r = 8, p = 1: 32 MiB and roughly 50-100 ms per hash on a server core,
//   the parameters OWASP lists for scrypt. Every parameter is stored, so a later
//   version can raise them and still verify old hashes.
// - PBKDF2: 600,000 iterations of HMAC-SHA-256, the count OWASP lists; it runs on
//   libuv's thread pool (crypto.pbkdf2, not pbkdf2Sync), so a login does not block
//   the event loop for its 200-500 ms.
// - 16-byte random salt, 32-byte derived key, both base64url without padding.
// - The password is NFC-normalised first (RFC 8265, OpaqueString), so the same
//   password typed on systems that compose accents differently still matches.
//
// Parsing bounds every parameter before any work is done: a stored string with an
// absurd N or r (a tampered or corrupted admin.json) is refused as malformed instead
// of making verification allocate gigabytes.

import { pbkdf2, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

export interface ScryptParams {
  /** CPU/memory cost, a power of two. */
  readonly cost: number;
  readonly blockSize: number;
  readonly parallelization: number;
}

export interface Pbkdf2Params {
  /** PBKDF2 iteration count (RFC 8018's c). */
  readonly iterations: number;
}

export const PASSWORD_HASH_SCHEMES = ['scrypt', 'pbkdf2-sha256'] as const;
export type PasswordHashScheme = (typeof PASSWORD_HASH_SCHEMES)[number];

export const DEFAULT_SCRYPT_PARAMS: ScryptParams = { cost: 2 ** 15, blockSize: 8, parallelization: 1 };
export const DEFAULT_PBKDF2_PARAMS: Pbkdf2Params = { iterations: 600_000 };

const SCRYPT = 'scrypt';
const PBKDF2 = 'pbkdf2-sha256';
// The floor lets tests hash fast (and is SP 800-132's minimum); the ceiling keeps a
// tampered admin.json from holding a login for minutes. PBKDF2 runs the iterations
// once per 32-byte block of the key (RFC 8018 section 5.2), so the ceiling bounds
// iterations x blocks, not the count alone.
const MIN_PBKDF2_ITERATIONS = 1_000;
const MAX_PBKDF2_ITERATIONS = 10_000_000;
const SHA256_BYTES = 32;
// SP 800-132 asks for a 16-byte salt (what this module writes); fipsApprovalProblem
// holds a hash to that, while parsing accepts 8 (MIN_SALT_BYTES) as for scrypt.
const FIPS_MIN_SALT_BYTES = 16;
const UNKNOWN_SCHEME = 'expected scrypt$<N>$<r>$<p>$<salt>$<hash> or pbkdf2-sha256$<iterations>$<salt>$<hash>';
const SALT_BYTES = 16;
const HASH_BYTES = 32;
// Accepted ranges for stored strings. The floor of N = 2^10 lets tests hash fast; the
// default above is what production writes.
const MIN_COST_LOG2 = 10;
const MAX_COST_LOG2 = 20;
const MAX_BLOCK_SIZE = 32;
const MAX_PARALLELIZATION = 16;
/** scrypt needs 128 * N * r bytes; refuse anything above this before calling it. */
const MAX_SCRYPT_MEMORY_BYTES = 256 * 1024 * 1024;
// Salts this module writes have 16 bytes; 8 is accepted so hashes made elsewhere (and
// the RFC 7914 scrypt vectors) verify. Hashes have 32; 16 to 64 are accepted.
const MIN_SALT_BYTES = 8;
const MIN_HASH_BYTES = 16;
const MAX_STORED_BYTES = 64;
/** Longer than any string this module writes; bounds the parse of a stored value. */
const MAX_STORED_LENGTH = 512;

const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 1024;
const PASSWORD_MIN_DISTINCT = 4;

const BASE64URL = /^[A-Za-z0-9_-]+$/;
const DECIMAL = /^[1-9][0-9]{0,9}$/;
// Control characters cannot be typed into the dashboard's password field and
// usually mean a paste or a pipe carried something unintended.
const CONTROL = /\p{Cc}/u;

/** A stored password hash that is not a string this module can verify. */
export class PasswordHashFormatError extends Error {
  override name = 'PasswordHashFormatError';
  readonly code = 'password_hash_malformed';
  readonly problem: string;
  constructor(problem: string) {
    super(`Malformed password hash: ${problem}.`);
    this.problem = problem;
  }
}

type ParsedHash =
  | { scheme: 'scrypt'; params: ScryptParams; salt: Buffer; hash: Buffer }
  | { scheme: 'pbkdf2-sha256'; params: Pbkdf2Params; salt: Buffer; hash: Buffer };

function isPowerOfTwo(n: number): boolean {
  return Number.isSafeInteger(n) && n > 0 && (n & (n - 1)) === 0;
}

/** A problem with the parameters, or null when they are inside the accepted bounds. */
function paramsProblem(params: ScryptParams): string | null {
  const { cost, blockSize, parallelization } = params;
  if (!isPowerOfTwo(cost) || cost < 2 ** MIN_COST_LOG2 || cost > 2 ** MAX_COST_LOG2) {
    return `N must be a power of two from 2^${MIN_COST_LOG2} to 2^${MAX_COST_LOG2}`;
  }
  if (!Number.isSafeInteger(blockSize) || blockSize < 1 || blockSize > MAX_BLOCK_SIZE) return `r must be an integer from 1 to ${MAX_BLOCK_SIZE}`;
  if (!Number.isSafeInteger(parallelization) || parallelization < 1 || parallelization > MAX_PARALLELIZATION) {
    return `p must be an integer from 1 to ${MAX_PARALLELIZATION}`;
  }
  if (scryptMemoryBytes(params) > MAX_SCRYPT_MEMORY_BYTES) return `N * r needs more than ${MAX_SCRYPT_MEMORY_BYTES / 1024 / 1024} MiB`;
  return null;
}

function pbkdf2ParamsProblem(params: Pbkdf2Params): string | null {
  const { iterations } = params;
  if (!Number.isSafeInteger(iterations) || iterations < MIN_PBKDF2_ITERATIONS || iterations > MAX_PBKDF2_ITERATIONS) {
    return `the iteration count must be an integer from ${MIN_PBKDF2_ITERATIONS} to ${MAX_PBKDF2_ITERATIONS}`;
  }
  return null;
}

function scryptMemoryBytes(params: ScryptParams): number {
  return 128 * params.cost * params.blockSize;
}

function decodeBase64url(text: string, what: string, minBytes: number): Buffer {
  if (!BASE64URL.test(text)) throw new PasswordHashFormatError(`the ${what} is not base64url`);
  const bytes = Buffer.from(text, 'base64url');
  // Round-trip: refuses non-canonical trailing bits, so one hash has one spelling.
  if (bytes.toString('base64url') !== text) throw new PasswordHashFormatError(`the ${what} is not canonical base64url`);
  if (bytes.length < minBytes || bytes.length > MAX_STORED_BYTES) {
    throw new PasswordHashFormatError(`the ${what} has ${bytes.length} bytes, expected ${minBytes} to ${MAX_STORED_BYTES}`);
  }
  return bytes;
}

function parseDecimal(text: string, what: string): number {
  if (!DECIMAL.test(text)) throw new PasswordHashFormatError(`${what} is not a positive decimal integer`);
  return Number(text);
}

function parseStoredHash(stored: unknown): ParsedHash {
  if (typeof stored !== 'string') throw new PasswordHashFormatError('it is not a string');
  if (stored.length > MAX_STORED_LENGTH) throw new PasswordHashFormatError(`it is longer than ${MAX_STORED_LENGTH} characters`);
  const fields = stored.split('$');
  if (fields[0] === PBKDF2) {
    if (fields.length !== 4) throw new PasswordHashFormatError('expected pbkdf2-sha256$<iterations>$<salt>$<hash>');
    const [, c, salt, hash] = fields as [string, string, string, string];
    const params: Pbkdf2Params = { iterations: parseDecimal(c, 'the iteration count') };
    const problem = pbkdf2ParamsProblem(params);
    if (problem !== null) throw new PasswordHashFormatError(problem);
    const saltBytes = decodeBase64url(salt, 'salt', MIN_SALT_BYTES);
    const key = decodeBase64url(hash, 'hash', MIN_HASH_BYTES);
    const work = params.iterations * Math.ceil(key.length / SHA256_BYTES);
    if (work > MAX_PBKDF2_ITERATIONS) {
      throw new PasswordHashFormatError(
        `a ${key.length}-byte hash at ${params.iterations} iterations is ${work} iterations of work (one run per 32 bytes), more than ${MAX_PBKDF2_ITERATIONS}`,
      );
    }
    return { scheme: PBKDF2, params, salt: saltBytes, hash: key };
  }
  if (fields[0] !== SCRYPT) throw new PasswordHashFormatError(UNKNOWN_SCHEME);
  if (fields.length !== 6) throw new PasswordHashFormatError('expected scrypt$<N>$<r>$<p>$<salt>$<hash>');
  const [, n, r, p, salt, hash] = fields as [string, string, string, string, string, string];
  const params: ScryptParams = { cost: parseDecimal(n, 'N'), blockSize: parseDecimal(r, 'r'), parallelization: parseDecimal(p, 'p') };
  const problem = paramsProblem(params);
  if (problem !== null) throw new PasswordHashFormatError(problem);
  return { scheme: SCRYPT, params, salt: decodeBase64url(salt, 'salt', MIN_SALT_BYTES), hash: decodeBase64url(hash, 'hash', MIN_HASH_BYTES) };
}

/** Throws PasswordHashFormatError when `stored` could not be verified; for checking a file at load time. */
export function assertWellFormedPasswordHash(stored: unknown): asserts stored is string {
  parseStoredHash(stored);
}

/** The scheme of a stored hash; throws PasswordHashFormatError as verifyPassword does. */
export function passwordHashScheme(stored: unknown): PasswordHashScheme {
  return parseStoredHash(stored).scheme;
}

/**
 * Null when `stored` uses an algorithm FIPS 140-3 approves for password-based key
 * derivation (PBKDF2 with HMAC-SHA-256, NIST SP 800-132, with its 128-bit salt);
 * otherwise the sentence saying why not. Throws PasswordHashFormatError for a
 * malformed string.
 */
export function fipsApprovalProblem(stored: unknown): string | null {
  const parsed = parseStoredHash(stored);
  if (parsed.scheme === SCRYPT) return 'it is a scrypt hash, and scrypt is not a FIPS 140-3 approved algorithm';
  if (parsed.salt.length < FIPS_MIN_SALT_BYTES) return `its salt has ${parsed.salt.length} bytes, and NIST SP 800-132 asks for at least ${FIPS_MIN_SALT_BYTES}`;
  return null;
}

/** PBKDF2-HMAC-SHA-256 of the NFC form of `password`, unbounded: callers bound `params` and `length` first. */
export function derivePbkdf2(password: string, salt: Buffer, length: number, params: Pbkdf2Params): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    pbkdf2(password.normalize('NFC'), salt, params.iterations, length, 'sha256', (error, key) => (error === null ? resolve(key) : reject(error)));
  });
}

function deriveScrypt(password: string, salt: Buffer, length: number, params: ScryptParams): Promise<Buffer> {
  const options: ScryptOptions = {
    N: params.cost,
    r: params.blockSize,
    p: params.parallelization,
    // Node's default maxmem (32 MiB) is exactly 128 * 2^15 * 8 and OpenSSL counts a
    // little more, so the default parameters need headroom.
    maxmem: scryptMemoryBytes(params) * 2,
  };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, length, options, (error, key) => (error === null ? resolve(key) : reject(error)));
  });
}

/**
 * Hash `password` for storage: scrypt for ScryptParams, PBKDF2-HMAC-SHA-256 for
 * Pbkdf2Params. Tests pass low costs to stay fast; production callers pass the
 * defaults. Throws RangeError for out-of-bounds params.
 */
export async function hashPassword(password: string, params: ScryptParams | Pbkdf2Params = DEFAULT_SCRYPT_PARAMS): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  if ('iterations' in params) {
    const problem = pbkdf2ParamsProblem(params);
    if (problem !== null) throw new RangeError(`Invalid PBKDF2 parameters: ${problem}`);
    const hash = await derivePbkdf2(password, salt, HASH_BYTES, params);
    return [PBKDF2, params.iterations, salt.toString('base64url'), hash.toString('base64url')].join('$');
  }
  const problem = paramsProblem(params);
  if (problem !== null) throw new RangeError(`Invalid scrypt parameters: ${problem}`);
  const hash = await deriveScrypt(password, salt, HASH_BYTES, params);
  return [SCRYPT, params.cost, params.blockSize, params.parallelization, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/**
 * True when `password` matches `stored`. A malformed `stored` throws
 * PasswordHashFormatError (a broken admin.json is the operator's problem to see,
 * not a silent "wrong password"). The comparison is constant-time.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseStoredHash(stored);
  // Bounds the work an over-long input causes; no valid password is longer.
  if (typeof password !== 'string' || password.length > PASSWORD_MAX_LENGTH * 2) return false;
  const candidate =
    parsed.scheme === PBKDF2
      ? await derivePbkdf2(password, parsed.salt, parsed.hash.length, parsed.params)
      : await deriveScrypt(password, parsed.salt, parsed.hash.length, parsed.params);
  return timingSafeEqual(candidate, parsed.hash);
}

/**
 * Null when `password` is acceptable as the admin password, otherwise a sentence
 * saying what is wrong (shown as is by the CLI and the dashboard). Length counts
 * Unicode code points.
 */
export function checkPasswordStrength(password: string): string | null {
  const chars = [...password];
  if (chars.length < PASSWORD_MIN_LENGTH) {
    return `The password must be at least ${PASSWORD_MIN_LENGTH} characters long; it has ${chars.length}.`;
  }
  if (chars.length > PASSWORD_MAX_LENGTH) {
    return `The password must be at most ${PASSWORD_MAX_LENGTH} characters long; it has ${chars.length}.`;
  }
  if (CONTROL.test(password)) return 'The password must not contain control characters (tabs, escapes, line breaks).';
  const distinct = new Set(chars).size;
  if (distinct === 1) return 'The password must not be one character repeated.';
  if (distinct < PASSWORD_MIN_DISTINCT) {
    return `The password must use at least ${PASSWORD_MIN_DISTINCT} different characters; it uses ${distinct}.`;
  }
  return null;
}
