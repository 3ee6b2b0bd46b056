// <dataDir>/budgets.json: the in-process limiter's budget counts (format and rules in
// src/limits/budget-journal.ts), so a restart, a crash or a crash loop finds every
// key's day and month where they were.
//
// Writes are grouped: one write at a time; callers that arrive while one runs share
// the next, which takes the counts as they are when it starts. Each write replaces
// the file by rename, so a reader (or a restart after kill -9 at any instant) sees
// the old counts or the new ones, never a torn mix. The rename is not fsynced: that
// would put a disk flush on every budgeted request's path; a process crash loses
// nothing the kernel holds, and a power cut can lose the counts the kernel had not
// written back yet (seconds).
import { readFileSync } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseBudgetJournal, serializeBudgetJournal, type JournalEntry } from '../limits/budget-journal.ts';
import type { BudgetJournal } from '../limits/memory-limiter.ts';

export const BUDGET_FILE = 'budgets.json';

/** Told of each failed write (`first`: the first since the last good one), and of the first good write after failures. */
export interface BudgetFileWatch {
  failed(error: Error, first: boolean): void;
  recovered(): void;
}

/** Reads budgets.json (absent: no counts) and returns the journal that keeps it. Throws BudgetJournalError on a broken file. */
export function openBudgetFile(dataDir: string, watch?: BudgetFileWatch): BudgetJournal & { readonly file: string; writes(): number } {
  const file = path.join(dataDir, BUDGET_FILE);
  let entries: JournalEntry[] = [];
  try {
    entries = parseBudgetJournal(readFileSync(file, 'utf8'), file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }

  let writing: Promise<void> | null = null;
  /** The write after the running one, and the callers waiting for it. */
  let next: { promise: Promise<void>; resolve: (write: Promise<void>) => void; snapshot: () => JournalEntry[] } | null = null;
  let writes = 0;
  let failing = false;

  async function write(snapshot: () => JournalEntry[]): Promise<void> {
    const text = serializeBudgetJournal(snapshot());
    const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(text, 'utf8');
    } finally {
      await handle.close();
    }
    try {
      await rename(temp, file);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw error;
    }
    writes++;
  }

  function start(snapshot: () => JournalEntry[]): Promise<void> {
    const run = write(snapshot);
    writing = run.then(
      () => {
        if (failing) watch?.recovered();
        failing = false;
      },
      (error: unknown) => {
        watch?.failed(error as Error, !failing);
        failing = true;
      },
    );
    void writing.then(() => {
      writing = null;
      const queued = next;
      next = null;
      if (queued !== null) queued.resolve(start(queued.snapshot));
    });
    return run;
  }

  return {
    file,
    entries,
    writes: () => writes,
    save(snapshot) {
      if (writing === null) return start(snapshot);
      // A write is running with older counts: join the one after it.
      if (next === null) {
        let resolve: (write: Promise<void>) => void = () => {};
        const promise = new Promise<void>((r) => (resolve = r));
        next = { promise, resolve, snapshot };
      }
      return next.promise;
    },
  };
}
