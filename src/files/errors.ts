// Failures of the file helpers (atomic replacement, lock files), as data with a
// stable `code`. Every store that keeps a file (keys, admin tokens, usage, the
// audit log, the admin password) reports through them; the errors reach
// operators (CLI output, server logs) and map to a 503 on the admin API, never
// to a gateway client. File paths are not secret.

type FileErrorCode = 'file_io_error' | 'file_lock_timeout' | 'data_dir_in_use';

/** Base of the file helpers' errors; switch on `code`, not on the message. */
export class FileError extends Error {
  override name = 'FileError';
  readonly code: FileErrorCode;

  constructor(code: FileErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
  }
}

/** Another process held the lock file for longer than the wait allows. */
export class FileLockTimeoutError extends FileError {
  override name = 'FileLockTimeoutError';
  readonly lockPath: string;
  constructor(lockPath: string, waitedMs: number, holder: string) {
    super(
      'file_lock_timeout',
      `Timed out after ${waitedMs} ms waiting for the lock file ${lockPath} (held by ${holder}). ` +
        'If no other portcullis process is writing the file it guards, delete the lock file and retry.',
    );
    this.lockPath = lockPath;
  }
}

/** A file system operation failed; `cause` keeps the original error (with its errno code). */
export class FileIoError extends FileError {
  override name = 'FileIoError';
  readonly path: string;
  constructor(operation: string, path: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super('file_io_error', `Could not ${operation} ${path}: ${reason}`, { cause });
    this.path = path;
  }
}
