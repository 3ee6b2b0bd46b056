// <dataDir>/usage.json: per-key totals. A flush adds what the ledger gathered
// to what is on disk, under a lock, so several processes sharing a data
// directory add up instead of overwriting each other.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../keys/atomic-file.ts';
import { DEFAULT_LOCK_OPTIONS, withFileLock } from '../keys/file-lock.ts';
import { addUsage, emptyUsage, type KeyUsage, type UsageLedger } from './usage-ledger.ts';

export const USAGE_FILE = 'usage.json';
const FIELDS = ['requests', 'promptTokens', 'completionTokens', 'cachedTokens', 'errors'] as const;

export class UsageFileError extends Error {
  override name = 'UsageFileError';
  readonly code = 'usage_file_invalid';
}

/** Parses usage.json; anything unexpected is an error naming the file, never silently zero. */
export function parseUsageFile(text: string, file: string): Map<string, KeyUsage> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageFileError(`${file}: is not valid JSON`);
  }
  const root = value as { version?: unknown; keys?: unknown };
  if (typeof value !== 'object' || value === null || root.version !== 1 || typeof root.keys !== 'object' || root.keys === null) {
    throw new UsageFileError(`${file}: expected {"version":1,"keys":{...}}`);
  }
  const out = new Map<string, KeyUsage>();
  for (const [keyId, raw] of Object.entries(root.keys as Record<string, unknown>)) {
    const u = emptyUsage();
    for (const field of FIELDS) {
      const n = (raw as Record<string, unknown> | null)?.[field];
      if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw new UsageFileError(`${file}: keys.${keyId}.${field} must be a non-negative integer`);
      u[field] = n;
    }
    out.set(keyId, u);
  }
  return out;
}

export function serializeUsageFile(totals: Map<string, KeyUsage>): string {
  const keys: Record<string, KeyUsage> = {};
  for (const id of [...totals.keys()].sort()) keys[id] = totals.get(id) as KeyUsage;
  return `${JSON.stringify({ version: 1, keys }, null, 2)}\n`;
}

export async function readUsageFile(dataDir: string): Promise<Map<string, KeyUsage>> {
  const file = path.join(dataDir, USAGE_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw err;
  }
  return parseUsageFile(text, file);
}

/** Adds the ledger's pending counters to usage.json; on failure they stay pending. */
export async function flushUsage(dataDir: string, ledger: UsageLedger): Promise<void> {
  if (!ledger.dirty()) return;
  const pending = ledger.drain();
  const file = path.join(dataDir, USAGE_FILE);
  try {
    await withFileLock(`${file}.lock`, DEFAULT_LOCK_OPTIONS, async () => {
      const totals = await readUsageFile(dataDir);
      for (const [keyId, u] of pending) {
        const t = totals.get(keyId) ?? emptyUsage();
        addUsage(t, u);
        totals.set(keyId, t);
      }
      await writeFileAtomic(file, serializeUsageFile(totals));
    });
  } catch (err) {
    ledger.restore(pending);
    throw err;
  }
}
