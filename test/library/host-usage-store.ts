// A usage store as a host writes one, from the public types alone: every
// flushed hour kept in memory (its own database would do the same sums).
import type { KeyUsage, PendingUsage, UsageBucket, UsageGranularity, UsageSeries, UsageStore } from '../../src/api/limits.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const LENGTH: Record<UsageGranularity, number> = { hour: 48, day: 30 };
const FIELDS = ['requests', 'promptTokens', 'completionTokens', 'cachedTokens', 'errors', 'costNanos', 'guardBlocked', 'guardMasked', 'guardLogged'] as const;

function zero(): KeyUsage {
  return { requests: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0, errors: 0, costNanos: 0, guardBlocked: 0, guardMasked: 0, guardLogged: 0 };
}

function addInto(into: KeyUsage, from: KeyUsage): void {
  for (const field of FIELDS) into[field] += from[field];
}

export function createHostUsageStore(): UsageStore & { readonly adds: number } {
  const hours = new Map<string, Map<number, KeyUsage>>();
  let adds = 0;
  const series = (keyId: string, granularity: UsageGranularity, nowMs: number): UsageSeries => {
    const size = granularity === 'hour' ? HOUR_MS : DAY_MS;
    const last = Math.floor(nowMs / size) * size;
    const first = last - (LENGTH[granularity] - 1) * size;
    const buckets: UsageBucket[] = [];
    for (let start = first; start <= last; start += size) buckets.push({ start: new Date(start).toISOString(), ...zero() });
    const totals = zero();
    for (const [hourMs, usage] of hours.get(keyId) ?? []) {
      addInto(totals, usage);
      const index = (Math.floor(hourMs / size) * size - first) / size;
      const bucket = buckets[index];
      if (bucket !== undefined) addInto(bucket, usage);
    }
    return { granularity, buckets, totals };
  };
  return {
    get adds() {
      return adds;
    },
    async add(pending: PendingUsage) {
      adds++;
      for (const [keyId, byHour] of pending) {
        const kept = hours.get(keyId) ?? new Map<number, KeyUsage>();
        for (const [hourMs, usage] of byHour) {
          const sum = kept.get(hourMs) ?? zero();
          addInto(sum, usage);
          kept.set(hourMs, sum);
        }
        hours.set(keyId, kept);
      }
    },
    series: async (keyId, granularity, nowMs) => series(keyId, granularity, nowMs),
    async totals() {
      return new Map([...hours.keys()].map((keyId) => [keyId, series(keyId, 'day', 0).totals]));
    },
    async periodTotals(granularity, nowMs) {
      const sums = [...hours.keys()].sort().map((keyId): [string, KeyUsage] => {
        const sum = zero();
        for (const bucket of series(keyId, granularity, nowMs).buckets) {
          const { start: _start, ...usage } = bucket;
          addInto(sum, usage);
        }
        return [keyId, sum];
      });
      return new Map(sums);
    },
  };
}
