// The rows of the usage table: newest period first, and each run of periods
// without any traffic folded into one row, so 48 hours with one busy hour read
// as two rows, not 48. Pure (no DOM), so it is tested on its own.
import type { UsageBucket } from './admin-model.ts';
import { findingsOf, hasFindings } from './format.ts';

export type UsageRow =
  | { kind: 'traffic'; bucket: UsageBucket }
  /** Periods with no requests, no tokens, no cost and no guard findings: from the oldest start to the newest start, `count` of them. */
  | { kind: 'quiet'; newest: string; oldest: string; count: number };

function isQuiet(b: UsageBucket): boolean {
  return b.requests === 0 && b.errors === 0 && b.promptTokens === 0 && b.completionTokens === 0 && b.cachedTokens === 0 && (b.costNanos ?? 0) === 0 && !hasFindings(findingsOf(b));
}

/** Buckets arrive oldest first (the API's order); rows come out newest first. */
export function usageRows(buckets: readonly UsageBucket[]): UsageRow[] {
  const rows: UsageRow[] = [];
  for (let i = buckets.length - 1; i >= 0; i--) {
    const bucket = buckets[i] as UsageBucket;
    if (!isQuiet(bucket)) {
      rows.push({ kind: 'traffic', bucket });
      continue;
    }
    const last = rows.at(-1);
    if (last?.kind === 'quiet') {
      last.oldest = bucket.start;
      last.count += 1;
    } else {
      rows.push({ kind: 'quiet', newest: bucket.start, oldest: bucket.start, count: 1 });
    }
  }
  return rows;
}
