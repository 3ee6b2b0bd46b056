// The file adapter of the key store port (src/state/key-store-port.ts): keys.json under the data directory, an in-memory index for the
// server's per-request lookup, and last-used times kept apart in keys-last-used.json.
//
// Who writes what:
// - keys.json is written only by create(), update(), rotate() and revoke() (the CLI and
//   the admin API), under keys.json.lock,
//   each time re-reading the file under the lock so concurrent CLIs lose nothing.
// - keys-last-used.json is written only by flushes of touch() data (the server), under
//   its own lock, merged with what is on disk. A server therefore never rewrites
//   keys.json and cannot undo a create or revoke it has not seen yet.
//
// How a server sees CLI changes: authenticate() stats keys.json at most once per
// `reloadIntervalMs` (one synchronous stat, microseconds) and re-reads it when the
// inode, size or times changed; an fs.watch on the data directory makes the next
// authenticate() check at once instead of waiting for the interval. A revoke therefore
// takes effect for every authenticate() call that starts `reloadIntervalMs` (default
// 1 s) or more after the revoking `portcullis keys revoke` returned; usually at once.
// A reload that finds a broken file keeps the last good index and reports through
// `onError`, once per distinct broken version of the file.

import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, statSync, watch, type FSWatcher } from 'node:fs';
import { open } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { DEFAULT_LAST_USED_FLUSH_MS, DEFAULT_RELOAD_INTERVAL_MS, type IssuedKey, type KeyPatch, type KeyStore, type ListedKey, type WriteAhead } from './key-store-port.ts';
import { generateApiKey, hashApiKey, isWellFormedApiKey } from '../keys/api-key.ts';
import { removeStaleTempFiles, writeFileAtomic } from '../files/atomic-file.ts';
import { KeyStoreClosedError, KeyStoreIoError } from '../keys/errors.ts';
import { createLastUsedBatch } from '../keys/last-used-batch.ts';
import { type CheckedPatch, checkNewKey, checkPatch, createKeyRecord, keyChanges, type NewKey, requireRecord } from '../keys/key-records.ts';
import type { KeySettingsInput } from '../keys/key-settings.ts';
import { DEFAULT_LOCK_OPTIONS, withFileLock, type FileLockOptions } from '../files/file-lock.ts';
import { laterTime, newKeyId, parseKeysFile, parseLastUsedFile, serializeKeysFile, serializeLastUsedFile, type KeyRecord } from '../keys/store-format.ts';
import { fileSignature, isMissingFile, MISSING_FILE } from './file-signature.ts';

export const KEYS_FILE_NAME = 'keys.json';
export const LAST_USED_FILE_NAME = 'keys-last-used.json';
const DATA_DIR_MODE = 0o700;

export interface KeyStoreOptions {
  /** Source of createdAt/revokedAt/last-used times and of the reload interval's clock. */
  clock?: () => Date;
  /** Minimum time between two stats of keys.json by authenticate(); default 1000. */
  reloadIntervalMs?: number;
  /** Delay between the first unflushed touch() and the write of keys-last-used.json; default 5000. */
  lastUsedFlushMs?: number;
  /** Watch the data directory so changes are seen before the interval ends; default true. */
  watch?: boolean;
  /** Background failures: a broken keys.json on reload, a failed last-used flush. Default: process.emitWarning. */
  onError?: (error: Error) => void;
  /** Lock file timing (tests shorten it). */
  lock?: Partial<FileLockOptions>;
  /**
   * Make the data directory when it is missing; default true. Read-only
   * commands (keys list, show, usage) pass false: a missing directory then
   * reads as no keys and is left uncreated.
   */
  createDir?: boolean;
}

export interface FileKeyStore extends KeyStore {
  readonly keysFilePath: string;
  readonly lastUsedFilePath: string;
}

interface LoadedKeys {
  records: KeyRecord[];
  /** Identity of the file version the records came from; 'missing' when there is no file. */
  signature: string;
}

/**
 * Open the store in `dataDir` (created with mode 0700 if missing) and load keys.json
 * synchronously, so a broken file stops startup with KeyFileInvalidError instead of
 * leaving a server that refuses every key. A missing keys.json is an empty store.
 */
