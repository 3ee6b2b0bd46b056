// The file adapter of the usage store port (usage-store-port.ts): usage.json in the
// data directory, written under its lock by src/usage/usage-file.ts, so several
// processes on one directory add up.
import { flushPendingUsage, readUsageFile } from '../usage/usage-file.ts';
import { periodSum, seriesOf } from '../usage/usage-series.ts';
import type { UsageStore } from './usage-store-port.ts';

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
    async periodTotals(granularity, nowMs) {
      const all = await readUsageFile(dataDir);
      return new Map([...all.keys()].sort().map((id) => [id, periodSum(seriesOf(all.get(id), granularity, nowMs))]));
    },
  };
}
