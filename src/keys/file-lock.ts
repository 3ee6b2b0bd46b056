// A lock file that serialises writers of one store file across processes
// (two CLI invocations, a CLI and a server) and across store instances in one process.
//
// Taking the lock is an exclusive create (`open(path, 'wx')`, O_CREAT|O_EXCL), atomic
// on local file systems. The file holds {pid, hostname, token, acquiredAt} so a waiter
// can tell a live holder from debris. A lock is stale, and gets broken, when:
// - it names this host and a pid that no longer exists;
// - it names this process but a token this process does not hold (a crashed process
//   had the same pid, which happens in containers where pids restart low);
// - it is older than `staleMs` (30 s by default; a holder only keeps it for one
//   read-modify-write of a small file, milliseconds), which also covers other hosts
//   and pids reused by unrelated processes;
// - it is unreadable or empty and older than `staleMs` (a holder died between the
//   exclusive create and writing its content).
// Breaking renames the lock aside and checks it is the same file judged stale; if a
// fresh lock was moved by mistake it is linked back.

import { randomBytes } from 'node:crypto';
import { link, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { KeyStoreIoError, KeyStoreLockTimeoutError } from './errors.ts';
import { PRIVATE_FILE_MODE } from './atomic-file.ts';

export interface FileLockOptions {
  /** Age after which a lock is broken whoever holds it. */
  staleMs: number;
  /** How long to wait for a live holder before KeyStoreLockTimeoutError. */
  timeoutMs: number;
}

export const DEFAULT_LOCK_OPTIONS: FileLockOptions = { staleMs: 30_000, timeoutMs: 10_000 };

interface LockContent {
  pid: number;
  hostname: string;
  token: string;
  acquiredAt: string;
}

interface ObservedLock {
  text: string;
  content: LockContent | null;
  ino: number;
  mtimeMs: number;
}

const FIRST_RETRY_MS = 5;
const MAX_RETRY_MS = 100;

/** Tokens of the locks this process holds or is taking right now. */
const heldTokens = new Set<string>();

/** Run `work` while holding the lock file `lockPath`; the lock is released however `work` ends. */
export async function withFileLock<T>(lockPath: string, options: FileLockOptions, work: () => Promise<T>): Promise<T> {
  const token = await acquire(lockPath, options);
  try {
    return await work();
  } finally {
    await release(lockPath, token);
  }
}

async function acquire(lockPath: string, options: FileLockOptions): Promise<string> {
  const token = randomBytes(12).toString('hex');
  const content: LockContent = { pid: process.pid, hostname: hostname(), token, acquiredAt: new Date().toISOString() };
  const started = Date.now();
  let retryMs = FIRST_RETRY_MS;
  let lastSeen: ObservedLock | null = null;
  // Registered before the create so a waiter in this process never mistakes our
  // half-written lock for debris of a dead process with our pid.
  heldTokens.add(token);
  try {
    for (;;) {
      if (await tryCreate(lockPath, content)) return token;
      const observed = await observe(lockPath);
      const broken = observed !== null && isStale(observed, options.staleMs) && (await breakStaleLock(lockPath, observed));
      if (observed !== null) lastSeen = observed;
      const waited = Date.now() - started;
      if (waited >= options.timeoutMs) {
        throw new KeyStoreLockTimeoutError(lockPath, waited, describeHolder(lastSeen));
      }
      // Retry at once when the lock just vanished or was broken; otherwise back off
      // with jitter so waiters do not retry in lockstep.
      if (observed !== null && !broken) {
        await sleep(Math.min(retryMs, options.timeoutMs - waited) * (0.5 + Math.random() / 2));
        retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
      }
    }
  } catch (error) {
    heldTokens.delete(token);
    throw error;
  }
}

async function tryCreate(lockPath: string, content: LockContent): Promise<boolean> {
  let handle;
  try {
    handle = await open(lockPath, 'wx', PRIVATE_FILE_MODE);
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new KeyStoreIoError('create the lock file', lockPath, cause);
  }
  try {
    await handle.writeFile(JSON.stringify(content) + '\n', 'utf8');
  } catch (cause) {
    await handle.close().catch(() => undefined);
    await unlink(lockPath).catch(() => undefined);
    throw new KeyStoreIoError('write the lock file', lockPath, cause);
  }
  await handle.close();
  return true;
}

async function observe(lockPath: string): Promise<ObservedLock | null> {
  try {
    const stats = await stat(lockPath);
    const text = await readFile(lockPath, 'utf8');
    return { text, content: parseLockContent(text), ino: stats.ino, mtimeMs: stats.mtimeMs };
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new KeyStoreIoError('read the lock file', lockPath, cause);
  }
}

function parseLockContent(text: string): LockContent | null {
  try {
    const value = JSON.parse(text) as Partial<LockContent> | null;
    if (
      value !== null &&
      typeof value === 'object' &&
      Number.isSafeInteger(value.pid) &&
      typeof value.hostname === 'string' &&
      typeof value.token === 'string' &&
      typeof value.acquiredAt === 'string'
    ) {
      return value as LockContent;
    }
  } catch {
    // Empty or half-written: judged by age alone.
  }
  return null;
}

function isStale(lock: ObservedLock, staleMs: number): boolean {
  if (Date.now() - lock.mtimeMs > staleMs) return true;
  const holder = lock.content;
  if (holder === null || holder.hostname !== hostname()) return false;
  if (holder.pid === process.pid) return !heldTokens.has(holder.token);
  return !isProcessAlive(holder.pid);
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Remove the stale lock; true when the lock file is gone (by us or someone else). */
async function breakStaleLock(lockPath: string, stale: ObservedLock): Promise<boolean> {
  const aside = `${lockPath}.${process.pid}.${randomBytes(6).toString('hex')}.stale`;
  try {
    await rename(lockPath, aside);
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return true; // someone else broke it
    throw new KeyStoreIoError('break the stale lock file', lockPath, cause);
  }
  const moved = await observe(aside);
  if (moved !== null && (moved.ino !== stale.ino || moved.text !== stale.text)) {
    // Between our look and the rename, the stale lock was broken and a live process
    // took the lock: give it back. If yet another process took it meanwhile, link()
    // fails with EEXIST and that process keeps it.
    await link(aside, lockPath).catch(() => undefined);
    await unlink(aside).catch(() => undefined);
    return false;
  }
  await unlink(aside).catch(() => undefined);
  return true;
}

async function release(lockPath: string, token: string): Promise<void> {
  heldTokens.delete(token);
  let text: string;
  try {
    text = await readFile(lockPath, 'utf8');
  } catch {
    return; // already gone: broken as stale by a waiter
  }
  // Only remove our own lock: if ours was broken as stale, the file now belongs to someone else.
  if (parseLockContent(text)?.token === token) await unlink(lockPath).catch(() => undefined);
}

function describeHolder(lock: ObservedLock | null): string {
  const holder = lock?.content;
  if (holder === null || holder === undefined) return 'an unknown process';
  return `pid ${holder.pid} on host ${holder.hostname} since ${holder.acquiredAt}`;
}
