// <dataDir>/usage.json: per-key totals plus hourly and daily buckets. A flush
// adds what the ledger gathered to what is on disk, under a lock, so several
// processes sharing a data directory add up instead of overwriting each other.
//
//   {"version":2,"keys":{"<key id>":{"totals":{...},"hours":{"2026-11-22T05":{...}},"days":{"2026-11-22":{...}}}}}
//
// Each {...} holds requests, promptTokens, completionTokens, cachedTokens, errors,
// costNanos (integer nanos of the configured currency) and the egress guard's
// findings by action (guardBlocked, guardMasked, guardLogged: counts only). Files
// written before cost or findings were recorded lack those fields: they read as 0,
// and the next flush writes them.
// (Keeping version 2 lets an older gateway still read the file: it ignores the
// field it does not know.) Version 1 files (totals only, {"version":1,"keys":{"<id>":{...}}}) are
// read as totals with no buckets and rewritten as version 2 by the next flush.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../files/atomic-file.ts';
import { DEFAULT_LOCK_OPTIONS, withFileLock } from '../files/file-lock.ts';
import { type KeyUsage, type PendingUsage, type UsageLedger } from './usage-ledger.ts';
import { addHour, emptyStoredUsage, pruneStoredUsage, toKeyUsage, type StoredKeyUsage } from './usage-series.ts';

export const USAGE_FILE = 'usage.json';
const VERSION = 2;
const HOUR_ID = /^\d{4}-\d{2}-\d{2}T\d{2}$/;
const DAY_ID = /^\d{4}-\d{2}-\d{2}$/;

export class UsageFileError extends Error {
  override name = 'UsageFileError';
  readonly code = 'usage_file_invalid';
}

/** Parses usage.json; anything unexpected is an error naming the file, never silently zero. */
export function parseUsageFile(text: string, file: string): Map<string, StoredKeyUsage> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageFileError(`${file}: is not valid JSON`);
  }
  const root = value as { version?: unknown; keys?: unknown };
  if (typeof value !== 'object' || value === null || (root.version !== 1 && root.version !== VERSION) || typeof root.keys !== 'object' || root.keys === null) {
    throw new UsageFileError(`${file}: expected {"version":2,"keys":{...}}`);
  }
  const out = new Map<string, StoredKeyUsage>();
  for (const [keyId, raw] of Object.entries(root.keys as Record<string, unknown>)) {
    const stored = emptyStoredUsage();
    if (root.version === 1) {
      stored.totals = counters(raw, file, `keys.${keyId}`);
    } else {
      const r = raw as Record<string, unknown> | null;
      if (typeof r !== 'object' || r === null) throw new UsageFileError(`${file}: keys.${keyId} must be an object`);
      stored.totals = counters(r['totals'], file, `keys.${keyId}.totals`);
      buckets(r['hours'], stored.hours, HOUR_ID, file, `keys.${keyId}.hours`);
      buckets(r['days'], stored.days, DAY_ID, file, `keys.${keyId}.days`);
    }
    out.set(keyId, stored);
  }
  return out;
}

function counters(raw: unknown, file: string, at: string): KeyUsage {
  const u = toKeyUsage(raw);
  if (u === null) throw new UsageFileError(`${file}: ${at} must hold requests, promptTokens, completionTokens, cachedTokens, errors (and costNanos, guardBlocked, guardMasked, guardLogged, if present) as non-negative integers`);
  return u;
}

function buckets(raw: unknown, into: Map<string, KeyUsage>, idPattern: RegExp, file: string, at: string): void {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new UsageFileError(`${file}: ${at} must be an object`);
  for (const [id, u] of Object.entries(raw)) {
    if (!idPattern.test(id)) throw new UsageFileError(`${file}: ${at} has a bucket "${id}" that is not a UTC ${idPattern === HOUR_ID ? 'hour (YYYY-MM-DDTHH)' : 'day (YYYY-MM-DD)'}`);
    into.set(id, counters(u, file, `${at}.${id}`));
  }
}

export function serializeUsageFile(all: Map<string, StoredKeyUsage>): string {
  const keys: Record<string, unknown> = {};
  const sorted = (m: Map<string, KeyUsage>): Record<string, KeyUsage> => Object.fromEntries([...m].sort(([a], [b]) => (a < b ? -1 : 1)));
  for (const id of [...all.keys()].sort()) {
    const s = all.get(id) as StoredKeyUsage;
    keys[id] = { totals: s.totals, hours: sorted(s.hours), days: sorted(s.days) };
  }
  return `${JSON.stringify({ version: VERSION, keys }, null, 2)}\n`;
}

export async function readUsageFile(dataDir: string): Promise<Map<string, StoredKeyUsage>> {
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

/** Per-key totals only (the CLI's `keys usage`). */
export async function readUsageTotals(dataDir: string): Promise<Map<string, KeyUsage>> {
  const all = await readUsageFile(dataDir);
  return new Map([...all].map(([id, s]) => [id, s.totals]));
}

/** Adds pending counters to the stored usage, pruning buckets past retention. Pure. */
function mergePending(all: Map<string, StoredKeyUsage>, pending: PendingUsage, nowMs: number): void {
  for (const [keyId, hours] of pending) {
    const stored = all.get(keyId) ?? emptyStoredUsage();
    for (const [hourMs, u] of hours) addHour(stored, hourMs, u);
    pruneStoredUsage(stored, nowMs);
    all.set(keyId, stored);
  }
}

/** Adds drained counters to usage.json under its lock; nothing is written when it fails. */
export async function flushPendingUsage(dataDir: string, pending: PendingUsage, nowMs: number): Promise<void> {
  if (pending.size === 0) return;
  const file = path.join(dataDir, USAGE_FILE);
  await withFileLock(`${file}.lock`, DEFAULT_LOCK_OPTIONS, async () => {
    const all = await readUsageFile(dataDir);
    mergePending(all, pending, nowMs);
    await writeFileAtomic(file, serializeUsageFile(all));
  });
}

/** Adds the ledger's pending counters to usage.json; on failure they stay pending. */
export async function flushUsage(dataDir: string, ledger: UsageLedger, nowMs: number = Date.now()): Promise<void> {
  if (!ledger.dirty()) return;
  const pending = ledger.drain();
  try {
    await flushPendingUsage(dataDir, pending, nowMs);
  } catch (err) {
    ledger.restore(pending);
    throw err;
  }
}

