// Usage counters in Redis, added to by every instance's ledger flushes.
//
// Layout under prefix P for gateway key K:
//   P{K}:usage:total        hash  requests, promptTokens, completionTokens, cachedTokens, errors, costNanos,
//                                 guardBlocked, guardMasked, guardLogged
//   P{K}:usage:hour:<id>    hash  the same fields for one UTC hour (`2026-11-22T05`)
//   P{K}:usage:day:<id>     hash  the same fields for one UTC day (`2026-11-22`)
//   P{keys}:usage-ids       set   every key id with usage, for totals()
// Hour and day buckets expire when they leave RETENTION (usage-series.ts): an hour a
// week after it started, a day about 13 months after. Totals never expire. A field
// that is 0 is not written, so a hash lacks it until it is used: absent fields read
// as 0 (hashes written before cost or the guard's findings were recorded lack them).
//
// A flush is one script call (FLUSH_SCRIPT) running the SADDs, HINCRBYs and PEXPIREs
// atomically: one round trip. When the call fails (Redis away, the script refused by
// an ACL), nothing ran: add() rejects, and the caller's ledger.restore() loses and
// doubles nothing. (A MULTI/EXEC pipeline could not promise that: when MULTI itself is
// refused, the queued commands run one by one and EXEC fails, so the restored
// counters were added twice.) The one ambiguous case is the connection dying after
// the script ran but before its reply: then the restored counters are added again at
// the next flush. Inside the script each command runs with pcall: a command that fails
// (only possible when something else wrote to these keys, e.g. a string where a hash
// belongs) is reported, the rest is counted, and add() resolves, since rejecting would
// make the caller add the counted part twice; the failures go to onError instead.
import type { RedisClient } from '../redis/client.ts';
import { defineScript } from '../redis/script.ts';
import type { RedisArg, RedisReply } from '../redis/resp.ts';
import { addUsage, emptyUsage, HOUR_MS, USAGE_FIELDS, type KeyUsage, type PendingUsage } from '../usage/usage-ledger.ts';
import { bucketId, bucketStart, emptyStoredUsage, GRANULARITIES, periodSum, RETENTION, SERIES_LENGTH, seriesOf, toKeyUsage, type Granularity, type UsageSeries } from '../usage/usage-series.ts';
import type { UsageStore } from './state-backend.ts';

const DAY_MS = 24 * HOUR_MS;
const BUCKET_MS: Record<Granularity, number> = { hour: HOUR_MS, day: DAY_MS };

interface RedisUsageStoreOptions {
  keyPrefix: string;
  /** Commands that failed inside an executed flush (see above). Default: process.emitWarning. */
  onError?: (error: Error) => void;
}

interface RedisUsageKeys {
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
class UsageStoreReplyError extends Error {
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

/**
 * Runs the flush's commands (only SADD, HINCRBY, PEXPIRE) with pcall and returns
 * the failures as "COMMAND key: error" strings; an empty table when all succeeded.
 */
const FLUSH_SCRIPT = defineScript(`
local allowed = { SADD = true, HINCRBY = true, PEXPIRE = true }
local failures = {}
local i = 1
while i <= #ARGV do
  local name = ARGV[i]
  local key = KEYS[tonumber(ARGV[i + 1])]
  local n = tonumber(ARGV[i + 2])
  if not allowed[name] or key == nil or n == nil then
    return redis.error_reply('ERR portcullis usage flush: malformed arguments at ' .. i)
  end
  local args = {}
  for j = 1, n do args[j] = ARGV[i + 2 + j] end
  local reply = redis.pcall(name, key, unpack(args))
  if type(reply) == 'table' and reply.err then
    failures[#failures + 1] = name .. ' ' .. key .. ': ' .. reply.err
  end
  i = i + 3 + n
end
return failures
`);

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
      // KEYS are the distinct keys; ARGV holds each command as name, key index, argument count, arguments.
      const keys: string[] = [];
      const keyIndex = new Map<string, number>();
      const argv: Array<string | number> = [];
      for (const [name, key, ...rest] of commands) {
        let index = keyIndex.get(String(key));
        if (index === undefined) {
          keys.push(String(key));
          index = keys.length;
          keyIndex.set(String(key), index);
        }
        argv.push(String(name), index, rest.length, ...rest.map((a) => (typeof a === 'number' ? a : String(a))));
      }
      const failures = await client.evalScript(FLUSH_SCRIPT, keys, argv);
      if (!Array.isArray(failures)) throw new UsageStoreReplyError('Unexpected reply from the usage flush script.');
      if (failures.length > 0) {
        const failed = failures.map(String);
        onError(new UsageStoreReplyError(`${failed.length} of ${commands.length} usage updates failed and were dropped (${failed.slice(0, 3).join('; ')}).`));
      }
    },

    series,

    async periodTotals(granularity: Granularity, nowMs: number): Promise<Map<string, KeyUsage>> {
      const keyIds = await usageIds();
      // Every key's series issued in the same turn: one round trip for all of them.
      const all = await Promise.all(keyIds.map((id) => series(id, granularity, nowMs)));
      return new Map(keyIds.map((id, i) => [id, periodSum(all[i] as UsageSeries)]));
    },

    async totals(): Promise<Map<string, KeyUsage>> {
      const keyIds = await usageIds();
      const replies = await Promise.all(keyIds.map((id) => client.command(['HGETALL', redisUsageKeys(keyPrefix, id).total])));
      const out = new Map<string, KeyUsage>();
      keyIds.forEach((id, i) => {
        const u = usageOf(replies[i] ?? [], redisUsageKeys(keyPrefix, id).total);
        if (u !== null) out.set(id, u);
      });
      return out;
    },
  };

  async function usageIds(): Promise<string[]> {
    const ids = await client.command(['SMEMBERS', idsKey]);
    if (!Array.isArray(ids)) throw new UsageStoreReplyError(`Unexpected reply reading ${idsKey}.`);
    return ids.map(String).sort();
  }

  async function series(keyId: string, granularity: Granularity, nowMs: number): Promise<UsageSeries> {
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
  }
}
