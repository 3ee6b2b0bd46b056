// A gateway's exclusive hold on its data directory. The file backend keeps budget
// counts in this process's memory and rewrites budgets.json with only its own,
// so two gateways on one directory would each overwrite the other's spending,
// and the lost tokens come back as budget after a restart. One gateway per data
// directory is therefore enforced, not only documented:
// - in this process, by a registry of held directories by real path (a host that
//   makes two gateways on one config);
// - across processes, by <dataDir>/gateway.lock holding {pid, hostname, token,
//   startedAt}. It is taken whole (written to a claim file, then hard-linked to
//   its name, which fails when the name exists) and removed on release.
// The CLI's commands (keys, usage, audit) take no hold: they work beside a
// running gateway through the per-file locks of src/files/file-lock.ts.
//
// A lock is stale, and taken over, when it names this host and a pid that no
// longer exists, or this process's pid without this process's token (an earlier
// process had the same pid: containers restart pids low), or no holder at all and
// is older than a few seconds (a process killed between the create and the write
// where hard links are missing). A lock of another host is never judged: its
// process cannot be seen from here, so the operator decides.
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, realpathSync, statSync, unlinkSync, writeSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FileError, FileIoError } from '../files/errors.ts';
import { holderIsGone, isProcessAlive, newLockToken, NO_HARD_LINKS, parseLockHolder, thisProcessHolder, type LockHolder } from '../files/lock-holder.ts';

export const DATA_DIR_LOCK_FILE = 'gateway.lock';
const DATA_DIR_MODE = 0o700;
const LOCK_FILE_MODE = 0o600;
/** A lock file that names no holder and is older than this is debris of a crash. */
const EMPTY_GRACE_MS = 5_000;
/** A break file older than this is debris of a process killed while taking over a lock. */
const BREAK_STALE_MS = 30_000;
type HoldContent = LockHolder & { startedAt: string };

/** The data directory is held by another gateway, in this process or another. */
export class DataDirInUseError extends FileError {
  override name = 'DataDirInUseError';
  readonly dataDir: string;
  /** The holder's pid; null when the lock file names none. */
  readonly holderPid: number | null;
  constructor(dataDir: string, holder: string, holderPid: number | null, lockFile: string | null) {
    super(
      'data_dir_in_use',
      `dataDir ${dataDir} is in use by another gateway (${holder}); one gateway keeps its budget counts per data directory, so a second would lose spending. ` +
        'Give this gateway another dataDir, or use the Redis state backend ("state": {"backend": "redis"}) for several instances (docs/scaling.md)' +
        (lockFile === null ? '.' : `. If that process is not a portcullis gateway, stop this one, delete ${lockFile} and start again.`),
    );
    this.dataDir = dataDir;
    this.holderPid = holderPid;
  }
}

export interface DataDirHold {
  /** The held directory's real path. */
  readonly dir: string;
  /** Gives the directory up (the lock file only if it is still ours); safe to call twice. */
  release(): void;
}

/** Real path -> the token of this process's hold on it. */
const held = new Map<string, string>();

/**
 * Takes the data directory (made when missing) for one gateway's life; synchronous, so
 * two gateways started together in one process cannot both pass the registry.
 * Throws DataDirInUseError while another gateway holds it, FileIoError when the
 * directory or the lock file cannot be made or read.
 */
