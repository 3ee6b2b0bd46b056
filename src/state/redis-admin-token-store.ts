// The admin token store in Redis, shared by every gateway instance on it.
//
// Layout under prefix P (one hash tag, {tokens}, so one Cluster slot and the
// scripts below may touch them together), as the key store's (redis-key-layout.ts):
//   P{tokens}:records  hash    token id -> record JSON (the admin-tokens.json record format, checked as strictly)
//   P{tokens}:by-hash  hash    SHA-256 of the token -> token id (the lookup a request makes)
//   P{tokens}:version  string  counter, INCR'd by every create and revoke
// The token is never stored, only its SHA-256.
//
// Nothing is mirrored in memory: findByToken() asks Redis on every admin request
// (one script, one round trip), so a token revoked on any instance or by the CLI
// is refused by the next request everywhere. Changes are compare-and-set on the
// version counter: read every record, decide with the record functions of
// src/keys/admin-token.ts (the live-token limit among them), and store only if
// nobody changed anything meanwhile (else read again, at most MAX_WRITE_ATTEMPTS times).
import type { RedisClient } from '../redis/client.ts';
import type { RedisReply } from '../redis/resp.ts';
import { defineScript } from '../redis/script.ts';
import { AdminTokenError, AdminTokenFileInvalidError, AdminTokenNotFoundError } from '../keys/admin-token-errors.ts';
import { parseTokenRecord, storedTokenRecord } from '../keys/admin-token-file.ts';
import {
  checkNewToken,
  hashAdminToken,
  isWellFormedAdminToken,
  issueToken,
  revokeTokenRecord,
  tokenHashMatches,
  tokensToForget,
  type AdminTokenRecord,
} from '../keys/admin-token.ts';
import { KeyStoreIoError } from '../keys/errors.ts';
import { AuditLogError } from '../audit/audit-log.ts';
import type { AdminTokenStore, IssuedAdminToken, TokenWriteAhead } from './admin-token-store-port.ts';

/** Every round some writer wins; admins creating tokens at once are far fewer. */
const MAX_WRITE_ATTEMPTS = 100;

/** The version and every record, read at one instant. KEYS: records, version. */
const TOKEN_SNAPSHOT_SCRIPT = defineScript(`
return { redis.call('GET', KEYS[2]) or '0', redis.call('HGETALL', KEYS[1]) }
`);

/** The record of a token hash, or nil. KEYS: by-hash, records. ARGV: hash. Returns {id, json}. */
const FIND_SCRIPT = defineScript(`
local id = redis.call('HGET', KEYS[1], ARGV[1])
if not id then return false end
local json = redis.call('HGET', KEYS[2], id)
if not json then return false end
return { id, json }
`);

/**
 * Stores one record if the version is still the one read. KEYS: records, by-hash,
 * version. ARGV: 1 version read, 2 id, 3 record JSON, 4 its hash to index ('' = the
 * index stays), then pairs (id, hash) of records to forget. Returns the new
 * version, or 0 when something changed meanwhile.
 */
const PUT_SCRIPT = defineScript(`
if (redis.call('GET', KEYS[3]) or '0') ~= ARGV[1] then return 0 end
for i = 5, #ARGV, 2 do
  redis.call('HDEL', KEYS[1], ARGV[i])
  redis.call('HDEL', KEYS[2], ARGV[i + 1])
end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[2], ARGV[4], ARGV[2]) end
return redis.call('INCR', KEYS[3])
`);

export interface RedisAdminTokenStoreOptions {
  /** Prefix of every key, e.g. `portcullis:`. */
  keyPrefix: string;
  /** Where the tokens live, for messages (e.g. `redis://10.0.0.5:6379/0`). */
  location?: string;
}

export function redisAdminTokenKeys(keyPrefix: string): { records: string; byHash: string; version: string } {
  const base = `${keyPrefix}{tokens}`;
  return { records: `${base}:records`, byHash: `${base}:by-hash`, version: `${base}:version` };
}

function tokenRecordJson(record: AdminTokenRecord): string {
  return JSON.stringify(storedTokenRecord(record));
}

