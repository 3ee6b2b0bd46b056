// The lock file of a store (src/files/file-lock.ts) in one process: holders,
// waiters, and the stale, dead, empty and garbled locks a waiter breaks or
// waits on. Another process reading the lock while it is taken is in
// file-lock.system.test.ts.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { FileLockTimeoutError } from '../../src/files/errors.ts';
import { withFileLock } from '../../src/files/file-lock.ts';
import { freshPath, tempDir } from '../support/temp-dir.ts';
import { pidOfNoProcess } from './lock-holders.ts';

const root = tempDir('lock');
function freshLockPath(): string {
  return `${freshPath(root, 'keys.json')}.lock`;
}

const FAST = { staleMs: 30_000, timeoutMs: 2_000 };
/** For a lock the waiter must not get: it gives up soon. */
const SHORT_WAIT = { staleMs: 30_000, timeoutMs: 150 };
/**
 * For a lock the waiter must take over without waiting for it to go stale:
 * bounded far below staleMs, and far above what the file operations take on
 * a loaded machine (the lock counts them as waiting too).
 */
const TAKEN = { staleMs: 30_000, timeoutMs: 5_000 };

function writeLock(lockPath: string, content: object | string, ageMs = 0): void {
  writeFileSync(lockPath, typeof content === 'string' ? content : JSON.stringify(content));
  if (ageMs > 0) {
    const then = new Date(Date.now() - ageMs);
    utimesSync(lockPath, then, then);
  }
}

test('the lock file exists with our pid while the work runs, mode 0600, and is removed after', async () => {
  const lockPath = freshLockPath();
  const result = await withFileLock(lockPath, FAST, async () => {
    const content = JSON.parse(readFileSync(lockPath, 'utf8')) as Record<string, unknown>;
    assert.equal(content['pid'], process.pid);
    assert.equal(content['hostname'], os.hostname());
    assert.match(String(content['token']), /^[0-9a-f]{16}\.\d+\.[0-9a-f]{12}$/);
    assert.equal(statSync(lockPath).mode & 0o777, 0o600);
    return 'done';
  });
  assert.equal(result, 'done');
  assert.equal(existsSync(lockPath), false);
});

