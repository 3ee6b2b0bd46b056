// Redis's side of `portcullis state migrate`: what a key prefix holds, read into
// a StateSnapshot with plain reads (SCAN, HGETALL, GET, LRANGE), and a snapshot
// written under an empty prefix in the layout the Redis stores read
// (docs/scaling.md, "Redis key layout"). Rate buckets and permits are not state
// worth moving: they refill and expire within a minute.
import type { ChainHead } from '../audit/audit-chain.ts';
import type { RedisStateConfig } from '../config/config.ts';
import { parseTokenRecord } from '../keys/admin-token-file.ts';
import { AdminTokenFileInvalidError } from '../keys/admin-token-errors.ts';
import { parseLastUsedFile, type KeyRecord } from '../keys/store-format.ts';
import { budgetWindowAt } from '../limits/budget-period.ts';
import { ENDED_BUDGET_KEPT_MS, redisLimiterKeys } from '../limits/redis-limiter.ts';
import { createRedisClient, type RedisClient } from '../redis/client.ts';
import type { RedisArg, RedisReply } from '../redis/resp.ts';
import { USAGE_FIELDS, emptyUsage, type KeyUsage } from '../usage/usage-ledger.ts';
import { emptyStoredUsage, toKeyUsage, type Granularity, type StoredKeyUsage } from '../usage/usage-series.ts';
import { redisAdminTokenKeys } from './redis-admin-token-store.ts';
import { redisAuditKeys } from '../audit/redis-audit-log.ts';
import { redisConnection } from './redis-backend.ts';
import { parseStoredRecord, recordJson, redisKeyStoreKeys } from './redis-key-layout.ts';
import { bucketTtlMs, redisUsageIdsKey, redisUsageKeys } from './redis-usage-store.ts';
import { byCreation, sortBudgets, type BudgetCount, type StateSnapshot } from './state-snapshot.ts';
import { storedTokenRecord } from '../keys/admin-token-file.ts';

/** Commands in flight at once: well under the client's queue bound. */
const PIPELINE = 500;
/** Audit lines per LRANGE and per RPUSH. */
const AUDIT_BATCH = 500;

/** A client for the migration, with the address, password and TLS of `config` (as the gateway would connect). */
export function openMigrationClient(config: RedisStateConfig, env: NodeJS.ProcessEnv, source: string | null, settingNames: { url: string; tls: string }): { client: RedisClient; location: string } {
  const { location, clientOptions } = redisConnection(config, env, source, settingNames);
  const client = createRedisClient({
    ...clientOptions,
    // One try: a migration reports an unreachable Redis instead of waiting for it.
    reconnect: { baseDelayMs: 50, maxDelayMs: 200 },
  });
  return { client, location };
}

/** `*`, `?`, `[`, `]` and `\` of a prefix matched literally by SCAN's MATCH. */
function globLiteral(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

/** Every key under `keyPrefix`, sorted. */
export async function keysUnder(client: RedisClient, keyPrefix: string): Promise<string[]> {
  const found = new Set<string>();
  let cursor = '0';
  do {
    const reply = await client.command(['SCAN', cursor, 'MATCH', `${globLiteral(keyPrefix)}*`, 'COUNT', 1000]);
    if (!Array.isArray(reply) || typeof reply[0] !== 'string' || !Array.isArray(reply[1])) throw new Error('unexpected reply to SCAN');
    cursor = reply[0];
    for (const key of reply[1]) found.add(String(key));
  } while (cursor !== '0');
  return [...found].sort();
}

/** Runs the commands pipelined, PIPELINE at a time, and returns their replies in order. */
async function pipelined(client: RedisClient, commands: readonly RedisArg[][]): Promise<RedisReply[]> {
  const replies: RedisReply[] = [];
  for (let i = 0; i < commands.length; i += PIPELINE) {
    replies.push(...(await Promise.all(commands.slice(i, i + PIPELINE).map((command) => client.command(command)))));
  }
  return replies;
}

function flatPairs(reply: RedisReply, what: string): Array<[string, string]> {
  if (!Array.isArray(reply) || reply.length % 2 !== 0) throw new Error(`unexpected reply reading ${what}`);
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i < reply.length; i += 2) pairs.push([String(reply[i]), String(reply[i + 1])]);
  return pairs;
}

function usageOf(reply: RedisReply, key: string): KeyUsage {
  const raw: Record<string, unknown> = { ...emptyUsage() };
  for (const [field, value] of flatPairs(reply, key)) raw[field] = Number(value);
  const usage = toKeyUsage(raw);
  if (usage === null || Object.keys(raw).length !== USAGE_FIELDS.length) throw new Error(`${key} must hold ${USAGE_FIELDS.join(', ')} as non-negative integers`);
  return usage;
}

