// Usage counters in Redis, added to by every instance's ledger flushes.
//
// Layout under prefix P for gateway key K:
//   P{K}:usage:total        hash  requests, promptTokens, completionTokens, cachedTokens, errors
//   P{K}:usage:hour:<id>    hash  the same fields for one UTC hour (`2026-11-22T05`)
//   P{K}:usage:day:<id>     hash  the same fields for one UTC day (`2026-11-22`)
//   P{keys}:usage-ids       set   every key id with usage, for totals()
// Hour and day buckets expire when they leave RETENTION (usage-series.ts): an hour a
// week after it started, a day about 13 months after. Totals never expire.
//
// A flush is one MULTI/EXEC of HINCRBYs and PEXPIREs, written in one go (one round
// trip). When it fails before EXEC ran (Redis away, a refused command), Redis drops
// the queued commands: nothing was added, add() rejects, and the caller's
// ledger.restore() loses and doubles nothing. The one ambiguous case is the
// connection dying after EXEC ran but before its reply: then the restored counters
// are added again at the next flush. Once EXEC ran, add() resolves even if some
// commands failed inside it (only possible when something else wrote to these keys,
// e.g. a string where a hash belongs): the rest is counted, so rejecting would make
// the caller add it twice; the failures go to onError instead.
// MULTI is safe on the shared connection because the whole transaction is queued in
// one synchronous turn, so no other caller's command can land between MULTI and EXEC.
import type { RedisClient } from '../redis/client.ts';
import { RedisReplyError } from '../redis/errors.ts';
import type { RedisArg, RedisReply } from '../redis/resp.ts';
import { addUsage, emptyUsage, HOUR_MS, USAGE_FIELDS, type KeyUsage, type PendingUsage } from '../usage/usage-ledger.ts';
import { bucketId, bucketStart, emptyStoredUsage, GRANULARITIES, RETENTION, SERIES_LENGTH, seriesOf, toKeyUsage, type Granularity, type UsageSeries } from '../usage/usage-series.ts';
import type { UsageStore } from './state-backend.ts';

const DAY_MS = 24 * HOUR_MS;
const BUCKET_MS: Record<Granularity, number> = { hour: HOUR_MS, day: DAY_MS };

export interface RedisUsageStoreOptions {
  keyPrefix: string;
  /** Commands that failed inside an executed flush (see above). Default: process.emitWarning. */
  onError?: (error: Error) => void;
}

export interface RedisUsageKeys {
  total: string;
  bucket(granularity: Granularity, id: string): string;
}

export function redisUsageKeys(keyPrefix: string, keyId: string): RedisUsageKeys {
  const base = `${keyPrefix}{${keyId}}:usage`;
  return { total: `${base}:total`, bucket: (granularity, id) => `${base}:${granularity}:${id}` };
}

export function redisUsageIdsKey(keyPrefix: string): string {
  return `${keyPrefix}{keys}:usage-ids`;
}

/** Stored usage that is not what this store writes. */
export class UsageStoreReplyError extends Error {
  override name = 'UsageStoreReplyError';
  readonly code = 'usage_store_invalid';
}

/**
 * Milliseconds a bucket starting at `startMs` has left at `nowMs`: pruneStoredUsage
 * keeps the RETENTION buckets ending with the current one, so a bucket leaves when
 * the one RETENTION buckets after it begins. 0 or less: already gone.
 */
export function bucketTtlMs(startMs: number, granularity: Granularity, nowMs: number): number {
  return startMs + RETENTION[granularity] * BUCKET_MS[granularity] - nowMs;
}

