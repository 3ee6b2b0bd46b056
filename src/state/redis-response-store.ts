// The response store (response-store-port.ts) in Redis, shared by every instance.
//
// Layout under prefix P (one hash tag, so a cluster keeps it on one slot and the
// scripts may touch every key):
//   P{responses}:r:<id>     hash    keyId, record (the record's JSON); PEXPIREd at its deadline
//   P{responses}:expiry     zset    id -> expiresAt: the order expired records leave in
//   P{responses}:bytes      hash    id -> the record's bytes
//   P{responses}:total      string  the bytes of every record in :bytes
// A put is one script: it removes what has expired by the gateway's clock (oldest
// first), refuses when the new record would not fit, then stores it; a delete is one
// script that checks the owner first. Reads compare the owner and the deadline in the
// gateway, so another key and an expired record read the same: null.
import type { RedisClient } from '../redis/client.ts';
import { RedisUnavailableError } from '../redis/errors.ts';
import { defineScript } from '../redis/script.ts';
import { DuplicateResponseIdError, ResponseStoreFullError, StateUnavailableError } from './errors.ts';
import { checkRecordBounds, conversationOf, parseRecord, recordJson, type ResponseStore, type ResponseStoreLimits, type StoredResponse } from './response-store-port.ts';
import type { Scheduler } from '../time/scheduler.ts';

interface RedisResponseStoreOptions {
  keyPrefix: string;
  scheduler: Scheduler;
  limits: ResponseStoreLimits;
  /** A stored record that is not what this store writes: reported, read as absent. */
  onProblem?: (message: string) => void;
}

interface RedisResponseKeys {
  record(id: string): string;
  expiry: string;
  bytes: string;
  total: string;
}

export function redisResponseKeys(keyPrefix: string): RedisResponseKeys {
  const base = `${keyPrefix}{responses}`;
  return { record: (id) => `${base}:r:${id}`, expiry: `${base}:expiry`, bytes: `${base}:bytes`, total: `${base}:total` };
}

/**
 * KEYS: record, expiry, bytes, total. ARGV: 1 id, 2 keyId, 3 JSON, 4 bytes,
 * 5 expiresAt, 6 now, 7 ttl ms, 8 maxTotalBytes. Returns 1 stored, 0 full, -1 the id exists.
 */
const PUT_SCRIPT = defineScript(`
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[6])
for _, id in ipairs(due) do
  local b = tonumber(redis.call('HGET', KEYS[3], id) or '0')
  redis.call('HDEL', KEYS[3], id)
  redis.call('ZREM', KEYS[2], id)
  redis.call('DECRBY', KEYS[4], b)
end
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
local total = tonumber(redis.call('GET', KEYS[4]) or '0')
if total + tonumber(ARGV[4]) > tonumber(ARGV[8]) then return 0 end
redis.call('HSET', KEYS[1], 'keyId', ARGV[2], 'record', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[7])
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[4])
redis.call('INCRBY', KEYS[4], ARGV[4])
return 1
`);

/** KEYS: record, expiry, bytes, total. ARGV: 1 id, 2 keyId. Returns 1 deleted, 0 not this key's (or absent). */
const DELETE_SCRIPT = defineScript(`
if redis.call('HGET', KEYS[1], 'keyId') ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
local b = tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '0')
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('DECRBY', KEYS[4], b)
return 1
`);

export function createRedisResponseStore(client: RedisClient, options: RedisResponseStoreOptions): ResponseStore {
  const { scheduler, limits } = options;
  const keys = redisResponseKeys(options.keyPrefix);
  const onProblem = options.onProblem ?? ((message: string) => process.emitWarning(message));
  const scriptKeys = (id: string): string[] => [keys.record(id), keys.expiry, keys.bytes, keys.total];

  /** Redis away is the state backend's 503; anything else (a refused script) stays itself. */
  async function call<T>(operation: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof RedisUnavailableError) throw new StateUnavailableError(operation, error);
      throw error;
    }
  }

  async function get(id: string, keyId: string): Promise<StoredResponse | null> {
    const reply = await call('responseGet', () => client.command(['HMGET', keys.record(id), 'keyId', 'record']));
    if (!Array.isArray(reply) || reply[0] !== keyId || typeof reply[1] !== 'string') return null;
    const record = parseRecord(reply[1]);
    if (record === null || record.id !== id || record.keyId !== keyId) {
      onProblem(`response store: ${keys.record(id)} does not hold a stored response; it is left out`);
      return null;
    }
    return scheduler.now() >= record.expiresAt ? null : record;
  }

  return {
    limits,
    async put(record) {
      const { json, bytes } = recordJson(record);
      checkRecordBounds(record, bytes, limits);
      const nowMs = scheduler.now();
      if (record.expiresAt <= nowMs) return;
      const reply = await call('responsePut', () =>
        client.evalScript(PUT_SCRIPT, scriptKeys(record.id), [record.id, record.keyId, json, bytes, record.expiresAt, nowMs, record.expiresAt - nowMs, limits.maxTotalBytes]),
      );
      if (reply === 0) throw new ResponseStoreFullError();
      if (reply === -1) throw new DuplicateResponseIdError(record.id);
    },
    get,
    async delete(id, keyId) {
      // An expired record the script would still find is not this key's to delete any more.
      if ((await get(id, keyId)) === null) return false;
      return (await call('responseDelete', () => client.evalScript(DELETE_SCRIPT, scriptKeys(id), [id, keyId]))) === 1;
    },
    async resolveConversation(previousId, keyId) {
      const record = await get(previousId, keyId);
      return record === null ? null : conversationOf(record, limits);
    },
    close: () => Promise.resolve(),
  };
}
