// A lock file that serialises writers of one store file across processes
// (two CLI invocations, a CLI and a server) and across store instances in one process.
//
// The file holds {pid, hostname, token, acquiredAt} so a waiter can tell a live holder
// from debris. Taking the lock puts that content in place whole: it is written to a
// claim file beside the lock (`<lock>.<token>.claim`), which is then hard-linked to
// the lock's name. link() fails with EEXIST when the name exists, atomically, like an
// exclusive create (O_CREAT|O_EXCL), so a lock file is never seen empty or half
// written while its holder lives. (Where the file system has no hard links, the lock
// is an exclusive create followed by the write, and that short window exists.)
//
// A lock is stale, and gets broken, when:
// - it names this host and a pid that no longer exists;
// - it names this host and our pid but not this process's nonce (a crashed process
//   had the same pid, which happens in containers where pids restart low);
// - it is older than `staleMs` (30 s by default; a holder only keeps it for one
//   read-modify-write of a small file, milliseconds), which also covers other hosts
//   and pids reused by unrelated processes;
// - it names no holder (empty, cut short, not ours in shape) and is older than
//   `emptyGraceMs` (2 s by default): debris of a process killed between creating and
//   writing it (a portcullis before the claim files, or the fallback above), or of a
//   power cut before its content reached the disk. The grace only has to cover that
//   create-then-write window, microseconds, where it exists at all.
// Breaking is itself serialised (see breakStaleLock). One race remains, accepted: a
// holder alive but past `staleMs` may release at the instant its lock is broken.

import { link, open, readdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FileIoError, FileLockTimeoutError } from './errors.ts';
import { PRIVATE_FILE_MODE } from './atomic-file.ts';
import { holderIsGone, newLockToken, NO_HARD_LINKS, parseLockHolder, thisProcessHolder, type LockHolder } from './lock-holder.ts';

export interface FileLockOptions {
  /** Age after which a lock is broken whoever holds it. */
  staleMs: number;
  /** How long to wait for a live holder before FileLockTimeoutError. */
  timeoutMs: number;
  /** Age after which a lock file that names no holder (empty, cut short) is broken; default 2 s. */
  emptyGraceMs?: number;
}

export const DEFAULT_LOCK_OPTIONS: FileLockOptions = { staleMs: 30_000, timeoutMs: 10_000, emptyGraceMs: 2_000 };
const DEFAULT_EMPTY_GRACE_MS = 2_000;
const CLAIM_SUFFIX = '.claim';
type LockContent = LockHolder & { acquiredAt: string };

interface ObservedLock {
  text: string;
  content: LockContent | null;
  ino: number;
  mtimeMs: number;
}

const FIRST_RETRY_MS = 5;
const MAX_RETRY_MS = 100;


/** Run `work` while holding the lock file `lockPath`; the lock is released however `work` ends. */
export async function withFileLock<T>(lockPath: string, options: FileLockOptions, work: () => Promise<T>): Promise<T> {
  const token = await acquire(lockPath, options);
  try {
    await removeDeadClaims(lockPath, options.staleMs);
    return await work();
  } finally {
    await release(lockPath, token);
  }
}

async function acquire(lockPath: string, options: FileLockOptions): Promise<string> {
  const token = newLockToken();
  const content: LockContent = thisProcessHolder(token, 'acquiredAt', new Date());
  const started = Date.now();
  let retryMs = FIRST_RETRY_MS;
  let lastSeen: ObservedLock | null = null;
  for (;;) {
    if (await tryCreate(lockPath, content)) return token;
    const observed = await observe(lockPath);
    const broken =
      observed !== null && isStale(observed, options.staleMs, options.emptyGraceMs ?? DEFAULT_EMPTY_GRACE_MS) && (await breakStaleLock(lockPath, observed, options.staleMs));
    if (observed !== null) lastSeen = observed;
    const waited = Date.now() - started;
    if (waited >= options.timeoutMs) {
      throw new FileLockTimeoutError(lockPath, waited, describeHolder(lastSeen));
    }
    // Retry at once when the lock just vanished or was broken; otherwise back off
    // with jitter so waiters do not retry in lockstep.
    if (observed !== null && !broken) {
      await sleep(Math.min(retryMs, options.timeoutMs - waited) * (0.5 + Math.random() / 2));
      retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
    }
  }
}