test('the lock is released when the work throws', async () => {
  const lockPath = freshLockPath();
  await assert.rejects(
    withFileLock(lockPath, FAST, async () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.equal(existsSync(lockPath), false);
});

test('concurrent holders never overlap', async () => {
  const lockPath = freshLockPath();
  let inside = 0;
  let maxInside = 0;
  const order: number[] = [];
  await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      withFileLock(lockPath, FAST, async () => {
        inside++;
        maxInside = Math.max(maxInside, inside);
        await sleep(2);
        order.push(i);
        inside--;
      }),
    ),
  );
  assert.equal(maxInside, 1);
  assert.deepEqual([...order].sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.equal(existsSync(lockPath), false);
});

test('a live holder makes the waiter time out with a message naming the lock and holder', async () => {
  const lockPath = freshLockPath();
  writeLock(lockPath, { pid: process.ppid, hostname: os.hostname(), token: 'x', acquiredAt: '2025-01-31T12:00:00.000Z' });
  let ran = false;
  await assert.rejects(
    withFileLock(lockPath, SHORT_WAIT, async () => {
      ran = true;
    }),
    (err: unknown) =>
      err instanceof FileLockTimeoutError &&
      err.code === 'file_lock_timeout' &&
      err.lockPath === lockPath &&
      new RegExp(
        `^Timed out after \\d+ ms waiting for the lock file ${lockPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} ` +
          `\\(held by pid ${process.ppid} on host ${os.hostname()} since 2025-01-31T12:00:00.000Z\\)\\. ` +
          'If no other portcullis process is writing the file it guards, delete the lock file and retry\\.$',
      ).test(err.message),
  );
  assert.equal(ran, false);
  assert.equal(existsSync(lockPath), true, 'a live lock is never removed by a waiter');
});

test('a lock whose pid is gone is broken at once', async () => {
  const lockPath = freshLockPath();
  writeLock(lockPath, { pid: pidOfNoProcess(), hostname: os.hostname(), token: 'dead', acquiredAt: '2025-01-31T12:00:00.000Z' });
  assert.equal(await withFileLock(lockPath, TAKEN, async () => 'got it'), 'got it');
  assert.equal(existsSync(lockPath), false);
  assert.deepEqual(readdirSync(root).filter((n) => n.endsWith('.break')), []);
});

test('a lock with our own pid but a token we do not hold (a previous process with our pid) is broken', async () => {
  const lockPath = freshLockPath();
  writeLock(lockPath, { pid: process.pid, hostname: os.hostname(), token: 'previous-life', acquiredAt: '2025-01-31T12:00:00.000Z' });
  assert.equal(await withFileLock(lockPath, TAKEN, async () => 1), 1);
});

test('a lock older than staleMs is broken even if its holder looks alive', async () => {
  const lockPath = freshLockPath();
  writeLock(lockPath, { pid: process.ppid, hostname: 'another-host', token: 'x', acquiredAt: '2025-01-31T12:00:00.000Z' }, 60_000);
  assert.equal(await withFileLock(lockPath, TAKEN, async () => 2), 2);
});

test('a lock from another host is not judged by pid: it waits until stale', async () => {
  const lockPath = freshLockPath();
  writeLock(lockPath, { pid: pidOfNoProcess(), hostname: 'another-host', token: 'x', acquiredAt: '2025-01-31T12:00:00.000Z' });
  await assert.rejects(withFileLock(lockPath, SHORT_WAIT, async () => 3), FileLockTimeoutError);
  assert.equal(existsSync(lockPath), true);
});

test('an empty or garbled lock file is waited on while fresh and broken once stale', async () => {
  const fresh = freshLockPath();
  writeLock(fresh, '');
  await assert.rejects(
    withFileLock(fresh, SHORT_WAIT, async () => 4),
    (err: unknown) => err instanceof FileLockTimeoutError && err.message.includes('(held by an unknown process)'),
  );
  const old = freshLockPath();
  writeLock(old, '{"pid":', 60_000);
  assert.equal(await withFileLock(old, TAKEN, async () => 5), 5);
});

test('a stale lock is taken over by exactly one of several waiters at a time', async () => {
  const lockPath = freshLockPath();
  writeLock(lockPath, { pid: pidOfNoProcess(), hostname: os.hostname(), token: 'dead', acquiredAt: '2025-01-31T12:00:00.000Z' });
  let inside = 0;
  let maxInside = 0;
  await Promise.all(
    Array.from({ length: 6 }, () =>
      withFileLock(lockPath, FAST, async () => {
        inside++;
        maxInside = Math.max(maxInside, inside);
        await sleep(2);
        inside--;
      }),
    ),
  );
  assert.equal(maxInside, 1);
  assert.equal(existsSync(lockPath), false);
});

test('a break file left by a crash mid-break is removed once old, then the dead lock is broken', async () => {
  const lockPath = freshLockPath();
  writeLock(lockPath, { pid: pidOfNoProcess(), hostname: os.hostname(), token: 'dead', acquiredAt: '2025-01-31T12:00:00.000Z' });
  writeLock(`${lockPath}.break`, '', 60_000);
  assert.equal(await withFileLock(lockPath, TAKEN, async () => 6), 6);
  assert.equal(existsSync(`${lockPath}.break`), false);
});

test('while another waiter holds a fresh break file, a dead lock is left to it', async () => {
  const lockPath = freshLockPath();
  writeLock(lockPath, { pid: pidOfNoProcess(), hostname: os.hostname(), token: 'dead', acquiredAt: '2025-01-31T12:00:00.000Z' });
  writeLock(`${lockPath}.break`, '');
  await assert.rejects(withFileLock(lockPath, SHORT_WAIT, async () => 7), FileLockTimeoutError);
  assert.equal(existsSync(lockPath), true);
});

// A lock file left empty by a CLI killed between creating and writing it
// blocked every key change for staleMs (30 s). Now an empty lock is debris
// after a short grace.

test('an empty lock file older than the grace (2 s) is taken over at once', async () => {
  const lockPath = freshLockPath();
  writeLock(lockPath, '', 2_500);
  assert.equal(await withFileLock(lockPath, TAKEN, async () => 'taken'), 'taken');
  assert.equal(existsSync(lockPath), false);
});

test('an empty lock file made just now is taken over once the grace has passed, not after staleMs', async () => {
  const lockPath = freshLockPath();
  writeLock(lockPath, '');
  const started = Date.now();
  assert.equal(await withFileLock(lockPath, { staleMs: 30_000, timeoutMs: 10_000 }, async () => 'taken'), 'taken');
  const waited = Date.now() - started;
  assert.ok(waited >= 1_500 && waited < 6_000, `waited ${waited} ms`);
});

test('an empty lock file younger than the grace is waited for, and left in place', async () => {
  const lockPath = freshLockPath();
  writeLock(lockPath, '', 1_000);
  await assert.rejects(withFileLock(lockPath, { staleMs: 30_000, timeoutMs: 300 }, async () => 'no'), FileLockTimeoutError);
  assert.equal(readFileSync(lockPath, 'utf8'), '');
  // The grace is a setting of the lock: 1 s old, taken with a grace of 0.5 s
  // within a wait (0.6 s) too short for the default grace (2 s) to let it.
  writeLock(lockPath, '', 1_000);
  assert.equal(await withFileLock(lockPath, { staleMs: 30_000, timeoutMs: 600, emptyGraceMs: 500 }, async () => 'yes'), 'yes');
});

test('a lock naming a live pid is never taken over before staleMs, however long past the grace', async () => {
  const lockPath = freshLockPath();
  const content = JSON.stringify({ pid: process.ppid, hostname: os.hostname(), token: 'live', acquiredAt: '2025-01-31T12:00:00.000Z' });
  writeLock(lockPath, content, 20_000);
  await assert.rejects(withFileLock(lockPath, { staleMs: 30_000, timeoutMs: 300, emptyGraceMs: 100 }, async () => 'no'), FileLockTimeoutError);
  assert.equal(readFileSync(lockPath, 'utf8'), content);
});

test('a claim file left by a process killed before its link is removed by the next holder once older than staleMs', async () => {
  const lockPath = freshLockPath();
  const dead = `${lockPath}.0123456789abcdef.0.000000000000.claim`;
  const fresh = `${lockPath}.fedcba9876543210.0.000000000000.claim`;
  writeLock(dead, '{}', 60_000);
  writeLock(fresh, '{}');
  await withFileLock(lockPath, FAST, async () => undefined);
  assert.equal(existsSync(dead), false);
  assert.equal(existsSync(fresh), true, 'a young claim may be a live waiter\'s');
  rmSync(fresh);
});
