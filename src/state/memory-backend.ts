// The single-instance backend: keys and usage in files under the data
// directory (several processes on one directory add up through file locks),
// limits and budgets in this process's memory.
import { access, constants } from 'node:fs/promises';
import { openKeyStore, type FileKeyStore, type KeyStoreOptions } from '../keys/file-key-store.ts';
import { createMemoryLimiter } from '../limits/memory-limiter.ts';
import { flushPendingUsage, readUsageFile } from '../usage/usage-file.ts';
import { seriesOf } from '../usage/usage-series.ts';
import { BackendHealth, type StateBackend, type UsageStore } from './state-backend.ts';

export interface MemoryBackend extends StateBackend {
  readonly kind: 'memory';
  readonly keys: FileKeyStore;
}

export function createFileUsageStore(dataDir: string): UsageStore {
  return {
    add: (pending, nowMs) => flushPendingUsage(dataDir, pending, nowMs),
    async series(keyId, granularity, nowMs) {
      return seriesOf((await readUsageFile(dataDir)).get(keyId), granularity, nowMs);
    },
    async totals() {
      const all = await readUsageFile(dataDir);
      return new Map([...all].map(([id, s]) => [id, s.totals]));
    },
  };
}

/** Opens the key store synchronously, so a broken keys.json stops startup. */
export function openMemoryBackend(dataDir: string, keyOptions: KeyStoreOptions = {}): MemoryBackend {
  const keys = openKeyStore(dataDir, keyOptions);
  const limiter = createMemoryLimiter();
  return {
    kind: 'memory',
    keys,
    usage: createFileUsageStore(dataDir),
    limiter,
    health: () => BackendHealth.Ok,
    async checkWritable() {
      try {
        await access(dataDir, constants.W_OK);
        return { ok: true };
      } catch (err) {
        return { ok: false, problem: `data directory ${dataDir} is not writable (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
      }
    },
    async close() {
      await limiter.close();
      await keys.close();
    },
  };
}
