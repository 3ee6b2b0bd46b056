// The shared audit chain against a real redis-server, appended by two
// instances (two clients, two logs) at once, as two gateways would.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { AuditVerification } from '../../src/audit/audit-chain.ts';
import { AuditSecretError, canonicalJson, chainRecord, parseRecordLine, recordHash, recordLine } from '../../src/audit/audit-record.ts';
import type { RedisClient } from '../../src/redis/client.ts';
import { createAuditTrail } from '../../src/audit/audit-trail.ts';
import { createLogger } from '../../src/log/logger.ts';
import { auditedKeyStore } from '../../src/state/audited-key-store.ts';
import { createRedisAuditLog, redisAuditKeys } from '../../src/audit/redis-audit-log.ts';
import { openRedisKeyStore } from '../../src/state/redis-key-store.ts';
import { useRedisPair, type SharedRedis } from '../support/redis-server.ts';
import { keyCreate } from './audit-fixtures.ts';

let redis: SharedRedis;
let clientA: RedisClient;
let clientB: RedisClient;

useRedisPair((pair) => ({ redis, clientA, clientB } = pair));

function pair() {
  const keyPrefix = `a${randomUUID().slice(0, 8)}:`;
  const location = redis.url;
  return {
    a: createRedisAuditLog(clientA, { keyPrefix, location }),
    b: createRedisAuditLog(clientB, { keyPrefix, location }),
    keys: redisAuditKeys(keyPrefix),
  };
}

function broken(result: AuditVerification) {
  assert.equal(result.ok, false, result.message);
  return result as Exclude<AuditVerification, { ok: true }>;
}

async function lines(key: string): Promise<string[]> {
  return (await clientA.command(['LRANGE', key, 0, -1])) as string[];
}

