// `portcullis keys usage [ID]`: what the gateway recorded per key. Without an id, every
// key's totals (requests, tokens, errors, cost); with one, that key's series of UTC days
// (or hours), the same buckets the admin API and the dashboard chart read. Cost is
// stored as integer nanos and shown in the config's currency.
import { keyStatus } from '../keys/key-settings.ts';
import type { KeyStore } from '../state/key-store-port.ts';
import type { UsageStore } from '../state/usage-store-port.ts';
import { emptyUsage, type KeyUsage } from '../usage/usage-ledger.ts';
import { GRANULARITIES, type Granularity } from '../usage/usage-series.ts';
import { costed } from '../admin/usage-view.ts';
import { KeyOptionError } from './key-options.ts';
import { formatCost, noKeysYet, renderTable, toJson } from './keys-output.ts';

export const USAGE_OPTIONS = { granularity: { type: 'string' } } as const;

interface UsageContext {
  stdout: NodeJS.WritableStream;
  clock?: () => number;
  command?: string;
  /** The config's currency; without one, amounts are shown without a code. */
  currency?: string;
}

const COLUMNS = ['REQUESTS', 'PROMPT', 'COMPLETION', 'CACHED', 'ERRORS', 'COST'] as const;

function cells(u: KeyUsage, currency: string | undefined): string[] {
  return [String(u.requests), String(u.promptTokens), String(u.completionTokens), String(u.cachedTokens), String(u.errors), formatCost(u.costNanos, currency)];
}

export async function runUsage(
  store: { keys: KeyStore; usage: UsageStore },
  values: Record<string, string | boolean | string[] | undefined>,
  positionals: string[],
  ctx: UsageContext,
): Promise<number> {
  const [id, extra] = positionals;
  if (extra !== undefined) throw new KeyOptionError(`expected at most one key ID, got ${positionals.length}`);
  const granularityFlag = values['granularity'];
  if (id === undefined) {
    if (granularityFlag !== undefined) throw new KeyOptionError('--granularity needs a key ID: portcullis keys usage ID --granularity day');
    return allKeys(store, values['json'] === true, ctx);
  }
  const granularity = (granularityFlag ?? 'day') as Granularity;
  if (!GRANULARITIES.includes(granularity)) throw new KeyOptionError(`--granularity must be "day" (the last 30 UTC days) or "hour" (the last 48 UTC hours); got ${JSON.stringify(granularityFlag)}`);
  return oneKey(store, id, granularity, values['json'] === true, ctx);
}

async function allKeys(store: { keys: KeyStore; usage: UsageStore }, json: boolean, ctx: UsageContext): Promise<number> {
  const [keys, totals] = await Promise.all([store.keys.list(), store.usage.totals()]);
  const now = (ctx.clock ?? Date.now)();
  const rows = keys.map((k) => ({ id: k.id, name: k.name, prefix: k.prefix, status: keyStatus(k, now), ...costed(totals.get(k.id) ?? emptyUsage()) }));
  if (json) {
    ctx.stdout.write(toJson(rows));
    return 0;
  }
  if (rows.length === 0) {
    ctx.stdout.write(noKeysYet(ctx.command));
    return 0;
  }
  ctx.stdout.write(renderTable(['ID', 'NAME', ...COLUMNS, 'STATUS'], rows.map((r) => [r.id, r.name, ...cells(r, ctx.currency), r.status])));
  return 0;
}

async function oneKey(store: { keys: KeyStore; usage: UsageStore }, id: string, granularity: Granularity, json: boolean, ctx: UsageContext): Promise<number> {
  // Refuses an unknown id (exit 1, naming it) rather than printing a series of zeros.
  const key = await store.keys.get(id);
  const series = await store.usage.series(key.id, granularity, (ctx.clock ?? Date.now)());
  if (json) {
    ctx.stdout.write(toJson({ keyId: key.id, granularity, buckets: series.buckets.map(costed), totals: costed(series.totals), currency: ctx.currency ?? null }));
    return 0;
  }
  // `2026-11-22` for a day, `2026-11-22T05:00Z` for an hour.
  const start = (iso: string): string => (granularity === 'day' ? iso.slice(0, 10) : `${iso.slice(0, 16)}Z`);
  const rows = series.buckets.map((b) => [start(b.start), ...cells(b, ctx.currency)]);
  rows.push(['all time', ...cells(series.totals, ctx.currency)]);
  ctx.stdout.write(`Usage of ${key.id} ("${key.name}") per UTC ${granularity}, as recorded by the gateway:\n\n` + renderTable([granularity === 'day' ? 'DAY' : 'HOUR', ...COLUMNS], rows));
  return 0;
}