/** What a Redis prefix holds, read without changing anything. `keys` is keysUnder's answer. */
export async function readRedisState(client: RedisClient, keyPrefix: string, location: string, keys: readonly string[]): Promise<StateSnapshot> {
  const keyStore = redisKeyStoreKeys(keyPrefix);
  const tokenStore = redisAdminTokenKeys(keyPrefix);
  const [records, lastUsed, tokens] = await pipelined(client, [['HGETALL', keyStore.records], ['HGETALL', keyStore.lastUsed], ['HGETALL', tokenStore.records]]);
  const keyRecords: KeyRecord[] = flatPairs(records as RedisReply, keyStore.records).map(([id, json]) => parseStoredRecord(id, json, location));
  const lastUsedMap = parseLastUsedFile(JSON.stringify({ version: 1, lastUsed: Object.fromEntries(flatPairs(lastUsed as RedisReply, keyStore.lastUsed)) }), `${location} ${keyStore.lastUsed}`);
  const tokenRecords = flatPairs(tokens as RedisReply, tokenStore.records).map(([id, json]) => {
    let value: unknown;
    try {
      value = JSON.parse(json) as unknown;
    } catch {
      throw new AdminTokenFileInvalidError(location, `record ${id} is not valid JSON`);
    }
    return parseTokenRecord(value, `record ${id}`, location);
  });

  // Usage hashes and budget counts of each gateway key, found by name: P{K}:usage:..., P{K}:budget:<w>, P{K}:cost:<w>.
  const prefixLength = keyPrefix.length;
  const usageKeys: Array<{ redisKey: string; keyId: string; part: 'total' | Granularity; bucket: string }> = [];
  const budgetKeys: Array<{ redisKey: string; keyId: string; kind: 'tokens' | 'cost'; windowId: string }> = [];
  for (const redisKey of keys) {
    const match = /^\{(key_[0-9A-Za-z]{16})\}:(?:usage:(total|hour|day)(?::(.+))?|(budget|cost):(.+))$/.exec(redisKey.slice(prefixLength));
    if (match === null) continue;
    const keyId = match[1] as string;
    if (match[2] !== undefined) {
      if ((match[2] === 'total') !== (match[3] === undefined)) continue;
      usageKeys.push({ redisKey, keyId, part: match[2] as 'total' | Granularity, bucket: match[3] ?? '' });
    } else {
      budgetKeys.push({ redisKey, keyId, kind: match[4] === 'budget' ? 'tokens' : 'cost', windowId: match[5] as string });
    }
  }
  const usageReplies = await pipelined(client, usageKeys.map((k) => ['HGETALL', k.redisKey]));
  const usage = new Map<string, StoredKeyUsage>();
  usageKeys.forEach((k, i) => {
    const stored = usage.get(k.keyId) ?? emptyStoredUsage();
    const counters = usageOf(usageReplies[i] ?? [], k.redisKey);
    if (k.part === 'total') stored.totals = counters;
    else (k.part === 'hour' ? stored.hours : stored.days).set(k.bucket, counters);
    usage.set(k.keyId, stored);
  });
  const budgetReplies = await pipelined(client, budgetKeys.map((k) => ['GET', k.redisKey]));
  const budgets: BudgetCount[] = [];
  budgetKeys.forEach((k, i) => {
    const used = Number(budgetReplies[i]);
    if (Number.isSafeInteger(used) && used > 0) budgets.push({ keyId: k.keyId, kind: k.kind, windowId: k.windowId, used });
  });
  return { keys: byCreation(keyRecords), lastUsed: lastUsedMap, tokens: byCreation(tokenRecords), usage: sortedUsage(usage), budgets: sortBudgets(budgets) };
}