describe('the Redis audit chain', () => {
  test('two instances appending 300 records each at once make one chain, no gaps', async () => {
    const { a, b, keys } = pair();
    const appendMany = (log: typeof a, name: string) =>
      Promise.all(Array.from({ length: 300 }, (_, i) => log.append(keyCreate(i, { actor: { kind: 'cli', id: name } }))));
    const [fromA, fromB] = await Promise.all([appendMany(a, 'instance-a'), appendMany(b, 'instance-b')]);
    const seqs = [...fromA, ...fromB].map((r) => r.seq).sort((x, y) => x - y);
    assert.deepEqual(seqs, Array.from({ length: 600 }, (_, i) => i + 1));
    const result = await b.verify();
    assert.equal(result.ok, true, result.message);
    assert.equal(result.ok && `${result.count} ${result.firstSeq} ${result.lastSeq}`, '600 1 600');
    const stored = await lines(keys.log);
    assert.equal(stored.length, 600);
    assert.equal(await clientA.command(['GET', keys.head]), `600 ${parseRecordLine(stored[599] as string).hash}`);
    assert.deepEqual(await a.head(), { seq: 600, hash: parseRecordLine(stored[599] as string).hash });
    // Every record an append resolved with is the one stored at its seq.
    for (const record of fromA) assert.equal(stored[record.seq - 1], canonicalJson(record));
  });

  test('list: newest first, filtered, paged by before across LRANGE pages', async () => {
    const { a } = pair();
    for (let i = 1; i <= 250; i++) await a.append(keyCreate(i, i % 50 === 0 ? { action: 'key.revoke' } : {}));
    const revokes = await a.list({ action: 'key.revoke' });
    assert.deepEqual(revokes.records.map((r) => r.seq), [250, 200, 150, 100, 50]);
    assert.equal(revokes.nextBefore, null);
    const page = await a.list({ limit: 120 });
    assert.equal(page.records[0]?.seq, 250);
    assert.equal(page.records.at(-1)?.seq, 131);
    assert.equal(page.nextBefore, 131);
    const next = await a.list({ limit: 200, before: 131 });
    assert.deepEqual([next.records[0]?.seq, next.records.at(-1)?.seq, next.records.length, next.nextBefore], [130, 1, 130, null]);
    assert.deepEqual((await a.list({ key: 'key_0007' })).records.map((r) => r.seq), [7]);
  });

  test('an edited record (LSET) fails verify naming its position and seq', async () => {
    const { a, keys } = pair();
    for (let i = 1; i <= 5; i++) await a.append(keyCreate(i));
    const stored = await lines(keys.log);
    await clientA.command(['LSET', keys.log, 2, (stored[2] as string).replace('"app-3"', '"evil"')]);
    const result = broken(await a.verify());
    assert.deepEqual([result.reason, result.file, result.line, result.seq], ['hash_mismatch', `redis list ${keys.log}`, 3, 3]);
  });

  test('an edited record with its hash recomputed fails at the next one', async () => {
    const { a, keys } = pair();
    for (let i = 1; i <= 5; i++) await a.append(keyCreate(i));
    const record = parseRecordLine((await lines(keys.log))[2] as string);
    const forged = { ...record, source: 'elsewhere' };
    forged.hash = recordHash(forged);
    await clientA.command(['LSET', keys.log, 2, canonicalJson(forged)]);
    const result = broken(await a.verify());
    assert.deepEqual([result.reason, result.seq], ['prev_mismatch', 4]);
  });

  test('a deleted record (LREM) fails verify (seq_gap)', async () => {
    const { a, keys } = pair();
    for (let i = 1; i <= 5; i++) await a.append(keyCreate(i));
    await clientA.command(['LREM', keys.log, 1, (await lines(keys.log))[1] as string]);
    const result = broken(await a.verify());
    assert.deepEqual([result.reason, result.line, result.seq], ['seq_gap', 2, 3]);
  });

  test('a truncated chain (RPOP) fails verify: the head key is ahead', async () => {
    const { a, keys } = pair();
    for (let i = 1; i <= 5; i++) await a.append(keyCreate(i));
    await clientA.command(['RPOP', keys.log]);
    await clientA.command(['RPOP', keys.log]);
    const result = broken(await a.verify());
    assert.equal(result.reason, 'missing_records');
    assert.match(result.message, /records 4 to 5 were removed/);
  });

  test('retention (LTRIM of the oldest) passes verify, noted; --from-genesis refuses it', async () => {
    const { a, keys } = pair();
    for (let i = 1; i <= 5; i++) await a.append(keyCreate(i));
    await clientA.command(['LTRIM', keys.log, 2, -1]);
    const result = await a.verify();
    assert.equal(result.ok && result.trimmed, true, result.message);
    assert.equal(broken(await a.verify({ fromGenesis: true })).reason, 'missing_records');
    assert.deepEqual((await a.list({ before: 5 })).records.map((r) => r.seq), [4, 3]);
  });

  test('a lost head key: every record is past the head; verify reports it and appends refuse', async () => {
    const { a, keys } = pair();
    for (let i = 1; i <= 3; i++) await a.append(keyCreate(i));
    await clientA.command(['DEL', keys.head]);
    const result = broken(await a.verify());
    assert.deepEqual([result.reason, result.line, result.seq], ['missing_head', null, 3]);
    assert.match(result.message, new RegExp(`^the chain \\(seq 3\\): the head key ${keys.head.replace(/[{}]/g, '\\$&')} is missing, but the chain has records \\(up to seq 3\\)`));
    const last = (await a.list({ limit: 1 })).records[0];
    await assert.rejects(a.append(keyCreate(4)), (error: unknown) => error instanceof Error && error.message.includes(`set it: SET ${keys.head} "3 ${last?.hash}" (docs/audit.md, "A missing head")`));
    assert.equal(await clientA.command(['LLEN', keys.log]), 3);
  });

  for (const forged of [1, 2]) {
    test(`${forged} record${forged === 1 ? '' : 's'} pushed (RPUSH) past the head key: verify fails, appends and the start check refuse`, async () => {
      const { a, keys } = pair();
      let last = await a.append(keyCreate(1));
      for (let i = 0; i < forged; i++) {
        last = chainRecord(keyCreate(100 + i, { target: 'key_forged' }), last);
        await clientA.command(['RPUSH', keys.log, recordLine(last)]);
      }
      const result = broken(await a.verify());
      assert.deepEqual([result.reason, result.line, result.seq], ['past_head', 2, 2]);
      await assert.rejects(a.append(keyCreate(9)), /is not extended: record(s)? 2 .*past the stored head \(seq 1\)/);
      await assert.rejects(a.checkTail(), /past the stored head \(seq 1\)/);
      assert.equal(await clientA.command(['LLEN', keys.log]), 1 + forged);
    });
  }

  test('a write-ahead record stays in the open set until settled', async () => {
    const { a, b } = pair();
    await a.append(keyCreate(1));
    const ahead = await a.append(keyCreate(2), { open: true });
    assert.deepEqual(await b.openSeqs(), [2]);
    await b.settle(ahead.seq);
    assert.deepEqual(await a.openSeqs(), []);
    assert.deepEqual(await a.checkTail(), { seq: 2, hash: ahead.hash });
  });

  test('write-ahead key changes on Redis: two instances change one key at once; every record is settled, a lost compare-and-set closed by change.incomplete', async () => {
    const { a, b, keys } = pair();
    const keyPrefix = keys.log.slice(0, keys.log.indexOf('{audit}'));
    const storeA = await openRedisKeyStore(clientA, { keyPrefix, reloadIntervalMs: 3_600_000 });
    const storeB = await openRedisKeyStore(clientB, { keyPrefix, reloadIntervalMs: 3_600_000 });
    const logger = createLogger({ level: 'error', write: () => {} });
    const who = { actor: { kind: 'cli', id: 'alice' }, source: 'cli' } as const;
    const onA = auditedKeyStore(storeA, createAuditTrail({ logger, log: a }), who);
    const onB = auditedKeyStore(storeB, createAuditTrail({ logger, log: b }), who);
    const { record } = await onA.create('shared');
    await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? onA : onB).update(record.id, { name: `name-${i}` })));
    assert.deepEqual(await a.openSeqs(), []);
    const chain = (await a.list({ limit: 1000 })).records;
    const closed = new Set(chain.filter((r) => r.action === 'change.incomplete').map((r) => (r.detail as { seq: number }).seq));
    // Each update has one record that stands; the tries that lost are closed.
    assert.equal(chain.filter((r) => r.action === 'key.update' && !closed.has(r.seq)).length, 10);
    assert.equal(chain.filter((r) => r.action === 'key.update').length, 10 + closed.size);
    assert.equal((await a.verify()).ok, true);
    await storeA.close();
    await storeB.close();
  });

  test('an event with a secret is refused and nothing is written', async () => {
    const { a, keys } = pair();
    await assert.rejects(a.append(keyCreate(1, { detail: { token: 'x' } })), AuditSecretError);
    assert.equal(await clientA.command(['LLEN', keys.log]), 0);
  });
});
