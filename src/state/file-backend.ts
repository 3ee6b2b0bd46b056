// The single-instance backend: keys and usage in files under the data
// directory (several processes on one directory add up through file locks),
// limits in this process's memory, budget counts also in budgets.json so they
// outlive a restart (budget-file.ts; one gateway per data directory, held by
// data-dir-hold.ts).
//
// Its user-visible name stays "memory" (config `"state": {"backend": "memory"}`, the
// startup banner's `state: memory`, the `listening` log line): only the code is
// named for what it keeps in files.
import { access, constants } from 'node:fs/promises';
import { join } from 'node:path';
import { openLocalResponseStore } from './local-response-store.ts';
import { openKeyStore, type FileKeyStore, type KeyStoreOptions } from './file-key-store.ts';
import { createMemoryLimiter } from '../limits/memory-limiter.ts';
import { createFileUsageStore } from './file-usage-store.ts';
import { openBudgetFile } from './budget-file.ts';
import { openFileAdminTokenStore } from './file-admin-token-store.ts';
import { BackendHealth, type StateBackend } from './state-backend.ts';
import { StateUnavailableError } from './errors.ts';
import type { Logger } from '../log/logger.ts';
import type { Limiter } from '../limits/limiter.ts';
import { createFileAuditLog, type FileAuditLogOptions } from '../audit/file-audit-log.ts';

export interface FileBackend extends StateBackend {
  readonly kind: 'memory';
  readonly keys: FileKeyStore;
}

/** Opens the key store synchronously, so a broken keys.json stops startup. */
export function openFileBackend(
  dataDir: string,
  keyOptions: KeyStoreOptions = {},
  auditOptions: Omit<FileAuditLogOptions, 'dataDir'> = {},
  budgetOptions: { logger?: Logger; countJournalWriteFailure?: () => void } = {},
): FileBackend {
  const keys = openKeyStore(dataDir, keyOptions);
  const limiter = openFileLimiter(dataDir, budgetOptions);
  return {
    kind: 'memory',
    keys,
    usage: createFileUsageStore(dataDir),
    limiter,
    tokens: openFileAdminTokenStore(dataDir),
    audit: createFileAuditLog({ ...auditOptions, dataDir }),
    openResponseStore: (limits, scheduler, onProblem) => openLocalResponseStore({ dir: join(dataDir, 'responses'), limits, scheduler, onProblem }),
    health: () => BackendHealth.Ok,
    checkWritable: () => checkDataDirWritable(dataDir),
    async close() {
      await limiter.close();
      await keys.close();
    },
  };
}

/** The in-process limiter, its budget counts kept in <dataDir>/budgets.json. */
export function openFileLimiter(dataDir: string, budgetOptions: { logger?: Logger; countJournalWriteFailure?: () => void } = {}): Limiter {
  const { logger, countJournalWriteFailure } = budgetOptions;
  const journal = openBudgetFile(dataDir, {
    // One line when writes start failing and one when they work again: a full disk fails every write.
    failed(error, first) {
      countJournalWriteFailure?.();
      if (first) logger?.error('budgets.json cannot be written; requests of keys with a budget are refused (503) until it can', { file: journal.file, error: error.message });
    },
    recovered() {
      logger?.info('budgets.json is written again; keys with a budget are admitted', { file: journal.file });
    },
  });
  return createMemoryLimiter({
    journal,
    // The failure is reported above; a settlement's correction stays counted in memory.
    onJournalError: () => {},
    journalUnavailable: (error) => new StateUnavailableError('admit', error),
  });
}

/** For /readyz: can this process write the data directory? Never throws. */
export async function checkDataDirWritable(dataDir: string): Promise<{ ok: true } | { ok: false; problem: string }> {
  try {
    await access(dataDir, constants.W_OK);
    return { ok: true };
  } catch (err) {
    return { ok: false, problem: `data directory ${dataDir} is not writable (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
}
