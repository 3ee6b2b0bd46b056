// The response store (response-store-port.ts) of one instance: records in this
// process's memory, or one file each under <dataDir>/responses/ (written crash-safe,
// mode 0600), with the index (owner, deadline, size) in memory either way. One serving
// process owns the directory, as it owns budgets.json.
//
// Expiry runs on the injected Scheduler: one timer, armed for the earliest deadline,
// removes every record that is due; get() also refuses a record at its deadline, so
// a record is gone at expiresAt exactly whether or not the timer has fired yet.
import { mkdir, readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../files/atomic-file.ts';
import { FileIoError } from '../files/errors.ts';
import type { Scheduler, Timer } from '../time/scheduler.ts';
import { DuplicateResponseIdError, ResponseStoreFullError } from './errors.ts';
import { ExpiryQueue } from './expiry-queue.ts';
import { checkRecordBounds, conversationOf, parseRecord, recordJson, type ResponseStore, type ResponseStoreLimits, type StoredResponse } from './response-store-port.ts';

/** Ids that are safe as file names: what the gateway makes (`resp_` and hex) and more. */
const STORABLE_ID = /^[A-Za-z0-9_-]{1,200}$/;
const RECORD_SUFFIX = '.json';

interface LocalResponseStoreOptions {
  /** The directory holding one file per record; null: memory only (lost at exit). */
  dir: string | null;
  scheduler: Scheduler;
  limits: ResponseStoreLimits;
  /** A record file that cannot be read, parsed or removed: reported, never thrown. */
  onProblem?: (message: string) => void;
}

/** Where record JSON is kept: the index above it is the same for both. */
interface Shelf {
  write(id: string, json: string): Promise<void>;
  read(id: string): Promise<string | null>;
  remove(id: string): Promise<void>;
}

interface IndexEntry {
  keyId: string;
  expiresAt: number;
  bytes: number;
}

function memoryShelf(): Shelf {
  const records = new Map<string, string>();
  return {
    write: (id, json) => {
      records.set(id, json);
      return Promise.resolve();
    },
    read: (id) => Promise.resolve(records.get(id) ?? null),
    remove: (id) => {
      records.delete(id);
      return Promise.resolve();
    },
  };
}

function directoryShelf(dir: string): Shelf {
  const path = (id: string): string => join(dir, id + RECORD_SUFFIX);
  return {
    write: (id, json) => writeFileAtomic(path(id), json),
    async read(id) {
      try {
        return await readFile(path(id), 'utf8');
      } catch (cause) {
        if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw new FileIoError('read', path(id), cause);
      }
    },
    async remove(id) {
      try {
        await unlink(path(id));
      } catch (cause) {
        if ((cause as NodeJS.ErrnoException).code !== 'ENOENT') throw new FileIoError('remove', path(id), cause);
      }
    },
  };
}

/** Opens the store; with a directory, reads the records a previous run left (expired ones and debris are removed). */
export async function openLocalResponseStore(options: LocalResponseStoreOptions): Promise<ResponseStore> {
  const { dir, scheduler, limits } = options;
  const onProblem = options.onProblem ?? ((message: string) => process.emitWarning(message));
  const index = new Map<string, IndexEntry>();
  const queue = new ExpiryQueue();
  const shelf = dir === null ? memoryShelf() : directoryShelf(dir);
  let totalBytes = 0;
  let timer: Timer | undefined;
  let closed = false;
  // Writes and removals run one after another, so a delete never overtakes the write it undoes.
  let tail: Promise<unknown> = Promise.resolve();
  const serial = <T>(op: () => Promise<T>): Promise<T> => {
    const run = tail.then(op, op);
    tail = run.catch(() => undefined);
    return run;
  };

  function forget(id: string): IndexEntry | undefined {
    const entry = index.get(id);
    if (entry === undefined) return undefined;
    index.delete(id);
    totalBytes -= entry.bytes;
    return entry;
  }

  function removeFromShelf(id: string): Promise<void> {
    return serial(() => shelf.remove(id)).catch((error: unknown) => onProblem(`response store: ${(error as Error).message}`));
  }

  /** Removes every record due at `nowMs`, earliest first. */
  function sweep(nowMs: number): void {
    for (let at = queue.peek(); at !== undefined && at <= nowMs; at = queue.peek()) {
      const due = queue.pop();
      if (due === undefined) break;
      const entry = index.get(due.id);
      if (entry === undefined || entry.expiresAt !== due.at) continue;
      forget(due.id);
      void removeFromShelf(due.id);
    }
  }

  function arm(): void {
    scheduler.clearTimer(timer);
    timer = undefined;
    const at = queue.peek();
    if (at === undefined || closed) return;
    timer = scheduler.setTimeout(() => {
      timer = undefined;
      sweep(scheduler.now());
      arm();
    }, Math.max(0, at - scheduler.now()));
    timer.unref();
  }

  function track(id: string, entry: IndexEntry): void {
    index.set(id, entry);
    totalBytes += entry.bytes;
    const earliest = queue.peek();
    queue.push(id, entry.expiresAt);
    if (earliest === undefined || entry.expiresAt < earliest) arm();
  }

  function live(id: string, keyId: string): IndexEntry | null {
    const entry = index.get(id);
    if (entry === undefined || entry.keyId !== keyId || scheduler.now() >= entry.expiresAt) return null;
    return entry;
  }

  async function get(id: string, keyId: string): Promise<StoredResponse | null> {
    if (live(id, keyId) === null) return null;
    const json = await shelf.read(id);
    const record = json === null ? null : parseRecord(json);
    if (record === null || record.id !== id || record.keyId !== keyId) {
      if (json !== null) onProblem(`response store: the record of ${id} is not a stored response; it is left out`);
      return null;
    }
    return scheduler.now() >= record.expiresAt ? null : record;
  }

  if (dir !== null) await load(dir, scheduler.now(), onProblem, (id, entry) => track(id, entry));

  return {
    limits,
    async put(record) {
      if (!STORABLE_ID.test(record.id)) throw new TypeError(`A stored response id is 1 to 200 of [A-Za-z0-9_-]; got ${JSON.stringify(record.id)}.`);
      const { json, bytes } = recordJson(record);
      checkRecordBounds(record, bytes, limits);
      const nowMs = scheduler.now();
      if (record.expiresAt <= nowMs) return;
      sweep(nowMs);
      if (index.has(record.id)) throw new DuplicateResponseIdError(record.id);
      if (totalBytes + bytes > limits.maxTotalBytes) throw new ResponseStoreFullError();
      // Counted before the write, so puts running side by side cannot overfill the store together.
      track(record.id, { keyId: record.keyId, expiresAt: record.expiresAt, bytes });
      try {
        await serial(() => shelf.write(record.id, json));
      } catch (error) {
        forget(record.id);
        throw error;
      }
    },
    get,
    async delete(id, keyId) {
      if (live(id, keyId) === null) return false;
      forget(id);
      await serial(() => shelf.remove(id));
      return true;
    },
    async resolveConversation(previousId, keyId) {
      const record = await get(previousId, keyId);
      return record === null ? null : conversationOf(record, limits);
    },
    async close() {
      closed = true;
      scheduler.clearTimer(timer);
      timer = undefined;
      await tail;
    },
  };
}

/** Indexes the record files in `dir` (made when missing); removes expired records, unreadable ones and temp files of a crashed write. */
async function load(dir: string, nowMs: number, onProblem: (message: string) => void, track: (id: string, entry: IndexEntry) => void): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (cause) {
    throw new FileIoError('create the directory', dir, cause);
  }
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (cause) {
    throw new FileIoError('list the directory', dir, cause);
  }
  for (const name of names) {
    const path = join(dir, name);
    const id = name.endsWith(RECORD_SUFFIX) ? name.slice(0, -RECORD_SUFFIX.length) : null;
    let record: StoredResponse | null = null;
    let json = '';
    if (id !== null && STORABLE_ID.test(id)) {
      try {
        json = await readFile(path, 'utf8');
        record = parseRecord(json);
      } catch (cause) {
        onProblem(`response store: ${new FileIoError('read', path, cause).message}; it is left out`);
        continue;
      }
      if (record === null || record.id !== id) onProblem(`response store: ${path} is not a stored response; it is removed`);
    }
    if (record !== null && record.id === id && record.expiresAt > nowMs) {
      track(id, { keyId: record.keyId, expiresAt: record.expiresAt, bytes: Buffer.byteLength(json, 'utf8') });
      continue;
    }
    await unlink(path).catch((cause: unknown) => onProblem(`response store: ${new FileIoError('remove', path, cause).message}`));
  }
}