export function createRedisUsageStore(client: RedisClient, options: RedisUsageStoreOptions): UsageStore {
  const { keyPrefix } = options;
  const idsKey = redisUsageIdsKey(keyPrefix);
  const onError = options.onError ?? ((error: Error) => process.emitWarning(error));

  /** HINCRBY for every non-zero field. */
  function increments(key: string, u: KeyUsage): RedisArg[][] {
    return USAGE_FIELDS.filter((field) => u[field] !== 0).map((field) => ['HINCRBY', key, field, u[field]]);
  }

  /** Flat HGETALL reply -> KeyUsage (absent fields are 0); null for an absent hash. */
  function usageOf(reply: RedisReply, key: string): KeyUsage | null {
    if (!Array.isArray(reply)) throw new UsageStoreReplyError(`Unexpected reply reading ${key}.`);
    if (reply.length === 0) return null;
    const raw: Record<string, unknown> = { ...emptyUsage() };
    for (let i = 0; i + 1 < reply.length; i += 2) raw[String(reply[i])] = Number(reply[i + 1]);
    const u = toKeyUsage(raw);
    if (u === null || Object.keys(raw).length !== USAGE_FIELDS.length) {
      throw new UsageStoreReplyError(`${key} must hold ${USAGE_FIELDS.join(', ')} as non-negative integers.`);
    }
    return u;
  }

  return {
    async add(pending: PendingUsage, nowMs: number): Promise<void> {
      const commands: RedisArg[][] = [];
      for (const [keyId, hours] of pending) {
        const keys = redisUsageKeys(keyPrefix, keyId);
        commands.push(['SADD', idsKey, keyId]);
        // Totals and the day buckets sum several hours: added up first, one HINCRBY per field.
        const total = emptyUsage();
        const buckets = new Map<string, { granularity: Granularity; startMs: number; usage: KeyUsage }>();
        for (const [hourMs, u] of hours) {
          addUsage(total, u);
          for (const granularity of GRANULARITIES) {
            const startMs = bucketStart(hourMs, granularity);
            const key = keys.bucket(granularity, bucketId(startMs, granularity));
            const bucket = buckets.get(key) ?? { granularity, startMs, usage: emptyUsage() };
            addUsage(bucket.usage, u);
            buckets.set(key, bucket);
          }
        }
        commands.push(...increments(keys.total, total));
        for (const [key, { granularity, startMs, usage }] of buckets) {
          const ttl = bucketTtlMs(startMs, granularity, nowMs);
          // Past retention: counted in the totals only, as the file store prunes it.
          if (ttl <= 0) continue;
          commands.push(...increments(key, usage), ['PEXPIRE', key, ttl]);
        }
      }
      if (commands.length === 0) return;
      const replies = [client.command(['MULTI']), ...commands.map((args) => client.command(args)), client.command(['EXEC'])];
      const results = await Promise.all(replies);
      const exec = results[results.length - 1];
      if (!Array.isArray(exec)) throw new UsageStoreReplyError('The usage transaction was discarded.');
      const failed = exec.flatMap((reply, i) => (reply instanceof RedisReplyError ? [`${String(commands[i]?.[1])}: ${reply.message}`] : []));
      if (failed.length > 0) {
        onError(new UsageStoreReplyError(`${failed.length} of ${commands.length} usage updates failed and were dropped (${failed.slice(0, 3).join('; ')}).`));
      }
    },

    async series(keyId: string, granularity: Granularity, nowMs: number): Promise<UsageSeries> {
      const keys = redisUsageKeys(keyPrefix, keyId);
      const size = BUCKET_MS[granularity];
      const last = bucketStart(nowMs, granularity);
      const ids: string[] = [];
      for (let i = SERIES_LENGTH[granularity] - 1; i >= 0; i--) ids.push(bucketId(last - i * size, granularity));
      // Issued in one turn: one round trip for the whole series.
      const [total, ...buckets] = await Promise.all([
        client.command(['HGETALL', keys.total]),
        ...ids.map((id) => client.command(['HGETALL', keys.bucket(granularity, id)])),
      ]);
      const totals = usageOf(total ?? [], keys.total);
      if (totals === null) return seriesOf(undefined, granularity, nowMs);
      const stored = emptyStoredUsage();
      stored.totals = totals;
      const map = granularity === 'hour' ? stored.hours : stored.days;
      ids.forEach((id, i) => {
        const u = usageOf(buckets[i] ?? [], keys.bucket(granularity, id));
        if (u !== null) map.set(id, u);
      });
      return seriesOf(stored, granularity, nowMs);
    },

    async totals(): Promise<Map<string, KeyUsage>> {
      const ids = await client.command(['SMEMBERS', idsKey]);
      if (!Array.isArray(ids)) throw new UsageStoreReplyError(`Unexpected reply reading ${idsKey}.`);
      const keyIds = ids.map(String).sort();
      const replies = await Promise.all(keyIds.map((id) => client.command(['HGETALL', redisUsageKeys(keyPrefix, id).total])));
      const out = new Map<string, KeyUsage>();
      keyIds.forEach((id, i) => {
        const u = usageOf(replies[i] ?? [], redisUsageKeys(keyPrefix, id).total);
        if (u !== null) out.set(id, u);
      });
      return out;
    },
  };
}
