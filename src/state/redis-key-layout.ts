// How the Redis key store lays out its data: the key names, the record encoding (the
// keys.json record format, parsed as strictly) and the Lua scripts that read and
// compare-and-set records. The I/O around them is in redis-key-store.ts.
import { defineScript } from '../redis/script.ts';
import { KeyFileInvalidError } from '../keys/errors.ts';
import { KEY_FILE_VERSION, parseKeysFile, storedRecord, type KeyRecord } from '../keys/store-format.ts';

export const RECORD_ADVICE = 'Nothing was changed in Redis; repair the record (HSET) or restore it from a backup.';

interface RedisKeyStoreKeys {
  records: string;
  byHash: string;
  version: string;
  lastUsed: string;
}

export function redisKeyStoreKeys(keyPrefix: string): RedisKeyStoreKeys {
  const base = `${keyPrefix}{keys}`;
  return { records: `${base}:records`, byHash: `${base}:by-hash`, version: `${base}:version`, lastUsed: `${base}:last-used` };
}

/** The version and every record, read at one instant. KEYS: records, version. */
export const SNAPSHOT_SCRIPT = defineScript(`
return { redis.call('GET', KEYS[2]) or '0', redis.call('HGETALL', KEYS[1]) }
`);

/** One record by the SHA-256 of its raw key, or nil. KEYS: by-hash, records. ARGV: 1 hash. */
export const RECORD_BY_HASH_SCRIPT = defineScript(`
local id = redis.call('HGET', KEYS[1], ARGV[1])
if not id then return false end
return { id, redis.call('HGET', KEYS[2], id) or false }
`);

/**
 * Compare-and-set of one record. KEYS: records, by-hash, version. ARGV: 1 id,
 * 2 the record JSON read ('' = must not exist), 3 new JSON, 4 old hash ('' = none),
 * 5 new hash. Returns the new version; 0 when the record changed meanwhile (or the id
 * exists, for a create); -1 when another key already has the new hash.
 */
export const PUT_RECORD_SCRIPT = defineScript(`
local current = redis.call('HGET', KEYS[1], ARGV[1])
if ARGV[2] == '' then
  if current then return 0 end
elseif current ~= ARGV[2] then
  return 0
end
if ARGV[5] ~= ARGV[4] then
  if redis.call('HEXISTS', KEYS[2], ARGV[5]) == 1 then return -1 end
  if ARGV[4] ~= '' then redis.call('HDEL', KEYS[2], ARGV[4]) end
  redis.call('HSET', KEYS[2], ARGV[5], ARGV[1])
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return redis.call('INCR', KEYS[3])
`);

/** Keeps the later of the stored and the given time per id (ISO times compare as strings). KEYS: last-used. ARGV: id, time, ... */
export const MERGE_LAST_USED_SCRIPT = defineScript(`
for i = 1, #ARGV, 2 do
  local current = redis.call('HGET', KEYS[1], ARGV[i])
  if (not current) or current < ARGV[i + 1] then redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
return #ARGV / 2
`);

/** A record as stored: the fields of keys.json in its order. */
export function recordJson(r: KeyRecord): string {
  return JSON.stringify(storedRecord(r));
}

/** One stored record, checked by the keys.json parser; KeyFileInvalidError naming the id otherwise. */
export function parseStoredRecord(id: string, json: string, location: string): KeyRecord {
  const fail = (problem: string, cause?: unknown): never => {
    throw new KeyFileInvalidError(location, `record ${id}: ${problem}`, RECORD_ADVICE, { cause });
  };
  let value: unknown;
  try {
    value = JSON.parse(json) as unknown;
  } catch (cause) {
    return fail('is not valid JSON', cause);
  }
  let records: KeyRecord[] = [];
  try {
    records = parseKeysFile(JSON.stringify({ version: KEY_FILE_VERSION, keys: [value] }), location);
  } catch (error) {
    if (error instanceof KeyFileInvalidError) fail(error.problem.replace(/^keys\[0\]\.?/, ''), error);
    throw error;
  }
  const record = records[0];
  if (record === undefined || record.id !== id) return fail(`is stored under the id ${id} but holds ${JSON.stringify(record?.id)}`);
  return record;
}