export function holdDataDir(dataDir: string, options: { now?: () => number; isProcessAlive?: (pid: number) => boolean } = {}): DataDirHold {
  const now = options.now ?? Date.now;
  const alive = options.isProcessAlive ?? isProcessAlive;
  const given = resolve(dataDir);
  try {
    mkdirSync(given, { recursive: true, mode: DATA_DIR_MODE });
  } catch (cause) {
    throw new FileIoError('create the data directory', given, cause);
  }
  let dir: string;
  try {
    dir = realpathSync(given);
  } catch (cause) {
    throw new FileIoError('resolve the data directory', given, cause);
  }
  if (held.has(dir)) throw new DataDirInUseError(dataDir, `another gateway in this process, pid ${process.pid}`, process.pid, null);
  const lockFile = join(dir, DATA_DIR_LOCK_FILE);
  const content: HoldContent = thisProcessHolder(newLockToken(), 'startedAt', new Date(now()));
  for (let attempt = 0; ; attempt++) {
    if (tryCreate(lockFile, content)) break;
    const observed = observe(lockFile);
    if (observed === null) continue; // released meanwhile
    if (attempt > 0 || !isStale(observed, now(), alive) || !breakStale(lockFile, observed, now())) {
      const holder = observed.content;
      throw new DataDirInUseError(
        dataDir,
        holder === null ? `an unreadable ${lockFile}` : `pid ${holder.pid} on host ${holder.hostname}, started ${holder.startedAt}`,
        holder?.pid ?? null,
        lockFile,
      );
    }
  }
  held.set(dir, content.token);
  let released = false;
  return {
    dir,
    release() {
      if (released) return;
      released = true;
      if (held.get(dir) === content.token) held.delete(dir);
      const text = readOrNull(lockFile);
      // Only our own lock: a lock taken over as stale belongs to its new holder.
      if (text !== null && parseLockHolder(text, 'startedAt')?.token === content.token) unlinkQuietly(lockFile);
    },
  };
}

function tryCreate(lockFile: string, content: HoldContent): boolean {
  const text = JSON.stringify(content) + '\n';
  const claim = `${lockFile}.${content.token}.claim`;
  try {
    writeFileSync(claim, text, { encoding: 'utf8', mode: LOCK_FILE_MODE });
  } catch (cause) {
    unlinkQuietly(claim);
    throw new FileIoError('write a claim file for', lockFile, cause);
  }
  try {
    linkSync(claim, lockFile);
    return true;
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code ?? '';
    if (code === 'EEXIST') return false;
    if (NO_HARD_LINKS.has(code)) return createThenWrite(lockFile, text);
    throw new FileIoError('create the lock file', lockFile, cause);
  } finally {
    unlinkQuietly(claim);
  }
}

function createThenWrite(lockFile: string, text: string): boolean {
  let fd: number;
  try {
    fd = openSync(lockFile, 'wx', LOCK_FILE_MODE);
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new FileIoError('create the lock file', lockFile, cause);
  }
  try {
    writeSync(fd, text);
  } catch (cause) {
    closeSync(fd);
    unlinkQuietly(lockFile);
    throw new FileIoError('write the lock file', lockFile, cause);
  }
  closeSync(fd);
  return true;
}

interface Observed {
  text: string;
  content: HoldContent | null;
  ino: number;
  mtimeMs: number;
}

function observe(lockFile: string): Observed | null {
  try {
    const stats = statSync(lockFile);
    const text = readFileSync(lockFile, 'utf8');
    return { text, content: parseLockHolder(text, 'startedAt'), ino: stats.ino, mtimeMs: stats.mtimeMs };
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new FileIoError('read the lock file', lockFile, cause);
  }
}

function isStale(lock: Observed, now: number, alive: (pid: number) => boolean): boolean {
  const holder = lock.content;
  if (holder === null) return now - lock.mtimeMs > EMPTY_GRACE_MS;
  return holderIsGone(holder, alive);
}

/**
 * Removes a stale lock; true when it is gone. Takers go one at a time through
 * `<lock>.break` and re-check under it that the lock is still the file judged stale,
 * so two starters that both saw it cannot remove the lock the first just took.
 */
function breakStale(lockFile: string, stale: Observed, now: number): boolean {
  const breakFile = `${lockFile}.break`;
  try {
    closeSync(openSync(breakFile, 'wx', LOCK_FILE_MODE));
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code !== 'EEXIST') throw new FileIoError('create', breakFile, cause);
    const breaking = statOrNull(breakFile);
    if (breaking !== null && now - breaking.mtimeMs > BREAK_STALE_MS) unlinkQuietly(breakFile);
    return false;
  }
  try {
    const current = observe(lockFile);
    if (current === null) return true;
    if (current.ino !== stale.ino || current.text !== stale.text) return false;
    try {
      unlinkSync(lockFile);
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code !== 'ENOENT') throw new FileIoError('remove the stale lock file', lockFile, cause);
    }
    return true;
  } finally {
    unlinkQuietly(breakFile);
  }
}

function readOrNull(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

function statOrNull(file: string): { mtimeMs: number } | null {
  try {
    return statSync(file);
  } catch {
    return null;
  }
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Gone already, or not ours to remove.
  }
}
