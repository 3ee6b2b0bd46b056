// The API key store in Redis, shared by every gateway instance on it.
//
// Layout under prefix P (all in the hash tag {keys}, so one Cluster slot and the
// scripts of redis-key-layout.ts may touch them together):
//   P{keys}:records    hash  key id -> record JSON (the keys.json record format, checked as strictly)
//   P{keys}:by-hash    hash  SHA-256 of the raw key -> key id (uniqueness of secrets)
//   P{keys}:version    string counter, INCR'd by every create/update/rotate/revoke
//   P{keys}:last-used  hash  key id -> ISO time of the last use seen by any instance
// The raw key is never stored, only its SHA-256 (as in keys.json).
//
// Writes are compare-and-set Lua scripts: a change reads the record, builds the new
// one with the record functions the file store uses (src/keys/key-records.ts, so both
// refuse the same things: a revoked key is never changed), and the script stores it
// only if the record is still the one read (else it is read again, at most
// MAX_WRITE_ATTEMPTS times). Two admins on two instances therefore never lose each other's changes.
// Not WATCH/MULTI: the client multiplexes every caller on one connection, where a
// WATCH would watch on behalf of everybody.
//
// authenticate() is synchronous, served from an in-memory mirror of the records. The
// mirror is refreshed when the version counter changes: a GET every reloadIntervalMs
// (default 1 s) and right after this instance's own writes. So a key revoked on
// instance A is refused by instance B at most reloadIntervalMs plus one snapshot read
// (a few ms for thousands of keys) after the revoke returned; on A at once.
// While Redis is unreachable the mirror keeps serving the last keys it saw (a revoke
// made meanwhile elsewhere cannot reach this instance anyway) and onError hears of the
// outage once; the first successful poll after it catches up.
//
// A key created on another instance is in Redis before its create returns, but in
// this mirror only after the next poll. So a miss asks Redis (lookup(), one script:
// by-hash then the record): a key created elsewhere authenticates at once. The lookup
// is bounded so unknown keys cannot flood Redis: one in flight per key hash (callers
// share it), LOOKUP_TIMEOUT_MS, an unknown hash is answered from a bounded LRU for
// UNKNOWN_KEY_CACHE_MS, at most MAX_LOOKUPS_IN_FLIGHT lookups run at once, and new
// lookups are rate-bounded per instance and per client (lookup-budget.ts). A lookup
// that is not started (shed) or not answered (timeout, Redis down) is no verdict on
// the key: it rejects with StateUnavailableError (503, Retry-After: 1), so clients
// retry, and by then the mirror has caught up with a key that exists. Only Redis
// saying "unknown" (or the cache of that answer) is a 401.
// A found record is served for that request only and a refresh
// is started; it never enters the mirror, so a lookup that raced a revoke cannot
// bring the key back. A key the mirror holds as revoked is never looked up.
import type { RedisClient } from '../redis/client.ts';
import { RedisUnavailableError } from '../redis/errors.ts';
import type { RedisReply } from '../redis/resp.ts';
import { systemScheduler, type Scheduler } from '../time/scheduler.ts';
import { generateApiKey, hashApiKey, isWellFormedApiKey } from '../keys/api-key.ts';
import { createLastUsedBatch } from '../keys/last-used-batch.ts';
import { KeyFileInvalidError, KeyNotFoundError, KeyStoreClosedError, KeyStoreIoError } from '../keys/errors.ts';
import { checkNewKey, checkPatch, createKeyRecord, keyChanges, requireRecord } from '../keys/key-records.ts';
import type { KeySettingsInput } from '../keys/key-settings.ts';
import { laterTime, newKeyId, parseLastUsedFile, type KeyRecord } from '../keys/store-format.ts';
import { DEFAULT_LAST_USED_FLUSH_MS, DEFAULT_RELOAD_INTERVAL_MS, type IssuedKey, type KeyLookupResult, type KeyPatch, type KeyStore, type ListedKey, type WriteAhead } from './key-store-port.ts';
import { StateUnavailableError } from './errors.ts';
import { createLookupBudget } from './lookup-budget.ts';
import { MERGE_LAST_USED_SCRIPT, parseStoredRecord, PUT_RECORD_SCRIPT, RECORD_ADVICE, RECORD_BY_HASH_SCRIPT, recordJson, redisKeyStoreKeys, SNAPSHOT_SCRIPT } from './redis-key-layout.ts';

