// The admin password on disk: <dataDir>/admin.json, mode 0600.
//
//   {
//     "version": 1,
//     "passwordHash": "scrypt$32768$8$1$<salt>$<hash>",
//     "updatedAt": "2025-02-01T09:15:30.123Z"
//   }
//
// Written only by setAdminPassword (`portcullis admin set-password`), atomically and
// under admin.json.lock with the key store's file helpers, so a crash or a second
// writer never leaves a torn file. Read by the server on each login attempt, so a new
// password applies at once, without a restart.
// Parsing is strict (exact fields, a verifiable hash, an ISO time) and every problem
// names the file: a broken file must stop logins with a clear message, not read as
// "no password set" (which would re-open the bootstrap path).

import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { removeStaleTempFiles, writeFileAtomic } from '../files/atomic-file.ts';
import { FileError } from '../files/errors.ts';
import { DEFAULT_LOCK_OPTIONS, withFileLock, type FileLockOptions } from '../files/file-lock.ts';
import {
  assertWellFormedPasswordHash,
  checkPasswordStrength,
  fipsApprovalProblem,
  DEFAULT_PBKDF2_PARAMS,
  DEFAULT_SCRYPT_PARAMS,
  hashPassword,
  PasswordHashFormatError,
  type PasswordHashScheme,
  type Pbkdf2Params,
  type ScryptParams,
} from './password-hash.ts';

export const ADMIN_FILE_NAME = 'admin.json';
const ADMIN_FILE_VERSION = 1;
/** The file holds about 150 bytes; anything much larger is not ours. */
const MAX_ADMIN_FILE_BYTES = 64 * 1024;
const DATA_DIR_MODE = 0o700;
const FIELDS = ['version', 'passwordHash', 'updatedAt'] as const;
const ADVICE = 'Set a new password with "portcullis admin set-password"; it replaces the file.';

export interface AdminCredentials {
  /** scrypt$N$r$p$salt$hash or pbkdf2-sha256$iterations$salt$hash, see password-hash.ts. */
  readonly passwordHash: string;
  /** When the password was last set, ISO 8601. */
  readonly updatedAt: string;
}

type AdminCredentialsErrorCode = 'admin_file_invalid' | 'admin_file_io_error' | 'weak_admin_password' | 'admin_password_already_set';

/** Base of every error of this module; switch on `code`. */
export class AdminCredentialsError extends Error {
  override name = 'AdminCredentialsError';
  readonly code: AdminCredentialsErrorCode;
  constructor(code: AdminCredentialsErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
  }
}

/** admin.json exists but is not a file this version can use. */
export class AdminFileInvalidError extends AdminCredentialsError {
  override name = 'AdminFileInvalidError';
  readonly path: string;
  readonly problem: string;
  constructor(path: string, problem: string, options: { cause?: unknown } = {}) {
    super('admin_file_invalid', `Admin credentials file ${path} is invalid: ${problem}. ${ADVICE}`, options);
    this.path = path;
    this.problem = problem;
  }
}

/** Reading, locking or writing admin.json failed; `cause` keeps the original error. */
export class AdminFileIoError extends AdminCredentialsError {
  override name = 'AdminFileIoError';
  readonly path: string;
  constructor(path: string, message: string, cause: unknown) {
    super('admin_file_io_error', message, { cause });
    this.path = path;
  }
}

/** setAdminPassword refused the password; `problem` is checkPasswordStrength's sentence. */
export class WeakAdminPasswordError extends AdminCredentialsError {
  override name = 'WeakAdminPasswordError';
  readonly problem: string;
  constructor(problem: string) {
    super('weak_admin_password', problem);
    this.problem = problem;
  }
}

