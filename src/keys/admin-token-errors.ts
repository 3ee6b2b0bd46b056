// Every failure of the admin API token store, as data with a stable `code`
// (docs/admin-api.md, "Tokens"). Messages reach operators (CLI) and, for the
// setting errors, admin API clients; none ever contains a token or its hash.
// Reading the file is reported with the key store's KeyStoreIoError; writing it
// and its lock with FileIoError and FileLockTimeoutError (src/files/errors.ts).

type AdminTokenErrorCode =
  | 'invalid_token_setting'
  | 'admin_token_not_found'
  | 'admin_token_already_revoked'
  | 'admin_token_limit_reached'
  | 'admin_token_file_invalid';

export class AdminTokenError extends Error {
  override name = 'AdminTokenError';
  readonly code: AdminTokenErrorCode;
  constructor(code: AdminTokenErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** A name, scope list, expiry or creator given to `create` is malformed; `param` names it. */
export class InvalidTokenSettingError extends AdminTokenError {
  override name = 'InvalidTokenSettingError';
  /** `name`, `scopes`, `scopes[1]`, `expiresAt`, `createdBy`. */
  readonly param: string;
  readonly problem: string;
  constructor(param: string, problem: string) {
    super('invalid_token_setting', `Invalid ${param}: ${problem}.`);
    this.param = param;
    this.problem = problem;
  }
}

const TOKEN_ID_SHAPE = /^tok_[0-9A-Za-z]{16}$/;

export class AdminTokenNotFoundError extends AdminTokenError {
  override name = 'AdminTokenNotFoundError';
  constructor(id: string) {
    // Echo the id only when it has the shape of one: a pasted token must not be copied into output.
    const shown = TOKEN_ID_SHAPE.test(id) ? `the id '${id}'` : 'that id (ids look like tok_ followed by 16 letters or digits)';
    super('admin_token_not_found', `No admin API token has ${shown}. List them with "portcullis admin tokens list" or GET /api/tokens.`);
  }
}

export class AdminTokenAlreadyRevokedError extends AdminTokenError {
  override name = 'AdminTokenAlreadyRevokedError';
  constructor(id: string, revokedAt: string) {
    super('admin_token_already_revoked', `Admin API token '${id}' was already revoked at ${revokedAt}.`);
  }
}

export class AdminTokenLimitError extends AdminTokenError {
  override name = 'AdminTokenLimitError';
  constructor(limit: number) {
    super('admin_token_limit_reached', `There are already ${limit} live admin API tokens (the most allowed); revoke one you no longer use first.`);
  }
}

/** admin-tokens.json (or a Redis record) is not what this version writes; it is never overwritten. */
export class AdminTokenFileInvalidError extends AdminTokenError {
  override name = 'AdminTokenFileInvalidError';
  readonly location: string;
  constructor(location: string, problem: string) {
    super('admin_token_file_invalid', `Admin token store ${location} is invalid: ${problem}. Nothing was changed; repair it or restore it from a backup.`);
    this.location = location;
  }
}