/** A lookup of a missed key that Redis has not answered by then is answered 503 (state_unavailable). */
export const LOOKUP_TIMEOUT_MS = 1000;
/** How long an unknown key hash is answered without asking Redis again. */
export const UNKNOWN_KEY_CACHE_MS = 1000;
/** Most unknown key hashes remembered; the least recently seen goes first. */
export const UNKNOWN_KEY_CACHE_SIZE = 10_000;
/** Most lookups in flight at once; a miss beyond them is answered 503 without asking (many distinct unknown keys at once). */
export const MAX_LOOKUPS_IN_FLIGHT = 32;
/**
 * Compare-and-set rounds before a write gives up. Every round some writer of the key
 * wins, so N concurrent writers of one key all land within N rounds; admins are far
 * fewer than this.
 */
const MAX_WRITE_ATTEMPTS = 100;
export interface RedisKeyStoreOptions {
  /** Prefix of every key, e.g. `portcullis:`. */
  keyPrefix: string;
  /** Source of createdAt/revokedAt/rotatedAt and last-used times. */
  clock?: () => Date;
  /** Time between two checks of the version counter; default 1000. */
  reloadIntervalMs?: number;
  /** What the checks are timed by. Default the system's. */
  scheduler?: Scheduler;
  /** Delay between the first unflushed touch() and the write of the last-used times; default 5000. */
  lastUsedFlushMs?: number;
  /** Background failures: Redis unreachable (once per outage), a broken record (once per version), a failed flush. */
  onError?: (error: Error) => void;
  /** Where the keys live, for messages (e.g. `redis://10.0.0.5:6379/0`). */
  location?: string;
}

interface Mirror {
  version: string;
  byHash: Map<string, KeyRecord>;
  byId: Map<string, KeyRecord>;
}