export function adminFilePath(dataDir: string): string {
  return join(resolve(dataDir), ADMIN_FILE_NAME);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isIsoTimestamp(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const time = Date.parse(value);
  return Number.isFinite(time) && new Date(time).toISOString() === value;
}

/** Pure parse of admin.json's text; `path` only names the file in errors. */
export function parseAdminFile(text: string, path: string): AdminCredentials {
  if (text.trim().length === 0) throw new AdminFileInvalidError(path, 'it is empty');
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (cause) {
    throw new AdminFileInvalidError(path, `it is not valid JSON (${cause instanceof Error ? cause.message : String(cause)})`, { cause });
  }
  if (!isPlainObject(doc)) throw new AdminFileInvalidError(path, 'expected an object {"version":1,"passwordHash":...,"updatedAt":...}');
  if (doc['version'] !== ADMIN_FILE_VERSION) {
    const found = JSON.stringify(doc['version']) ?? 'nothing';
    throw new AdminFileInvalidError(path, `"version" is ${found}, this version of portcullis reads version ${ADMIN_FILE_VERSION}`);
  }
  for (const field of Object.keys(doc)) {
    if (!(FIELDS as readonly string[]).includes(field)) throw new AdminFileInvalidError(path, `unknown field "${field}"`);
  }
  const { passwordHash, updatedAt } = doc;
  try {
    assertWellFormedPasswordHash(passwordHash);
  } catch (error) {
    if (error instanceof PasswordHashFormatError) throw new AdminFileInvalidError(path, `"passwordHash" is malformed: ${error.problem}`, { cause: error });
    throw error;
  }
  if (!isIsoTimestamp(updatedAt)) throw new AdminFileInvalidError(path, '"updatedAt" must be an ISO 8601 time like 2025-02-01T09:15:30.123Z');
  return { passwordHash, updatedAt };
}

export function serializeAdminFile(credentials: AdminCredentials): string {
  const { passwordHash, updatedAt } = credentials;
  return JSON.stringify({ version: ADMIN_FILE_VERSION, passwordHash, updatedAt }, null, 2) + '\n';
}

/**
 * The admin credentials in `dataDir`, or null when admin.json does not exist (no
 * password set yet). A file that exists but is broken throws AdminFileInvalidError.
 */
export async function readAdminCredentials(dataDir: string): Promise<AdminCredentials | null> {
  const path = adminFilePath(dataDir);
  let text: string;
  try {
    const handle = await open(path, 'r');
    try {
      checkAdminFileSize(path, (await handle.stat()).size);
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (cause) {
    return unreadAdminFile(path, cause);
  }
  return parseAdminFile(text, path);
}

function checkAdminFileSize(path: string, size: number): void {
  if (size > MAX_ADMIN_FILE_BYTES) throw new AdminFileInvalidError(path, `it has ${size} bytes, more than ${MAX_ADMIN_FILE_BYTES}`);
}

/** What a failed read of admin.json means: null when it does not exist (no password set), else the error naming the file. */
function unreadAdminFile(path: string, cause: unknown): null {
  if (cause instanceof AdminCredentialsError) throw cause;
  if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return null;
  throw new AdminFileIoError(path, `Could not read ${path}: ${cause instanceof Error ? cause.message : String(cause)}`, cause);
}

/**
 * readAdminCredentials for a check that runs before anything is served
 * (checkConfig is synchronous): the same answers, read at once.
 */
export function readAdminCredentialsSync(dataDir: string): AdminCredentials | null {
  const path = adminFilePath(dataDir);
  let text: string;
  try {
    const fd = openSync(path, 'r');
    try {
      checkAdminFileSize(path, fstatSync(fd).size);
      text = readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
  } catch (cause) {
    return unreadAdminFile(path, cause);
  }
  return parseAdminFile(text, path);
}

/**
 * Why security.requireFips refuses the password stored in admin.json at `path`
 * (a scrypt hash, a PBKDF2 salt under 16 bytes), with the fix; null when it may
 * be verified. Start (checkConfig) and each login ask the same question.
 */
export function adminPasswordFipsProblem(path: string, credentials: AdminCredentials): string | null {
  const problem = fipsApprovalProblem(credentials.passwordHash);
  if (problem === null) return null;
  return (
    `refuses the admin password in ${path}: ${problem}. Set it again with ` +
    '"portcullis admin set-password" (under security.requireFips it writes a pbkdf2-sha256 hash), or set security.requireFips to false'
  );
}

/** setAdminPassword with `onlyIfUnset` found a password already set (by another session or the CLI). */
export class AdminPasswordAlreadySetError extends AdminCredentialsError {
  override name = 'AdminPasswordAlreadySetError';
  constructor(path: string) {
    super('admin_password_already_set', `An admin password is already set in ${path}.`);
  }
}

interface SetAdminPasswordOptions {
  /** The hash to write (security.passwordHash); default scrypt. */
  scheme?: PasswordHashScheme;
  /** Tests pass low costs; production uses the defaults. */
  scrypt?: ScryptParams;
  pbkdf2?: Pbkdf2Params;
  /** Refuse (AdminPasswordAlreadySetError) when admin.json exists, checked under the lock. */
  onlyIfUnset?: boolean;
  /** Lock file timing (tests shorten it). */
  lock?: Partial<FileLockOptions>;
}

/**
 * Check the password's strength (WeakAdminPasswordError), hash it and replace
 * admin.json. The data directory is created (mode 0700) if missing. The slow hash
 * runs before the lock is taken, so the lock is held for one small write.
 */
export async function setAdminPassword(
  dataDir: string,
  password: string,
  clock: () => Date = () => new Date(),
  options: SetAdminPasswordOptions = {},
): Promise<AdminCredentials> {
  const problem = checkPasswordStrength(password);
  if (problem !== null) throw new WeakAdminPasswordError(problem);
  const path = adminFilePath(dataDir);
  const params = options.scheme === 'pbkdf2-sha256' ? (options.pbkdf2 ?? DEFAULT_PBKDF2_PARAMS) : (options.scrypt ?? DEFAULT_SCRYPT_PARAMS);
  const passwordHash = await hashPassword(password, params);
  const credentials: AdminCredentials = { passwordHash, updatedAt: clock().toISOString() };
  try {
    await mkdir(resolve(dataDir), { recursive: true, mode: DATA_DIR_MODE });
  } catch (cause) {
    throw new AdminFileIoError(path, `Could not create the data directory ${resolve(dataDir)}: ${(cause as Error).message}`, cause);
  }
  try {
    await withFileLock(`${path}.lock`, { ...DEFAULT_LOCK_OPTIONS, ...options.lock }, async () => {
      // The hash took a while: another session or the CLI may have set a password since.
      if (options.onlyIfUnset === true && (await readAdminCredentials(dataDir)) !== null) throw new AdminPasswordAlreadySetError(path);
      await removeStaleTempFiles(path);
      await writeFileAtomic(path, serializeAdminFile(credentials));
    });
  } catch (cause) {
    // The shared file helpers report as file errors; restate them as ours.
    if (cause instanceof FileError) throw new AdminFileIoError(path, cause.message, cause);
    throw cause;
  }
  return credentials;
}
