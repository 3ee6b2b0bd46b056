// Every failure of the key store, as data with a stable `code`.
// These errors reach operators (CLI output, server logs), never HTTP clients:
// the server answers an unknown or revoked key with AuthenticationError from
// src/errors/api-error.ts. No message ever contains a raw key; ids, names, prefixes and
// file paths are not secret.

type KeyStoreErrorCode =
  | 'invalid_key_name'
  | 'invalid_key_setting'
  | 'key_revoked'
  | 'key_not_found'
  | 'key_already_revoked'
  | 'key_file_invalid'
  | 'key_store_io_error'
  | 'key_store_closed';

/** Base of every key store error; switch on `code`, not on the message. */
export class KeyStoreError extends Error {
  override name = 'KeyStoreError';
  readonly code: KeyStoreErrorCode;

  constructor(code: KeyStoreErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
  }
}

/** The name given to `create` is empty, too long or holds control characters. */
export class InvalidKeyNameError extends KeyStoreError {
  override name = 'InvalidKeyNameError';
  readonly problem: string;
  constructor(problem: string) {
    super('invalid_key_name', `Invalid key name: ${problem}.`);
    this.problem = problem;
  }
}

/** An allowed-alias list, expiry or limit given to `create`/`update` is malformed. */
export class InvalidKeySettingError extends KeyStoreError {
  override name = 'InvalidKeySettingError';
  /** The field at fault, as a path: `allowedAliases[2]`, `limits.tokensPerMinute`. */
  readonly param: string;
  /** What is wrong, without the field: `must be an alias name`. */
  readonly problem: string;
  constructor(param: string, problem: string) {
    super('invalid_key_setting', `Invalid ${param}: ${problem}.`);
    this.param = param;
    this.problem = problem;
  }
}

/** `rotate` or `update` was given a revoked key: a revoked key stays revoked. */
export class KeyRevokedError extends KeyStoreError {
  override name = 'KeyRevokedError';
  readonly keyId: string;
  constructor(keyId: string) {
    super('key_revoked', `Key ${keyId} is revoked; create a new key instead.`);
    this.keyId = keyId;
  }
}

const KEY_ID_SHAPE = /^key_[0-9A-Za-z]{16}$/;

/** `revoke` was given an id that no key has. */
export class KeyNotFoundError extends KeyStoreError {
  override name = 'KeyNotFoundError';
  /** The id asked for, or null when it did not have the shape of an id (it might be a raw key). */
  readonly keyId: string | null;
  constructor(keyId: string) {
    // Echo the id only when it has the shape of one: an operator who pastes the raw
    // key instead of its id must not see it copied into logs.
    const shaped = KEY_ID_SHAPE.test(keyId);
    const shown = shaped ? `the id '${keyId}'` : 'that id (ids look like key_ followed by 16 letters or digits)';
    super('key_not_found', `No API key has ${shown}. Run "portcullis keys list" to see the ids.`);
    this.keyId = shaped ? keyId : null;
  }
}

/**
 * Revoking a revoked key is an error rather than a silent no-op: a second
 * revoke usually means the operator copied the wrong id, and the key they meant
 * to revoke is still active.
 */
export class KeyAlreadyRevokedError extends KeyStoreError {
  override name = 'KeyAlreadyRevokedError';
  readonly keyId: string;
  readonly revokedAt: string;
  constructor(keyId: string, revokedAt: string) {
    super('key_already_revoked', `API key '${keyId}' was already revoked at ${revokedAt}.`);
    this.keyId = keyId;
    this.revokedAt = revokedAt;
  }
}

/**
 * A store file is not valid JSON or does not match its schema. The file is
 * never treated as empty and never overwritten: the operator must repair or
 * restore it, because guessing would lose keys or resurrect revoked ones.
 */
export class KeyFileInvalidError extends KeyStoreError {
  override name = 'KeyFileInvalidError';
  readonly path: string;
  readonly problem: string;
  constructor(path: string, problem: string, advice: string, options: { cause?: unknown } = {}) {
    super('key_file_invalid', `Key store file ${path} is invalid: ${problem}. ${advice}`, options);
    this.path = path;
    this.problem = problem;
  }
}

/**
 * The key store's backing (a file read, Redis) failed; `cause` keeps the original error.
 * The file helpers' own failures are FileIoError and FileLockTimeoutError (src/files/errors.ts).
 */
export class KeyStoreIoError extends KeyStoreError {
  override name = 'KeyStoreIoError';
  readonly path: string;
  constructor(operation: string, path: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super('key_store_io_error', `Could not ${operation} ${path}: ${reason}`, { cause });
    this.path = path;
  }
}

/** The store was used after close(). */
export class KeyStoreClosedError extends KeyStoreError {
  override name = 'KeyStoreClosedError';
  constructor() {
    super('key_store_closed', 'The key store is closed.');
  }
}