export async function openRedisKeyStore(client: RedisClient, options: RedisKeyStoreOptions): Promise<KeyStore> {
  const keys = redisKeyStoreKeys(options.keyPrefix);
  const location = options.location ?? `Redis ${keys.records}`;
  const clock = options.clock ?? (() => new Date());
  const reloadIntervalMs = options.reloadIntervalMs ?? DEFAULT_RELOAD_INTERVAL_MS;
  const lastUsedFlushMs = options.lastUsedFlushMs ?? DEFAULT_LAST_USED_FLUSH_MS;
  const onError = options.onError ?? ((error: Error) => process.emitWarning(error));
  for (const [name, value] of [['reloadIntervalMs', reloadIntervalMs], ['lastUsedFlushMs', lastUsedFlushMs]] as const) {
    if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer; got ${value}.`);
  }

  let mirror: Mirror = { version: '', byHash: new Map(), byId: new Map() };
  let closed = false;
  let closing: Promise<void> | null = null;
  /** What onError last heard about, so an outage or a broken version is reported once. */
  let reported: string | null = null;
  let refreshChain: Promise<void> = Promise.resolve();
  let refreshQueued = false;
  const scheduler = options.scheduler ?? systemScheduler;
  /** Key hash -> when the "unknown" answer expires (monotonic ms); insertion order is recency. */
  const unknownKeys = new Map<string, number>();
  const lookups = new Map<string, Promise<KeyRecord | null>>();
  const lookupCounts: Record<KeyLookupResult, number> = { found: 0, unknown: 0, cached_unknown: 0, shed: 0, failed: 0 };
  const lookupBudget = createLookupBudget({ scheduler });

  function rememberUnknown(hash: string): void {
    unknownKeys.delete(hash);
    unknownKeys.set(hash, scheduler.monotonic() + UNKNOWN_KEY_CACHE_MS);
    if (unknownKeys.size > UNKNOWN_KEY_CACHE_SIZE) unknownKeys.delete(unknownKeys.keys().next().value as string);
  }

  /** One lookup of `hash` in Redis, bounded by LOOKUP_TIMEOUT_MS; null on unknown or revoked, rejects on timeout or error. */
  async function lookupHash(hash: string): Promise<KeyRecord | null> {
    let timer: ReturnType<Scheduler['setTimeout']> | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = scheduler.setTimeout(() => resolve('timeout'), LOOKUP_TIMEOUT_MS);
    });
    try {
      const reply = await Promise.race([client.evalScript(RECORD_BY_HASH_SCRIPT, [keys.byHash, keys.records], [hash]), timeout]);
      if (reply === 'timeout') {
        lookupCounts.failed++;
        throw lookupUnavailable();
      }
      const [id, json] = Array.isArray(reply) ? reply : [];
      const record = typeof id === 'string' && typeof json === 'string' ? parseStoredRecord(id, json, location) : null;
      if (record === null || record.hash !== hash || record.revokedAt !== null) {
        lookupCounts.unknown++;
        rememberUnknown(hash);
        return null;
      }
      lookupCounts.found++;
      // The mirror is behind: catch up now rather than at the next poll.
      refresh(false).catch((error: unknown) => report(error as Error));
      return record;
    } catch (error) {
      if (error instanceof StateUnavailableError) throw error;
      lookupCounts.failed++;
      report(error as Error);
      throw lookupUnavailable(error);
    } finally {
      if (timer !== undefined) scheduler.clearTimer(timer);
    }
  }

  function lookupUnavailable(cause?: unknown): StateUnavailableError {
    return new StateUnavailableError('lookup', cause, {
      message: 'The gateway could not check this API key with its shared state store just now; retry in a second.',
      retryAfterSeconds: 1,
    });
  }

  function report(error: Error): void {
    const what = error instanceof RedisUnavailableError ? 'unavailable' : `${error.name}:${error.message}`;
    if (what === reported) return;
    reported = what;
    onError(error);
  }

  /** A snapshot reply as a mirror; throws KeyFileInvalidError on any broken record (the old mirror stays). */
  function mirrorOf(reply: RedisReply): Mirror {
    const [version, flat] = Array.isArray(reply) ? reply : [];
    if (typeof version !== 'string' || !Array.isArray(flat) || flat.length % 2 !== 0) {
      throw new KeyStoreIoError('read the keys from', location, new Error('unexpected reply to the snapshot script'));
    }
    const byHash = new Map<string, KeyRecord>();
    const byId = new Map<string, KeyRecord>();
    for (let i = 0; i < flat.length; i += 2) {
      const id = flat[i];
      const json = flat[i + 1];
      if (typeof id !== 'string' || typeof json !== 'string') throw new KeyStoreIoError('read the keys from', location, new Error('a record is not a string'));
      const record = parseStoredRecord(id, json, location);
      if (byHash.has(record.hash)) throw new KeyFileInvalidError(location, `records ${byHash.get(record.hash)?.id} and ${id} have the same hash`, RECORD_ADVICE);
      byHash.set(record.hash, record);
      byId.set(id, record);
    }
    return { version, byHash, byId };
  }

  async function readSnapshot(): Promise<Mirror> {
    return mirrorOf(await client.evalScript(SNAPSHOT_SCRIPT, [keys.records, keys.version], []));
  }

  /** Re-reads the records when the version moved (or always, when forced). */
  async function refreshOnce(force: boolean): Promise<void> {
    if (!force) {
      const version = (await client.command(['GET', keys.version])) ?? '0';
      if (version === mirror.version) {
        reported = null;
        return;
      }
    }
    mirror = await readSnapshot();
    reported = null;
  }

  /** Refreshes run one at a time, in order: a refresh asked for after a write starts after it. */
  function refresh(force: boolean): Promise<void> {
    refreshQueued = true;
    const run = refreshChain.then(() => {
      refreshQueued = false;
      return refreshOnce(force);
    });
    refreshChain = run.catch(() => undefined);
    return run;
  }

  /** After our own write: the write succeeded, so a failed refresh is only reported. */
  async function refreshAfterWrite(): Promise<void> {
    await refresh(false).catch((error: unknown) => report(error as Error));
  }

  function ioError(operation: string, error: unknown): unknown {
    return error instanceof RedisUnavailableError ? new KeyStoreIoError(operation, location, error) : error;
  }

  /** PUT_RECORD_SCRIPT; the new version, 0 (lost the race) or -1 (hash taken). */
  async function putRecord(id: string, expected: string, record: KeyRecord, oldHash: string): Promise<number> {
    const reply = await client.evalScript(PUT_RECORD_SCRIPT, [keys.records, keys.byHash, keys.version], [id, expected, recordJson(record), oldHash, record.hash]);
    if (typeof reply !== 'number') throw new KeyStoreIoError('write', location, new Error('unexpected reply to the write script'));
    return reply;
  }

  /** Compare-and-set loop over the record `id`: `change` is a record function of key-records.ts, and may run several times. */
  const changes = keyChanges(changeKey, () => clock().toISOString());

  async function changeKey<T>(id: string, change: (current: KeyRecord) => { record: KeyRecord; result: T }, ahead?: WriteAhead): Promise<T> {
    if (closed) throw new KeyStoreClosedError();
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      let json: RedisReply;
      try {
        json = await client.command(['HGET', keys.records, id]);
      } catch (error) {
        throw ioError('read', error);
      }
      if (json === null) throw new KeyNotFoundError(String(id));
      if (typeof json !== 'string') throw new KeyStoreIoError('read', location, new Error('a record is not a string'));
      const current = parseStoredRecord(id, json, location);
      const { record, result } = change(current);
      if (ahead !== undefined) await ahead({ before: current, after: record });
      let version: number;
      try {
        version = await putRecord(id, json, record, current.hash);
      } catch (error) {
        throw ioError('write', error);
      }
      if (version > 0) {
        await refreshAfterWrite();
        return result;
      }
    }
    throw new KeyStoreIoError('write', location, new Error(`key ${id} kept changing during ${MAX_WRITE_ATTEMPTS} attempts`));
  }

  async function readLastUsed(): Promise<Map<string, string>> {
    const flat = await client.command(['HGETALL', keys.lastUsed]);
    if (!Array.isArray(flat)) throw new KeyStoreIoError('read', location, new Error('unexpected reply to HGETALL'));
    const entries: Record<string, unknown> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) entries[String(flat[i])] = flat[i + 1];
    return parseLastUsedFile(JSON.stringify({ version: 1, lastUsed: entries }), keys.lastUsed);
  }

  async function listKeys(): Promise<ListedKey[]> {
    if (closed) throw new KeyStoreClosedError();
    let snapshot: Mirror;
    let lastUsed: Map<string, string>;
    try {
      // Issued in the same turn: one round trip.
      [snapshot, lastUsed] = await Promise.all([readSnapshot(), readLastUsed()]);
    } catch (error) {
      throw ioError('read', error);
    }
    mirror = snapshot;
    const records = [...snapshot.byId.values()].sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1));
    return records.map((record) => {
      const stored = lastUsed.get(record.id);
      const pending = lastUsedBatch.pending(record.id);
      const lastUsedAt = pending === undefined ? (stored ?? null) : laterTime(stored, pending);
      return Object.freeze({ ...record, lastUsedAt });
    });
  }

  const lastUsedBatch = createLastUsedBatch({
    flushMs: lastUsedFlushMs,
    // The script keeps the later time per id, whichever instance flushes last.
    write: async (times) => {
      await client.evalScript(MERGE_LAST_USED_SCRIPT, [keys.lastUsed], [...times].flat());
    },
    onError: (error) => report(error),
  });


  try {
    mirror = await readSnapshot();
  } catch (error) {
    throw ioError('read the keys from', error);
  }
  const poll = scheduler.setInterval(() => {
    // A refresh already waiting covers this tick.
    if (refreshQueued || closed) return;
    refresh(false).catch((error: unknown) => report(error as Error));
  }, reloadIntervalMs);
  poll.unref();

  return {
    location,

    async create(name: string, input: KeySettingsInput = {}, ahead?: WriteAhead) {
      if (closed) throw new KeyStoreClosedError();
      const newKey = checkNewKey(name, input, clock().getTime());
      for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
        const key = generateApiKey();
        const record = createKeyRecord(newKeyId(), key, newKey, clock().toISOString());
        if (ahead !== undefined) await ahead({ before: null, after: record });
        let version: number;
        try {
          version = await putRecord(record.id, '', record, '');
        } catch (error) {
          throw ioError('write', error);
        }
        // 0: the id exists, -1: the hash does (2^-256): draw again.
        if (version > 0) {
          await refreshAfterWrite();
          return { key, record } satisfies IssuedKey;
        }
      }
      throw new KeyStoreIoError('write', location, new Error(`no free key id after ${MAX_WRITE_ATTEMPTS} attempts`));
    },

    list: listKeys,

    async get(id: string) {
      return requireRecord(id, (await listKeys()).find((k) => k.id === id));
    },

    async update(id: string, patch: KeyPatch, ahead?: WriteAhead) {
      const checked = checkPatch(patch);
      return changes.patch(id, checked, ahead);
    },

    rotate: (id: string, ahead?: WriteAhead): Promise<IssuedKey> => changes.rotate(id, ahead),

    revoke: (id: string, ahead?: WriteAhead) => changes.revoke(id, ahead),

    async reload() {
      if (closed) throw new KeyStoreClosedError();
      try {
        await refresh(true);
      } catch (error) {
        throw ioError('read the keys from', error);
      }
    },

    async prepareReload() {
      if (closed) throw new KeyStoreClosedError();
      let snapshot: Mirror;
      try {
        snapshot = await readSnapshot();
      } catch (error) {
        throw ioError('read the keys from', error);
      }
      return {
        commit() {
          // A poll may have adopted a newer version meanwhile: never go back to an older one.
          if (Number(snapshot.version) >= Number(mirror.version)) mirror = snapshot;
        },
      };
    },

    authenticate(rawKey: string) {
      if (closed || !isWellFormedApiKey(rawKey)) return null;
      const record = mirror.byHash.get(hashApiKey(rawKey));
      // Expiry is the caller's check, so it can say "expired" rather than "unknown".
      return record === undefined || record.revokedAt !== null ? null : record;
    },

    lookup(rawKey: string, client = ''): Promise<KeyRecord | null> {
      if (closed || !isWellFormedApiKey(rawKey)) return Promise.resolve(null);
      const hash = hashApiKey(rawKey);
      const known = mirror.byHash.get(hash);
      // Known here: active (the mirror caught up meanwhile) or revoked, never asked again.
      if (known !== undefined) return Promise.resolve(known.revokedAt === null ? known : null);
      const until = unknownKeys.get(hash);
      if (until !== undefined) {
        if (scheduler.monotonic() < until) {
          lookupCounts.cached_unknown++;
          return Promise.resolve(null);
        }
        unknownKeys.delete(hash);
      }
      let pending = lookups.get(hash);
      if (pending === undefined && (lookups.size >= MAX_LOOKUPS_IN_FLIGHT || lookupBudget.take(client) !== null)) {
        lookupCounts.shed++;
        return Promise.reject(lookupUnavailable());
      }
      if (pending === undefined) {
        pending = lookupHash(hash).finally(() => lookups.delete(hash));
        lookups.set(hash, pending);
      }
      return pending;
    },

    lookupCounts: () => ({ ...lookupCounts }),

    touch(id: string) {
      if (closed || !mirror.byId.has(id)) return;
      lastUsedBatch.note(id, clock().toISOString());
    },

    flushLastUsed: () => lastUsedBatch.flush(),

    close() {
      if (closing !== null) return closing;
      closed = true;
      scheduler.clearTimer(poll);
      // Last-used times are a convenience: a flush Redis cannot take is reported, not thrown.
      closing = lastUsedBatch.close().catch((error: unknown) => report(error as Error));
      return closing;
    },
  };
}