export function openKeyStore(dataDir: string, options: KeyStoreOptions = {}): FileKeyStore {
  const dir = resolve(dataDir);
  const keysFilePath = join(dir, KEYS_FILE_NAME);
  const lastUsedFilePath = join(dir, LAST_USED_FILE_NAME);
  const clock = options.clock ?? (() => new Date());
  const reloadIntervalMs = options.reloadIntervalMs ?? DEFAULT_RELOAD_INTERVAL_MS;
  const lastUsedFlushMs = options.lastUsedFlushMs ?? DEFAULT_LAST_USED_FLUSH_MS;
  const lockOptions: FileLockOptions = { ...DEFAULT_LOCK_OPTIONS, ...options.lock };
  const onError = options.onError ?? ((error: Error) => process.emitWarning(error));

  if (options.createDir !== false) {
    try {
      mkdirSync(dir, { recursive: true, mode: DATA_DIR_MODE });
    } catch (cause) {
      throw new KeyStoreIoError('create the data directory', dir, cause);
    }
  }

  let closed = false;
  let closing: Promise<void> | null = null;
  let byHash = new Map<string, KeyRecord>();
  let byId = new Map<string, KeyRecord>();
  let loadedSignature = MISSING_FILE;
  let lastCheckMs = clock().getTime();
  let changeSeen = false;
  let reportedBrokenSignature: string | null = null;

  function adopt(loaded: LoadedKeys): void {
    byHash = new Map(loaded.records.map((r) => [r.hash, r]));
    byId = new Map(loaded.records.map((r) => [r.id, r]));
    loadedSignature = loaded.signature;
    reportedBrokenSignature = null;
  }

  function readKeysSync(): LoadedKeys {
    let fd: number;
    try {
      fd = openSync(keysFilePath, 'r');
    } catch (cause) {
      if (isMissingFile(cause)) return { records: [], signature: MISSING_FILE };
      throw new KeyStoreIoError('read', keysFilePath, cause);
    }
    let text: string;
    let signature: string;
    try {
      // fstat and read through one descriptor: the signature belongs to the bytes read
      // even if the file is replaced meanwhile.
      signature = fileSignature(fstatSync(fd));
      text = readFileSync(fd, 'utf8');
    } catch (cause) {
      throw new KeyStoreIoError('read', keysFilePath, cause);
    } finally {
      closeSync(fd);
    }
    return { records: parseKeysFile(text, keysFilePath), signature };
  }

  async function readKeys(): Promise<LoadedKeys> {
    let handle;
    try {
      handle = await open(keysFilePath, 'r');
    } catch (cause) {
      if (isMissingFile(cause)) return { records: [], signature: MISSING_FILE };
      throw new KeyStoreIoError('read', keysFilePath, cause);
    }
    let text: string;
    let signature: string;
    try {
      signature = fileSignature(await handle.stat());
      text = await handle.readFile('utf8');
    } catch (cause) {
      throw new KeyStoreIoError('read', keysFilePath, cause);
    } finally {
      await handle.close();
    }
    return { records: parseKeysFile(text, keysFilePath), signature };
  }

  async function readLastUsed(): Promise<Map<string, string>> {
    let text: string;
    try {
      const handle = await open(lastUsedFilePath, 'r');
      try {
        text = await handle.readFile('utf8');
      } finally {
        await handle.close();
      }
    } catch (cause) {
      if (isMissingFile(cause)) return new Map();
      throw new KeyStoreIoError('read', lastUsedFilePath, cause);
    }
    return parseLastUsedFile(text, lastUsedFilePath);
  }

  function currentSignature(): string {
    try {
      return fileSignature(statSync(keysFilePath, { throwIfNoEntry: false }));
    } catch (cause) {
      throw new KeyStoreIoError('check', keysFilePath, cause);
    }
  }

  /** Read-modify-write of keys.json under its lock; the result becomes the index. `ahead` hears of the change before it is written. */
  function updateKeys<T>(change: (records: KeyRecord[]) => { records: KeyRecord[]; result: T; changed: { before: KeyRecord | null; after: KeyRecord } }, ahead?: WriteAhead): Promise<T> {
    if (closed) return Promise.reject(new KeyStoreClosedError());
    return withFileLock(`${keysFilePath}.lock`, lockOptions, async () => {
      const current = await readKeys();
      const { records, result, changed } = change(current.records);
      if (ahead !== undefined) await ahead(changed);
      await removeStaleTempFiles(keysFilePath);
      await writeFileAtomic(keysFilePath, serializeKeysFile(records));
      // The change is on disk: a failing stat now must not report it as failed.
      // An unknown signature only makes the next check re-read the file.
      let signature = '';
      try {
        signature = currentSignature();
      } catch {
        // keep '' (never equal to a real signature)
      }
      adopt({ records, signature });
      return result;
    });
  }

  function maybeReload(): void {
    const now = clock().getTime();
    // `now < lastCheckMs`: the clock went backwards; check rather than wait for it to catch up.
    if (!changeSeen && now - lastCheckMs < reloadIntervalMs && now >= lastCheckMs) return;
    lastCheckMs = now;
    changeSeen = false;
    try {
      const signature = currentSignature();
      if (signature === loadedSignature || signature === reportedBrokenSignature) return;
      try {
        adopt(readKeysSync());
      } catch (error) {
        reportedBrokenSignature = signature;
        throw error;
      }
    } catch (error) {
      onError(error as Error);
    }
  }

  adopt(readKeysSync());
  lastCheckMs = clock().getTime();

  let watcher: FSWatcher | null = null;
  function stopWatching(): void {
    watcher?.close();
    watcher = null;
  }
  if (options.watch ?? true) {
    try {
      // persistent: false so the watcher alone never keeps the process alive.
      watcher = watch(dir, { persistent: false }, (_event, filename) => {
        // Some platforms report no file name; then any change may be ours.
        if (filename === null || filename === KEYS_FILE_NAME) changeSeen = true;
      });
      // Watching is only a shortcut: without it the periodic stat still sees changes.
      watcher.on('error', stopWatching);
    } catch {
      watcher = null;
    }
  }

  const lastUsedBatch = createLastUsedBatch({
    flushMs: lastUsedFlushMs,
    // Merged with what is on disk under the file's own lock, so servers sharing it add up.
    write: (times) =>
      withFileLock(`${lastUsedFilePath}.lock`, lockOptions, async () => {
        const merged = await readLastUsed();
        for (const [id, time] of times) merged.set(id, laterTime(merged.get(id), time));
        await removeStaleTempFiles(lastUsedFilePath);
        await writeFileAtomic(lastUsedFilePath, serializeLastUsedFile(merged));
      }),
    onError,
  });

  /** Read-modify-write of the record `id` under the lock: `change` is a record function of key-records.ts. */
  const changes = keyChanges(changeKey, () => clock().toISOString());

  function changeKey<T>(id: string, change: (current: KeyRecord) => { record: KeyRecord; result: T }, ahead?: WriteAhead): Promise<T> {
    return updateKeys((records) => {
      const index = records.findIndex((r) => r.id === id);
      const before = requireRecord(id, records[index]);
      const { record, result } = change(before);
      return { records: records.with(index, record), result, changed: { before, after: record } };
    }, ahead);
  }

  async function listKeys(): Promise<ListedKey[]> {
    if (closed) throw new KeyStoreClosedError();
    const loaded = await readKeys();
    const lastUsed = await readLastUsed();
    adopt(loaded);
    return loaded.records.map((record) => {
      const onDisk = lastUsed.get(record.id);
      const pending = lastUsedBatch.pending(record.id);
      const lastUsedAt = pending === undefined ? (onDisk ?? null) : laterTime(onDisk, pending);
      return Object.freeze({ ...record, lastUsedAt });
    });
  }

  return {
    location: keysFilePath,
    keysFilePath,
    lastUsedFilePath,

    create(name: string, input: KeySettingsInput = {}, ahead?: WriteAhead) {
      let newKey: NewKey;
      try {
        newKey = checkNewKey(name, input, clock().getTime());
      } catch (error) {
        return Promise.reject(error as Error);
      }
      return updateKeys((records) => {
        const key = generateApiKey();
        let id = newKeyId();
        while (records.some((r) => r.id === id)) id = newKeyId();
        const record = createKeyRecord(id, key, newKey, clock().toISOString());
        return { records: [...records, record], result: { key, record } satisfies IssuedKey, changed: { before: null, after: record } };
      }, ahead);
    },

    list: listKeys,

    async get(id: string) {
      return requireRecord(id, (await listKeys()).find((k) => k.id === id));
    },

    update(id: string, patch: KeyPatch, ahead?: WriteAhead) {
      let checked: CheckedPatch;
      try {
        checked = checkPatch(patch);
      } catch (error) {
        return Promise.reject(error as Error);
      }
      return changes.patch(id, checked, ahead);
    },

    rotate: (id: string, ahead?: WriteAhead): Promise<IssuedKey> => changes.rotate(id, ahead),

    revoke: (id: string, ahead?: WriteAhead) => changes.revoke(id, ahead),

    async reload() {
      if (closed) throw new KeyStoreClosedError();
      adopt(await readKeys());
    },

    async prepareReload() {
      if (closed) throw new KeyStoreClosedError();
      const loaded = await readKeys();
      return { commit: () => adopt(loaded) };
    },

    authenticate(rawKey: string) {
      // Format and checksum first: garbage never costs a hash, a stat or a lookup.
      if (closed || !isWellFormedApiKey(rawKey)) return null;
      maybeReload();
      // Looking up by SHA-256 leaks nothing useful through timing: an attacker cannot
      // steer the hash of their guess towards a stored one.
      const record = byHash.get(hashApiKey(rawKey));
      // Expiry is the caller's check, so it can say "expired" rather than "unknown".
      return record === undefined || record.revokedAt !== null ? null : record;
    },

    touch(id: string) {
      if (closed || !byId.has(id)) return;
      lastUsedBatch.note(id, clock().toISOString());
    },

    flushLastUsed: () => lastUsedBatch.flush(),

    whileNoChange: <T>(work: () => Promise<T>): Promise<T> => withFileLock(`${keysFilePath}.lock`, lockOptions, work),

    close() {
      if (closing !== null) return closing;
      closed = true;
      stopWatching();
      closing = lastUsedBatch.close();
      return closing;
    },
  };
}