/** Takes the lock with `content` in it, whole; false when someone else holds it. */
async function tryCreate(lockPath: string, content: LockContent): Promise<boolean> {
  // The token makes the name this attempt's own.
  const claimPath = `${lockPath}.${content.token}${CLAIM_SUFFIX}`;
  try {
    await writeFile(claimPath, JSON.stringify(content) + '\n', { encoding: 'utf8', mode: PRIVATE_FILE_MODE });
  } catch (cause) {
    await unlink(claimPath).catch(() => undefined);
    throw new FileIoError('write a claim file for', lockPath, cause);
  }
  try {
    await link(claimPath, lockPath);
    return true;
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code ?? '';
    if (code === 'EEXIST') return false;
    // Our claim was removed as debris while this process stood still for staleMs: try again.
    if (code === 'ENOENT') return false;
    if (NO_HARD_LINKS.has(code)) return createThenWrite(lockPath, content);
    throw new FileIoError('create the lock file', lockPath, cause);
  } finally {
    await unlink(claimPath).catch(() => undefined);
  }
}

/** The lock without hard links: exclusive create, then the content; false when it exists. */
async function createThenWrite(lockPath: string, content: LockContent): Promise<boolean> {
  let handle;
  try {
    handle = await open(lockPath, 'wx', PRIVATE_FILE_MODE);
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new FileIoError('create the lock file', lockPath, cause);
  }
  try {
    await handle.writeFile(JSON.stringify(content) + '\n', 'utf8');
  } catch (cause) {
    await handle.close().catch(() => undefined);
    await unlink(lockPath).catch(() => undefined);
    throw new FileIoError('write the lock file', lockPath, cause);
  }
  await handle.close();
  return true;
}

/**
 * Claim files live from a write to a link, microseconds: one older than `staleMs` was
 * left by a process killed in between. Removed by the lock's holder, so they never pile up.
 */
async function removeDeadClaims(lockPath: string, staleMs: number): Promise<void> {
  const dir = dirname(lockPath);
  const prefix = `${basename(lockPath)}.`;
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith(CLAIM_SUFFIX)) continue;
    const claim = join(dir, name);
    const stats = await stat(claim).catch(() => null);
    if (stats !== null && Date.now() - stats.mtimeMs > staleMs) await unlink(claim).catch(() => undefined);
  }
}

async function observe(lockPath: string): Promise<ObservedLock | null> {
  try {
    const stats = await stat(lockPath);
    const text = await readFile(lockPath, 'utf8');
    return { text, content: parseLockHolder(text, 'acquiredAt'), ino: stats.ino, mtimeMs: stats.mtimeMs };
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new FileIoError('read the lock file', lockPath, cause);
  }
}

function isStale(lock: ObservedLock, staleMs: number, emptyGraceMs: number): boolean {
  const age = Date.now() - lock.mtimeMs;
  if (age > staleMs) return true;
  const holder = lock.content;
  if (holder === null) return age > emptyGraceMs;
  return holderIsGone(holder);
}

/**
 * Remove a lock judged stale; true when the lock file is gone.
 * Breakers take turns through a second exclusive file, `<lock>.break`, and re-check
 * under it that the lock is still the very file judged stale (same inode and bytes).
 * Without that, two waiters that both saw the dead lock could each remove one file:
 * the dead lock, then the fresh lock the first of them had just taken.
 */
async function breakStaleLock(lockPath: string, stale: ObservedLock, staleMs: number): Promise<boolean> {
  const breakPath = `${lockPath}.break`;
  try {
    const handle = await open(breakPath, 'wx', PRIVATE_FILE_MODE);
    await handle.close();
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code !== 'EEXIST') throw new FileIoError('create', breakPath, cause);
    // Another waiter is breaking it. A break file only lives for a stat and an unlink,
    // so an old one is debris of a crash in between.
    const breaking = await stat(breakPath).catch(() => null);
    if (breaking !== null && Date.now() - breaking.mtimeMs > staleMs) await unlink(breakPath).catch(() => undefined);
    return false;
  }
  try {
    const current = await observe(lockPath);
    if (current === null) return true;
    if (current.ino !== stale.ino || current.text !== stale.text) return false; // replaced meanwhile: judge again
    await unlink(lockPath).catch((cause: unknown) => {
      if ((cause as NodeJS.ErrnoException).code !== 'ENOENT') throw new FileIoError('break the stale lock file', lockPath, cause);
    });
    return true;
  } finally {
    await unlink(breakPath).catch(() => undefined);
  }
}

async function release(lockPath: string, token: string): Promise<void> {
  const text = await readFile(lockPath, 'utf8').catch(() => null);
  // Only remove our own lock: if ours was broken as stale, the file now belongs to someone else.
  if (text !== null && parseLockHolder(text, 'acquiredAt')?.token === token) await unlink(lockPath).catch(() => undefined);
}

function describeHolder(lock: ObservedLock | null): string {
  const holder = lock?.content;
  if (holder === null || holder === undefined) return 'an unknown process';
  return `pid ${holder.pid} on host ${holder.hostname} since ${holder.acquiredAt}`;
}
