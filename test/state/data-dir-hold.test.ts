// One gateway per data directory: the in-process registry by real path and the
// lock file across processes (src/state/data-dir-hold.ts).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { DATA_DIR_LOCK_FILE, DataDirInUseError, holdDataDir } from '../../src/state/data-dir-hold.ts';
import { freshDir, freshPath, memoryTempDir } from '../support/temp-dir.ts';

const root = memoryTempDir('data-dir-hold');

/** A pid no process has here (the real check, process.kill(pid, 0), is run by data-dir-hold.system.test.ts). */
const DEAD_PID = 999_999_999;
const alive = (pid: number): boolean => pid !== DEAD_PID;

function lockOf(dir: string): { pid: number; hostname: string; token: string; startedAt: string } {
  return JSON.parse(readFileSync(path.join(dir, DATA_DIR_LOCK_FILE), 'utf8')) as { pid: number; hostname: string; token: string; startedAt: string };
}

function refusal(run: () => unknown): DataDirInUseError {
  try {
    run();
  } catch (err) {
    assert.ok(err instanceof DataDirInUseError, String(err));
    return err;
  }
  assert.fail('the data directory was taken twice');
}

describe('holdDataDir', () => {
  test('makes the directory and writes this process as the holder; release removes the lock and leaves nothing else', () => {
    const dir = freshPath(root);
    const hold = holdDataDir(dir, { now: () => Date.parse('2026-01-02T03:04:05.000Z') });
    const lock = lockOf(dir);
    assert.deepEqual({ pid: lock.pid, hostname: lock.hostname, startedAt: lock.startedAt }, { pid: process.pid, hostname: hostname(), startedAt: '2026-01-02T03:04:05.000Z' });
    assert.deepEqual(readdirSync(dir), [DATA_DIR_LOCK_FILE]);
    hold.release();
    assert.deepEqual(readdirSync(dir), []);
    hold.release();
  });

  test('a second hold in this process is refused, also through another path to the same directory; after release it is taken', () => {
    const dir = freshDir(root);
    const link = `${dir}-link`;
    symlinkSync(dir, link);
    const first = holdDataDir(dir, { isProcessAlive: alive });
    const err = refusal(() => holdDataDir(link));
    assert.equal(err.message, `dataDir ${link} is in use by another gateway (another gateway in this process, pid ${process.pid}); one gateway keeps its budget counts per data directory, so a second would lose spending. Give this gateway another dataDir, or use the Redis state backend ("state": {"backend": "redis"}) for several instances (docs/scaling.md).`);
    assert.deepEqual([err.code, err.dataDir, err.holderPid], ['data_dir_in_use', link, process.pid]);
    first.release();
    const second = holdDataDir(link);
    assert.equal(lockOf(dir).pid, process.pid);
    second.release();
  });

  test('a lock of a live process on this host is refused, naming its pid, its start and the lock file; the lock is left alone', () => {
    const dir = freshDir(root);
    const text = JSON.stringify({ pid: process.ppid, hostname: hostname(), token: 'other.0.x', startedAt: '2026-01-01T00:00:00.000Z' });
    writeFileSync(path.join(dir, DATA_DIR_LOCK_FILE), text);
    const err = refusal(() => holdDataDir(dir, { isProcessAlive: alive }));
    const lockFile = path.join(dir, DATA_DIR_LOCK_FILE);
    assert.equal(
      err.message,
      `dataDir ${dir} is in use by another gateway (pid ${process.ppid} on host ${hostname()}, started 2026-01-01T00:00:00.000Z); one gateway keeps its budget counts per data directory, so a second would lose spending. ` +
        `Give this gateway another dataDir, or use the Redis state backend ("state": {"backend": "redis"}) for several instances (docs/scaling.md). If that process is not a portcullis gateway, stop this one, delete ${lockFile} and start again.`,
    );
    assert.equal(err.holderPid, process.ppid);
    assert.equal(readFileSync(lockFile, 'utf8'), text);
  });

  test('a lock of another host is refused: its process cannot be seen from here', () => {
    const dir = freshDir(root);
    writeFileSync(path.join(dir, DATA_DIR_LOCK_FILE), JSON.stringify({ pid: DEAD_PID, hostname: `not-${hostname()}`, token: 't', startedAt: '2026-01-01T00:00:00.000Z' }));
    assert.match(refusal(() => holdDataDir(dir, { isProcessAlive: alive })).message, /on host not-/);
  });

  test('a lock of a dead pid is taken over', () => {
    const dir = freshDir(root);
    writeFileSync(path.join(dir, DATA_DIR_LOCK_FILE), JSON.stringify({ pid: DEAD_PID, hostname: hostname(), token: 'dead.0.x', startedAt: '2026-01-01T00:00:00.000Z' }));
    const hold = holdDataDir(dir, { isProcessAlive: alive });
    assert.equal(lockOf(dir).pid, process.pid);
    assert.deepEqual(readdirSync(dir), [DATA_DIR_LOCK_FILE]);
    hold.release();
    assert.equal(existsSync(path.join(dir, DATA_DIR_LOCK_FILE)), false);
  });

  test("a lock with this process's pid but not its token (an earlier process with the same pid) is taken over", () => {
    const dir = freshDir(root);
    writeFileSync(path.join(dir, DATA_DIR_LOCK_FILE), JSON.stringify({ pid: process.pid, hostname: hostname(), token: 'earlier.0.x', startedAt: '2026-01-01T00:00:00.000Z' }));
    holdDataDir(dir, { isProcessAlive: alive }).release();
  });

  test('a lock that names no holder is refused while young and taken over when older than 5 s', () => {
    const dir = freshDir(root);
    const lockFile = path.join(dir, DATA_DIR_LOCK_FILE);
    writeFileSync(lockFile, '{"pid":');
    const written = Math.floor(Date.now() / 1000) * 1000;
    utimesSync(lockFile, written / 1000, written / 1000);
    const err = refusal(() => holdDataDir(dir, { now: () => written + 5_000 }));
    assert.equal(err.holderPid, null);
    assert.match(err.message, new RegExp(`\\(an unreadable ${lockFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)`));
    holdDataDir(dir, { now: () => written + 5_001 }).release();
  });

  test('release leaves a lock that is no longer ours (taken over meanwhile)', () => {
    const dir = freshDir(root);
    const hold = holdDataDir(dir, { isProcessAlive: alive });
    const other = JSON.stringify({ pid: process.ppid, hostname: hostname(), token: 'other.0.x', startedAt: '2026-01-01T00:00:00.000Z' });
    writeFileSync(path.join(dir, DATA_DIR_LOCK_FILE), other);
    hold.release();
    assert.equal(readFileSync(path.join(dir, DATA_DIR_LOCK_FILE), 'utf8'), other);
  });
});
