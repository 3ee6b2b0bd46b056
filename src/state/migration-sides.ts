// The two sides `portcullis state migrate` moves between, as MigrationSides:
// a data directory, and a key prefix in one Redis database.
import { createFileAuditLog } from '../audit/file-audit-log.ts';
import type { RedisClient } from '../redis/client.ts';
import { createFileAuditWriter, fileAuditLines, readFileState, stateFilesIn, writeFileState } from './migration-file.ts';
import { createRedisAuditWriter, keysUnder, readRedisState, redisAuditLines, servingSignsIn, writeRedisState } from './migration-redis.ts';
import { createRedisAuditLog } from '../audit/redis-audit-log.ts';
import type { MigrationSide } from './state-migration.ts';

/** Keys under a prefix named in a refusal, before "and N more". */
const KEYS_NAMED = 3;

export function fileMigrationSide(dataDir: string, options: { rotateBytes?: number; servingSigns?: () => Promise<string[]> } = {}): MigrationSide {
  return {
    kind: 'file',
    description: `the data directory ${dataDir}`,
    async occupied() {
      const files = await stateFilesIn(dataDir);
      return files.length === 0 ? null : files.join(', ');
    },
    servingSigns: options.servingSigns ?? (async () => []),
    read: () => readFileState(dataDir),
    auditLines: () => fileAuditLines(dataDir),
    audit: createFileAuditLog({ dataDir, ...(options.rotateBytes === undefined ? {} : { rotateBytes: options.rotateBytes }) }),
    write: (snapshot) => writeFileState(dataDir, snapshot),
    auditWriter: () => createFileAuditWriter(dataDir),
    cleanupAdvice: `remove keys.json, keys-last-used.json, admin-tokens.json, usage.json, budgets.json, audit.jsonl and audit.head from ${dataDir}`,
  };
}

export function redisMigrationSide(client: RedisClient, location: string, keyPrefix: string): MigrationSide {
  const description = `Redis ${location} (key prefix ${keyPrefix})`;
  return {
    kind: 'redis',
    description,
    async occupied() {
      const keys = await keysUnder(client, keyPrefix);
      if (keys.length === 0) return null;
      const named = keys.slice(0, KEYS_NAMED).join(', ');
      return `${keys.length === 1 ? '1 key' : `${keys.length} keys`} under the prefix: ${named}${keys.length > KEYS_NAMED ? `, and ${keys.length - KEYS_NAMED} more` : ''}`;
    },
    async servingSigns(nowMs) {
      return servingSignsIn(client, keyPrefix, await keysUnder(client, keyPrefix), nowMs);
    },
    async read() {
      return readRedisState(client, keyPrefix, location, await keysUnder(client, keyPrefix));
    },
    auditLines: () => redisAuditLines(client, keyPrefix),
    audit: createRedisAuditLog(client, { keyPrefix, location }),
    write: (snapshot, nowMs) => writeRedisState(client, keyPrefix, snapshot, nowMs),
    auditWriter: () => createRedisAuditWriter(client, keyPrefix),
    cleanupAdvice: `delete the keys under the prefix (redis-cli -u ${location} --scan --pattern '${keyPrefix}*' | xargs redis-cli -u ${location} del)`,
  };
}
