// Usage over time, pure: bucket ids for UTC hours and days, the stored shape
// of one key's usage, adding pending counters to it with retention, and the
// fixed-length series the admin API and dashboard chart read.
import { addUsage, emptyUsage, HOUR_MS, OPTIONAL_USAGE_FIELDS, USAGE_FIELDS, type KeyUsage } from './usage-ledger.ts';

export type Granularity = 'hour' | 'day';
export const GRANULARITIES: readonly Granularity[] = ['hour', 'day'];
/** How many buckets a series has, ending with the current one. */
export const SERIES_LENGTH: Record<Granularity, number> = { hour: 48, day: 30 };
/** How long buckets are kept: a week of hours, about 13 months of days. */
export const RETENTION: Record<Granularity, number> = { hour: 7 * 24, day: 400 };
const DAY_MS = 24 * HOUR_MS;

/** `2026-11-22T05` for an hour, `2026-11-22` for a day (UTC); sorts as time. */
export function bucketId(ms: number, granularity: Granularity): string {
  const iso = new Date(ms).toISOString();
  return granularity === 'hour' ? iso.slice(0, 13) : iso.slice(0, 10);
}

/** Start of the bucket in ms. */
export function bucketStart(ms: number, granularity: Granularity): number {
  const size = granularity === 'hour' ? HOUR_MS : DAY_MS;
  return ms - (((ms % size) + size) % size);
}

/** One key's stored usage. */
export interface StoredKeyUsage {
  totals: KeyUsage;
  hours: Map<string, KeyUsage>;
  days: Map<string, KeyUsage>;
}

export function emptyStoredUsage(): StoredKeyUsage {
  return { totals: emptyUsage(), hours: new Map(), days: new Map() };
}

/** Adds one hour's pending counters (hour start in ms) to the stored usage. */
export function addHour(stored: StoredKeyUsage, hourMs: number, u: KeyUsage): void {
  addUsage(stored.totals, u);
  for (const granularity of GRANULARITIES) {
    const map = granularity === 'hour' ? stored.hours : stored.days;
    const id = bucketId(hourMs, granularity);
    const bucket = map.get(id) ?? emptyUsage();
    addUsage(bucket, u);
    map.set(id, bucket);
  }
}

/** Drops buckets older than their retention at `nowMs`. */
export function pruneStoredUsage(stored: StoredKeyUsage, nowMs: number): void {
  for (const granularity of GRANULARITIES) {
    const map = granularity === 'hour' ? stored.hours : stored.days;
    const size = granularity === 'hour' ? HOUR_MS : DAY_MS;
    const oldest = bucketId(bucketStart(nowMs, granularity) - (RETENTION[granularity] - 1) * size, granularity);
    for (const id of map.keys()) if (id < oldest) map.delete(id);
  }
}

export interface UsageBucket extends KeyUsage {
  /** ISO 8601 start of the bucket. */
  start: string;
}

export interface UsageSeries {
  granularity: Granularity;
  /** SERIES_LENGTH buckets in time order, ending with the one holding `nowMs`; empty ones are zeros. */
  buckets: UsageBucket[];
  /** Everything since the key was first used. */
  totals: KeyUsage;
}

export function seriesOf(stored: StoredKeyUsage | undefined, granularity: Granularity, nowMs: number): UsageSeries {
  const size = granularity === 'hour' ? HOUR_MS : DAY_MS;
  const map = stored === undefined ? undefined : granularity === 'hour' ? stored.hours : stored.days;
  const last = bucketStart(nowMs, granularity);
  const buckets: UsageBucket[] = [];
  for (let i = SERIES_LENGTH[granularity] - 1; i >= 0; i--) {
    const start = last - i * size;
    const u = map?.get(bucketId(start, granularity));
    buckets.push({ start: new Date(start).toISOString(), ...(u === undefined ? emptyUsage() : { ...u }) });
  }
  return { granularity, buckets, totals: stored === undefined ? emptyUsage() : { ...stored.totals } };
}

/**
 * A KeyUsage from untrusted data, or null when any field is not a non-negative safe
 * integer. An absent optional field (OPTIONAL_USAGE_FIELDS: usage stored before cost
 * or the guard's findings were recorded) reads as 0.
 */
export function toKeyUsage(raw: unknown): KeyUsage | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const u = emptyUsage();
  for (const field of USAGE_FIELDS) {
    const n = (raw as Record<string, unknown>)[field];
    if (n === undefined && OPTIONAL_USAGE_FIELDS.has(field)) continue;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) return null;
    u[field] = n;
  }
  return u;
}

/** What a series' buckets add up to: the key's usage in the period the series covers (not its all-time totals). */
export function periodSum(series: UsageSeries): KeyUsage {
  const sum = emptyUsage();
  for (const bucket of series.buckets) addUsage(sum, bucket);
  return sum;
}
