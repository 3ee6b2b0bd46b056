// The file adapter of the admin token store port: <dataDir>/admin-tokens.json
// (mode 0600), written whole and atomically (src/files/atomic-file.ts) under
// admin-tokens.json.lock (src/files/file-lock.ts), each change re-reading the
// file under the lock so concurrent CLIs and servers lose nothing.
//
// Reads are fresh: every call stats the file and re-reads it when its inode,
// size or times changed (the parsed records are kept for the unchanged case),
// so a token the CLI revokes is refused by a running server's next request.
import { mkdir, open, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { removeStaleTempFiles, writeFileAtomic } from '../files/atomic-file.ts';
import { KeyStoreIoError } from '../keys/errors.ts';
import { DEFAULT_LOCK_OPTIONS, withFileLock, type FileLockOptions } from '../files/file-lock.ts';
import { AdminTokenError, AdminTokenNotFoundError } from '../keys/admin-token-errors.ts';
import { parseTokenFile, serializeTokenFile } from '../keys/admin-token-file.ts';
import { checkNewToken, hashAdminToken, isWellFormedAdminToken, issueToken, revokeTokenRecord, tokenHashMatches, tokensToForget, type AdminTokenRecord } from '../keys/admin-token.ts';
import type { AdminTokenStore, TokenWriteAhead } from './admin-token-store-port.ts';
import { fileSignature, isMissingFile, MISSING_FILE } from './file-signature.ts';

export const ADMIN_TOKENS_FILE_NAME = 'admin-tokens.json';
const DATA_DIR_MODE = 0o700;

export interface FileAdminTokenStoreOptions {
  /** Lock file timing (tests shorten it). */
  lock?: Partial<FileLockOptions>;
}

export interface FileAdminTokenStore extends AdminTokenStore {
  readonly filePath: string;
}

interface Loaded {
  signature: string;
  records: AdminTokenRecord[];
}

export function openFileAdminTokenStore(dataDir: string, options: FileAdminTokenStoreOptions = {}): FileAdminTokenStore {
  const dir = resolve(dataDir);
  const filePath = join(dir, ADMIN_TOKENS_FILE_NAME);
  const lockOptions: FileLockOptions = { ...DEFAULT_LOCK_OPTIONS, ...options.lock };
  let cached: Loaded = { signature: MISSING_FILE, records: [] };

  /** The file's records through one descriptor, so the signature belongs to the bytes read. */
  async function readWhole(): Promise<Loaded> {
    let handle;
    try {
      handle = await open(filePath, 'r');
    } catch (cause) {
      if (isMissingFile(cause)) return { signature: MISSING_FILE, records: [] };
      throw new KeyStoreIoError('read', filePath, cause);
    }
    try {
      const signature = fileSignature(await handle.stat());
      const text = await handle.readFile('utf8');
      return { signature, records: parseTokenFile(text, filePath) };
    } catch (cause) {
      if (cause instanceof AdminTokenError) throw cause;
      throw new KeyStoreIoError('read', filePath, cause);
    } finally {
      await handle.close();
    }
  }

  /** The records as the file holds them now: one stat, and a read only when it changed. */
  async function current(): Promise<AdminTokenRecord[]> {
    let signature: string;
    try {
      signature = fileSignature(await stat(filePath));
    } catch (cause) {
      if (!isMissingFile(cause)) throw new KeyStoreIoError('check', filePath, cause);
      signature = MISSING_FILE;
    }
    if (signature === MISSING_FILE) cached = { signature, records: [] };
    else if (signature !== cached.signature) cached = await readWhole();
    return cached.records;
  }

  async function update<T>(change: (records: AdminTokenRecord[]) => { records: AdminTokenRecord[]; result: T; changed: { before: AdminTokenRecord | null; after: AdminTokenRecord } }, ahead?: TokenWriteAhead): Promise<T> {
    try {
      await mkdir(dir, { recursive: true, mode: DATA_DIR_MODE });
    } catch (cause) {
      throw new KeyStoreIoError('create the data directory', dir, cause);
    }
    return withFileLock(`${filePath}.lock`, lockOptions, async () => {
      const loaded = await readWhole();
      const { records, result, changed } = change(loaded.records);
      if (ahead !== undefined) await ahead(changed);
      await removeStaleTempFiles(filePath);
      await writeFileAtomic(filePath, serializeTokenFile(records));
      return result;
    });
  }

  return {
    location: filePath,
    filePath,
    async create(input, nowMs, ahead) {
      // Checked before the lock: a bad request never waits for, or touches, the file.
      const checked = checkNewToken(input, nowMs);
      return update((records) => {
        const issued = issueToken(checked, records, nowMs);
        const forget = new Set(tokensToForget(records, nowMs).map((r) => r.id));
        return { records: [...records.filter((r) => !forget.has(r.id)), issued.record], result: issued, changed: { before: null, after: issued.record } };
      }, ahead);
    },
    async list() {
      return [...(await current())];
    },
    async revoke(id, nowMs, ahead) {
      return update((records) => {
        const index = records.findIndex((r) => r.id === id);
        const found = records[index];
        if (found === undefined) throw new AdminTokenNotFoundError(id);
        const revoked = revokeTokenRecord(found, nowMs);
        const next = [...records];
        next[index] = revoked;
        return { records: next, result: revoked, changed: { before: found, after: revoked } };
      }, ahead);
    },
    whileNoChange: (work) => withFileLock(`${filePath}.lock`, lockOptions, work),
    async findByToken(token) {
      if (!isWellFormedAdminToken(token)) return null;
      const hash = hashAdminToken(token);
      // Every record is compared, in constant time each: at most a few hundred.
      let match: AdminTokenRecord | null = null;
      for (const record of await current()) if (tokenHashMatches(record, hash)) match = record;
      return match;
    },
  };
}