export function createRedisAdminTokenStore(client: RedisClient, options: RedisAdminTokenStoreOptions): AdminTokenStore {
  const keys = redisAdminTokenKeys(options.keyPrefix);
  const location = options.location ?? `Redis ${keys.records}`;

  /** Redis trouble as the store's I/O error (the admin API answers 503); the store's own errors pass. */
  async function call<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      // A write-ahead record that could not be appended stopped the change: its own error, not the store's.
      if (error instanceof AdminTokenError || error instanceof AuditLogError) throw error;
      throw new KeyStoreIoError(what, location, error);
    }
  }

  function parseStored(id: string, json: string): AdminTokenRecord {
    let value: unknown;
    try {
      value = JSON.parse(json) as unknown;
    } catch {
      throw new AdminTokenFileInvalidError(location, `record ${id} is not valid JSON`);
    }
    const record = parseTokenRecord(value, `record ${id}`, location);
    if (record.id !== id) throw new AdminTokenFileInvalidError(location, `record ${id} holds the id ${record.id}`);
    return record;
  }

  async function snapshot(): Promise<{ version: string; records: AdminTokenRecord[] }> {
    const reply: RedisReply = await client.evalScript(TOKEN_SNAPSHOT_SCRIPT, [keys.records, keys.version], []);
    const [version, flat] = Array.isArray(reply) ? reply : [];
    if (typeof version !== 'string' || !Array.isArray(flat) || flat.length % 2 !== 0) throw new Error('unexpected reply to the snapshot script');
    const records: AdminTokenRecord[] = [];
    for (let i = 0; i < flat.length; i += 2) {
      const id = flat[i];
      const json = flat[i + 1];
      if (typeof id !== 'string' || typeof json !== 'string') throw new Error('a record is not a string');
      records.push(parseStored(id, json));
    }
    // A hash has no order: creation order, as the file keeps it.
    records.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
    return { version, records };
  }

  /** Compare-and-set rounds until one lands. */
  async function change<T>(decide: (records: AdminTokenRecord[]) => { put: AdminTokenRecord; before: AdminTokenRecord | null; index: boolean; forget?: AdminTokenRecord[]; result: T }, ahead?: TokenWriteAhead): Promise<T> {
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const { version, records } = await snapshot();
      const { put, before, index, forget = [], result } = decide(records);
      if (ahead !== undefined) await ahead({ before, after: put });
      const args = [version, put.id, tokenRecordJson(put), index ? put.hash : '', ...forget.flatMap((r) => [r.id, r.hash])];
      const written = await client.evalScript(PUT_SCRIPT, [keys.records, keys.byHash, keys.version], args);
      if (written !== 0) return result;
    }
    throw new Error(`the tokens kept changing; gave up after ${MAX_WRITE_ATTEMPTS} attempts`);
  }

  return {
    location,
    async create(input, nowMs, ahead) {
      const checked = checkNewToken(input, nowMs);
      return call('write the admin tokens to', () =>
        change<IssuedAdminToken>((records) => {
          const issued = issueToken(checked, records, nowMs);
          return { put: issued.record, before: null, index: true, forget: tokensToForget(records, nowMs), result: issued };
        }, ahead),
      );
    },
    async list() {
      return call('read the admin tokens from', async () => (await snapshot()).records);
    },
    async revoke(id, nowMs, ahead) {
      return call('write the admin tokens to', () =>
        change((records) => {
          const found = records.find((r) => r.id === id);
          if (found === undefined) throw new AdminTokenNotFoundError(id);
          const revoked = revokeTokenRecord(found, nowMs);
          return { put: revoked, before: found, index: false, result: revoked };
        }, ahead),
      );
    },
    async findByToken(token) {
      if (!isWellFormedAdminToken(token)) return null;
      const hash = hashAdminToken(token);
      return call('read the admin tokens from', async () => {
        const reply = await client.evalScript(FIND_SCRIPT, [keys.byHash, keys.records], [hash]);
        if (reply === null) return null;
        const [id, json] = Array.isArray(reply) ? reply : [];
        if (typeof id !== 'string' || typeof json !== 'string') throw new Error('unexpected reply to the token lookup');
        const record = parseStored(id, json);
        return tokenHashMatches(record, hash) ? record : null;
      });
    },
  };
}
