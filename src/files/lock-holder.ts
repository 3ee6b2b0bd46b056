// Who holds a lock file, as both kinds of lock in the project write it (the per-file
// write locks of ./file-lock.ts and a gateway's hold on its data directory): this
// process's pid, host and a token, plus when it was taken. The token starts with a
// nonce drawn once per process, so a lock carrying our pid can be told apart from one
// left by an earlier process that had the same pid (containers restart pids low).
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/** link() errors that mean the file system has no hard links: a lock falls back to create-then-write. */
export const NO_HARD_LINKS: ReadonlySet<string> = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

export interface LockHolder {
  pid: number;
  hostname: string;
  token: string;
}

let processNonce: string | null = null;
/** Drawn on first use, so importing this module makes no crypto request (a library import starts nothing). */
const nonce = (): string => (processNonce ??= randomBytes(8).toString('hex'));
let tokenCounter = 0;

/** A token no other lock of this or any process has. */
export function newLockToken(): string {
  return `${nonce()}.${tokenCounter++}.${randomBytes(6).toString('hex')}`;
}

/** This process as a lock's holder, taken at `at` under the field name `timeField`. */
export function thisProcessHolder<K extends string>(token: string, timeField: K, at: Date): LockHolder & Record<K, string> {
  return { pid: process.pid, hostname: hostname(), token, [timeField]: at.toISOString() } as LockHolder & Record<K, string>;
}

/** The holder a lock file names, with its time under `timeField`; null when it names none (empty, cut short, not ours in shape). */
export function parseLockHolder<K extends string>(text: string, timeField: K): (LockHolder & Record<K, string>) | null {
  try {
    const value = JSON.parse(text) as Record<string, unknown> | null;
    if (
      value !== null &&
      typeof value === 'object' &&
      Number.isSafeInteger(value['pid']) &&
      typeof value['hostname'] === 'string' &&
      typeof value['token'] === 'string' &&
      typeof value[timeField] === 'string'
    ) {
      return value as LockHolder & Record<K, string>;
    }
  } catch {
    // Empty or cut short: the caller judges it by age.
  }
  return null;
}

/**
 * True when the holder cannot be holding the lock any more: it names this host and a
 * pid that no longer exists, or our pid without this process's nonce. A holder on
 * another host cannot be seen from here (false); a lock of this process is never
 * judged gone, only too old (a lock a sibling just released must not look like debris).
 */
export function holderIsGone(holder: LockHolder, alive: (pid: number) => boolean = isProcessAlive): boolean {
  if (holder.hostname !== hostname()) return false;
  if (holder.pid === process.pid) return !holder.token.startsWith(nonce() + '.');
  return !alive(holder.pid);
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