function sortedUsage(usage: Map<string, StoredKeyUsage>): Map<string, StoredKeyUsage> {
  return new Map([...usage].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** Signs that gateways serve on this prefix now: /readyz write checks of the last 10 s, requests in flight. Empty when none. */
export async function servingSignsIn(client: RedisClient, keyPrefix: string, keys: readonly string[], nowMs: number): Promise<string[]> {
  const checks = keys.filter((key) => key.startsWith(`${keyPrefix}health:write-check:`)).length;
  const permitKeys = keys.filter((key) => /^\{key_[0-9A-Za-z]{16}\}:permits$/.test(key.slice(keyPrefix.length)));
  const counts = await pipelined(client, permitKeys.map((key) => ['ZCOUNT', key, nowMs, '+inf']));
  const inFlight = counts.reduce<number>((sum, n) => sum + (typeof n === 'number' ? n : 0), 0);
  const signs: string[] = [];
  if (checks > 0) signs.push(`${checks === 1 ? 'a /readyz check' : `${checks} /readyz checks`} answered within the last 10 s`);
  if (inFlight > 0) signs.push(`${inFlight === 1 ? 'a request' : `${inFlight} requests`} in flight`);
  return signs;
}

/** Writes the snapshot under an empty prefix: key store, tokens, usage and budget counts, with the expiries the stores give them. */
export async function writeRedisState(client: RedisClient, keyPrefix: string, snapshot: StateSnapshot, nowMs: number): Promise<void> {
  const commands: RedisArg[][] = [];
  const keyStore = redisKeyStoreKeys(keyPrefix);
  for (const record of snapshot.keys) {
    commands.push(['HSET', keyStore.records, record.id, recordJson(record)], ['HSET', keyStore.byHash, record.hash, record.id]);
  }
  for (const [id, time] of snapshot.lastUsed) commands.push(['HSET', keyStore.lastUsed, id, time]);
  if (snapshot.keys.length > 0) commands.push(['SET', keyStore.version, 1]);
  const tokenStore = redisAdminTokenKeys(keyPrefix);
  for (const token of snapshot.tokens) {
    commands.push(['HSET', tokenStore.records, token.id, JSON.stringify(storedTokenRecord(token))], ['HSET', tokenStore.byHash, token.hash, token.id]);
  }
  if (snapshot.tokens.length > 0) commands.push(['SET', tokenStore.version, 1]);
  for (const [keyId, stored] of snapshot.usage) {
    const keys = redisUsageKeys(keyPrefix, keyId);
    commands.push(['SADD', redisUsageIdsKey(keyPrefix), keyId]);
    commands.push(...hashSet(keys.total, stored.totals));
    for (const granularity of ['hour', 'day'] as const) {
      for (const [id, counters] of granularity === 'hour' ? stored.hours : stored.days) {
        const ttl = bucketTtlMs(bucketStartOf(id), granularity, nowMs);
        if (ttl <= 0) continue;
        const key = keys.bucket(granularity, id);
        const set = hashSet(key, counters);
        if (set.length > 0) commands.push(...set, ['PEXPIRE', key, ttl]);
      }
    }
  }
  for (const count of snapshot.budgets) {
    const keys = redisLimiterKeys(keyPrefix, count.keyId);
    const window = budgetWindowAt(windowStartMs(count.windowId), count.windowId.length === 7 ? 'month' : 'day');
    const ttl = window.endMs - nowMs + ENDED_BUDGET_KEPT_MS;
    if (ttl <= 0) continue;
    commands.push(['SET', count.kind === 'tokens' ? keys.budget(count.windowId) : keys.cost(count.windowId), count.used, 'PX', ttl]);
  }
  await pipelined(client, commands);
}

/** HSET of the non-zero fields, as the usage store writes them (absent fields read as 0). */
function hashSet(key: string, usage: KeyUsage): RedisArg[][] {
  const fields = USAGE_FIELDS.filter((field) => usage[field] !== 0).flatMap((field) => [field, usage[field]]);
  return fields.length === 0 ? [] : [['HSET', key, ...fields]];
}

function bucketStartOf(id: string): number {
  return Date.parse(id.length === 13 ? `${id}:00:00.000Z` : `${id}T00:00:00.000Z`);
}

function windowStartMs(windowId: string): number {
  return Date.parse(windowId.length === 7 ? `${windowId}-01T00:00:00.000Z` : `${windowId}T00:00:00.000Z`);
}

/** The audit chain's lines under `keyPrefix`, oldest first, in batches. */
export async function* redisAuditLines(client: RedisClient, keyPrefix: string): AsyncGenerator<string[]> {
  const { log } = redisAuditKeys(keyPrefix);
  const total = await client.command(['LLEN', log]);
  if (typeof total !== 'number') throw new Error(`unexpected reply to LLEN ${log}`);
  for (let start = 0; start < total; start += AUDIT_BATCH) {
    const lines = await client.command(['LRANGE', log, start, Math.min(start + AUDIT_BATCH, total) - 1]);
    if (!Array.isArray(lines)) throw new Error(`unexpected reply to LRANGE ${log}`);
    yield lines.map(String);
  }
}

/** Writes the chain under an empty prefix: the lines with RPUSH, then the head key as the Redis audit log keeps it. */
export function createRedisAuditWriter(client: RedisClient, keyPrefix: string): { append(lines: string[]): Promise<void>; finish(head: ChainHead): Promise<void> } {
  const keys = redisAuditKeys(keyPrefix);
  let any = false;
  return {
    async append(lines) {
      if (lines.length === 0) return;
      any = true;
      await client.command(['RPUSH', keys.log, ...lines]);
    },
    async finish(head) {
      if (any) await client.command(['SET', keys.head, `${head.seq} ${head.hash}`]);
    },
  };
}
