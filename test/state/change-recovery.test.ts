// What the start does with write-ahead key records a crash left open: the
// verdict of each against the store (keyChangeVerdict, pure), and
// recoverAuditChain over a real file log and key store in each crash state:
// recorded and not written, recorded and written but not settled, announced
// and never recorded; plus the head logged, and a forged tail refused.
import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import fsPromises from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { headJson } from '../../src/audit/audit-head.ts';
import { AuditLogError } from '../../src/audit/audit-log.ts';
import { chainRecord, recordLine, type AuditRecord } from '../../src/audit/audit-record.ts';
import { createAuditTrail } from '../../src/audit/audit-trail.ts';
import { createFileAuditLog } from '../../src/audit/file-audit-log.ts';
import { createLogger } from '../../src/log/logger.ts';
import { auditedKeyStore, auditKeyView } from '../../src/state/audited-key-store.ts';
import { openKeyStore } from '../../src/state/file-key-store.ts';
import { adminTokenAuditFields, type AdminTokenRecord } from '../../src/keys/admin-token.ts';
import { KeyStoreIoError } from '../../src/keys/errors.ts';
import { FileIoError } from '../../src/files/errors.ts';
import { RedisUnavailableError } from '../../src/redis/errors.ts';
import { IN_FLIGHT_MS, keyChangeVerdict, recoverAuditChain, resolveOpenChanges, tokenChangeVerdict } from '../../src/state/change-recovery.ts';
import { openFileAdminTokenStore } from '../../src/state/file-admin-token-store.ts';
import type { KeyRecord, KeyStore } from '../../src/state/key-store-port.ts';
import { freshPath, memoryTempDir } from '../support/temp-dir.ts';

const root = memoryTempDir('key-recovery');
const NOW = Date.parse('2026-11-28T10:00:00.000Z');
const WHO = { actor: { kind: 'cli', id: 'alice' }, source: 'cli' } as const;
const NOT_WRITTEN = 'the process stopped after recording the change and before writing it';

function key(overrides: Partial<KeyRecord> = {}): KeyRecord {
  return {
    id: 'key_AAAAAAAAAAAAAAAA',
    name: 'app',
    prefix: 'pcl_abcd1234',
    hash: 'f'.repeat(64),
    createdAt: '2026-11-28T09:00:00.000Z',
    expiresAt: null,
    allowedAliases: null,
    limits: { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null, tokenBudget: null, costBudget: null },
    guard: null,
    revokedAt: null,
    rotatedAt: null,
    ...overrides,
  } as KeyRecord;
}

function recordOf(action: AuditRecord['action'], after: KeyRecord | null): AuditRecord {
  return chainRecord(
    { time: '2026-11-28T10:00:00.000Z', ...WHO, action, target: 'key_AAAAAAAAAAAAAAAA', before: null, after: after === null ? null : auditKeyView(after, NOW) },
    { seq: 6, hash: '0'.repeat(64) },
  );
}

describe('keyChangeVerdict', () => {
  const current = key();
  const cases: Array<[string, AuditRecord, KeyRecord | null, ReturnType<typeof keyChangeVerdict>]> = [
    ['a create whose key exists: made', recordOf('key.create', current), current, { made: true }],
    ['a create whose key does not exist: not made', recordOf('key.create', current), null, { made: false, reason: `the key is not in the store: ${NOT_WRITTEN}` }],
    ['an update the store holds: made (status aside)', recordOf('key.update', key({ name: 'renamed', expiresAt: '2026-11-28T09:30:00.000Z' })), key({ name: 'renamed', expiresAt: '2026-11-28T09:30:00.000Z' }), { made: true }],
    ['an update the store does not hold: not made', recordOf('key.update', key({ name: 'renamed' })), current, { made: false, reason: `the key in the store is not as this record's after: ${NOT_WRITTEN}` }],
    ['a rotate the store holds: made', recordOf('key.rotate', key({ prefix: 'pcl_new00000', rotatedAt: '2026-11-28T10:00:00.000Z' })), key({ prefix: 'pcl_new00000', rotatedAt: '2026-11-28T10:00:00.000Z', hash: 'e'.repeat(64) }), { made: true }],
    ['a rotate the store does not hold: not made', recordOf('key.rotate', key({ prefix: 'pcl_new00000', rotatedAt: '2026-11-28T10:00:00.000Z' })), current, { made: false, reason: `the key in the store is not as this record's after: ${NOT_WRITTEN}` }],
    ['a revoke the store holds: made', recordOf('key.revoke', key({ revokedAt: '2026-11-28T10:00:00.000Z' })), key({ revokedAt: '2026-11-28T10:00:00.000Z' }), { made: true }],
    ['a revoke the store does not hold: not made', recordOf('key.revoke', key({ revokedAt: '2026-11-28T10:00:00.000Z' })), current, { made: false, reason: `the key in the store is not as this record's after: ${NOT_WRITTEN}` }],
    ['a change to a key that is gone: not made', recordOf('key.revoke', key({ revokedAt: '2026-11-28T10:00:00.000Z' })), null, { made: false, reason: 'the key is not in the store' }],
    ['another action: cannot be checked', recordOf('token.create', null), null, { made: false, reason: 'a token.create record cannot be checked against the key store' }],
  ];
  for (const [name, record, stored, verdict] of cases) {
    test(name, () => assert.deepEqual(keyChangeVerdict(record, stored), verdict));
  }
});

describe('tokenChangeVerdict', () => {
  const token = {
    id: 'tok_AAAAAAAAAAAAAAAA',
    name: 'ci',
    prefix: 'pca_abcd',
    hash: 'f'.repeat(64),
    scopes: ['keys'],
    createdAt: '2026-11-28T09:00:00.000Z',
    expiresAt: '2026-12-28T09:00:00.000Z',
    revokedAt: null,
    createdBy: 'cli:alice',
  } as unknown as AdminTokenRecord;
  const revoked = { ...token, revokedAt: '2026-11-28T10:00:00.000Z' } as AdminTokenRecord;
  const tokenRecord = (action: AuditRecord['action'], after: AdminTokenRecord): AuditRecord =>
    chainRecord({ time: '2026-11-28T10:00:00.000Z', ...WHO, action, target: after.id, before: null, after: adminTokenAuditFields(after) }, { seq: 6, hash: '0'.repeat(64) });
  const cases: Array<[string, AuditRecord, AdminTokenRecord | null, ReturnType<typeof tokenChangeVerdict>]> = [
    ['a create whose token exists: made', tokenRecord('token.create', token), token, { made: true }],
    ['a create whose token does not exist: not made', tokenRecord('token.create', token), null, { made: false, reason: `the token is not in the store: ${NOT_WRITTEN}` }],
    ['a revoke the store holds: made', tokenRecord('token.revoke', revoked), revoked, { made: true }],
    ['a revoke the store does not hold: not made', tokenRecord('token.revoke', revoked), token, { made: false, reason: `the token in the store is not as this record's after: ${NOT_WRITTEN}` }],
    ['a revoke of a token that is gone: not made', tokenRecord('token.revoke', revoked), null, { made: false, reason: 'the token is not in the store' }],
  ];
  for (const [name, record, stored, verdict] of cases) {
    test(name, () => assert.deepEqual(tokenChangeVerdict(record, stored), verdict));
  }
});

function setUp() {
  const dataDir = freshPath(root, 'd');
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>), clock: () => new Date(NOW) });
  const log = createFileAuditLog({ dataDir, onProblem: (message) => logger.warn(message) });
  const keys = openKeyStore(dataDir, { watch: false });
  const trail = createAuditTrail({ logger, log, clock: () => NOW });
  return { dataDir, lines, logger, log, keys, trail, recover: () => recoverAuditChain({ log, keys, trail, logger, clock: () => NOW }) };
}

describe('recoverAuditChain', () => {
  test('nothing open: the head is logged and nothing appended', async () => {
    const { log, keys, trail, lines, recover } = setUp();
    const { record } = await auditedKeyStore(keys, trail, WHO, () => NOW).create('fine');
    lines.length = 0;
    assert.deepEqual(await recover(), { made: [], notMade: [], missing: [], young: [] });
    const head = await log.head();
    assert.deepEqual(lines, [{ time: '2026-11-28T10:00:00.000Z', level: 'info', msg: 'audit chain head', seq: 1, hash: head.hash, location: log.location }]);
    assert.equal((await log.list({})).records[0]?.target, record.id);
    await keys.close();
  });

  test('recorded, not written (killed between the record and keys.json): a change.incomplete record names it, and it is settled', async () => {
    const { log, keys, trail, recover } = setUp();
    // The hook records and then the process "dies": the write never happens.
    const died = new Error('killed');
    await assert.rejects(
      keys.create('lost', {}, async ({ after }) => {
        await log.append({ time: '2026-11-28T10:00:00.000Z', ...WHO, action: 'key.create', target: after.id, before: null, after: auditKeyView(after, NOW) }, { open: true });
        throw died;
      }),
      died,
    );
    assert.deepEqual(await keys.list(), []);
    assert.deepEqual(await log.openSeqs(), [1]);
    const [intent] = (await log.list({})).records;
    assert.deepEqual(await recover(), { made: [], notMade: [1], missing: [], young: [] });
    assert.deepEqual(await log.openSeqs(), []);
    const [outcome] = (await log.list({})).records;
    assert.deepEqual(
      { seq: outcome?.seq, actor: outcome?.actor, source: outcome?.source, action: outcome?.action, target: outcome?.target, detail: outcome?.detail },
      { seq: 2, actor: { kind: 'system', id: 'serve' }, source: 'start', action: 'change.incomplete', target: intent?.target, detail: { seq: 1, action: 'key.create', reason: `the key is not in the store: ${NOT_WRITTEN}` } },
    );
    assert.equal((await log.verify()).ok, true);
    // A second start finds nothing open.
    assert.deepEqual(await recover(), { made: [], notMade: [], missing: [], young: [] });
    await keys.close();
  });

  test('recorded and written, not settled (killed after keys.json): the record stands, nothing appended', async () => {
    const { log, keys, lines, recover } = setUp();
    const { record } = await keys.create('kept', {}, async ({ after }) => {
      await log.append({ time: '2026-11-28T10:00:00.000Z', ...WHO, action: 'key.create', target: after.id, before: null, after: auditKeyView(after, NOW) }, { open: true });
    });
    assert.deepEqual(await log.openSeqs(), [1]);
    lines.length = 0;
    assert.deepEqual(await recover(), { made: [1], notMade: [], missing: [], young: [] });
    assert.deepEqual(await log.openSeqs(), []);
    assert.equal((await log.head()).seq, 1);
    assert.deepEqual(lines[1], { time: '2026-11-28T10:00:00.000Z', level: 'warn', msg: 'audit: a change recorded before a crash was made; its record stands', seq: 1, action: 'key.create', target: record.id });
    await keys.close();
  });

  test('a crash after the record and before the head: the record is adopted, then resolved', async () => {
    const { dataDir, log, keys, recover } = setUp();
    const first = await log.append({ time: '2026-11-28T10:00:00.000Z', ...WHO, action: 'admin.login', target: 'admin', before: null, after: null });
    const intent = chainRecord({ time: '2026-11-28T10:00:00.000Z', ...WHO, action: 'key.create', target: 'key_BBBBBBBBBBBBBBBB', before: null, after: auditKeyView(key({ id: 'key_BBBBBBBBBBBBBBBB' }), NOW) }, first);
    writeFileSync(path.join(dataDir, 'audit.head'), headJson({ seq: 1, hash: first.hash, next: intent.hash, open: [2] }) + '\n');
    appendFileSync(path.join(dataDir, 'audit.jsonl'), recordLine(intent) + '\n');
    assert.deepEqual(await recover(), { made: [], notMade: [2], missing: [], young: [] });
    assert.deepEqual((await log.list({})).records.map((r) => [r.seq, r.action]), [[3, 'change.incomplete'], [2, 'key.create'], [1, 'admin.login']]);
    assert.equal((await log.verify()).ok, true);
    await keys.close();
  });

  test('an open seq with no record (announced in the head, never written): closed', async () => {
    const { dataDir, log, keys, recover } = setUp();
    const first = await log.append({ time: '2026-11-28T10:00:00.000Z', ...WHO, action: 'admin.login', target: 'admin', before: null, after: null });
    writeFileSync(path.join(dataDir, 'audit.head'), headJson({ seq: 1, hash: first.hash, next: 'a'.repeat(64), open: [2] }) + '\n');
    assert.deepEqual(await recover(), { made: [], notMade: [], missing: [], young: [] });
    assert.deepEqual(await log.openSeqs(), []);
    assert.equal((await log.head()).seq, 1);
    await keys.close();
  });

  test('a change another process is making as the start resolves: the start waits for keys.json\'s lock, then finds it made', async () => {
    const { log, keys, trail, logger } = setUp();
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let announced: () => void = () => {};
    const recordedAhead = new Promise<void>((resolve) => (announced = resolve));
    // Another process's change: its record is appended (open) under the lock, the write is still to come.
    const creating = keys.create('in flight', {}, async ({ after }) => {
      await log.append({ time: '2026-11-28T10:00:00.000Z', ...WHO, action: 'key.create', target: after.id, before: null, after: auditKeyView(after, NOW) }, { open: true });
      announced();
      await held;
    });
    await recordedAhead;
    const resolving = resolveOpenChanges({ log, keys, trail, logger, clock: () => NOW });
    let resolved = false;
    void resolving.then(() => (resolved = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(resolved, false);
    release();
    const { record } = await creating;
    assert.deepEqual(await resolving, { made: [1], notMade: [], missing: [], young: [] });
    assert.deepEqual((await log.list({})).records.map((r) => [r.seq, r.action, r.target]), [[1, 'key.create', record.id]]);
    await keys.close();
  });

  test('a store whose changes take no lock (Redis): a young open record is left for a later start, an old one resolved', async () => {
    const { log, keys, trail, logger } = setUp();
    const { whileNoChange: _lock, ...unlocked } = keys;
    await log.append({ time: '2026-11-28T10:00:00.000Z', ...WHO, action: 'key.create', target: 'key_CCCCCCCCCCCCCCCC', before: null, after: auditKeyView(key({ id: 'key_CCCCCCCCCCCCCCCC' }), NOW) }, { open: true });
    assert.deepEqual(await resolveOpenChanges({ log, keys: unlocked, trail, logger, clock: () => NOW + IN_FLIGHT_MS - 1 }), { made: [], notMade: [], missing: [], young: [1] });
    assert.deepEqual(await log.openSeqs(), [1]);
    assert.deepEqual(await resolveOpenChanges({ log, keys: unlocked, trail, logger, clock: () => NOW + IN_FLIGHT_MS }), { made: [], notMade: [1], missing: [], young: [] });
    assert.deepEqual(await log.openSeqs(), []);
    await keys.close();
  });

  test('a token recorded and not written: closed by change.incomplete; one recorded and written: stands', async () => {
    const { dataDir, log, keys, trail, logger } = setUp();
    const tokens = openFileAdminTokenStore(dataDir);
    const input = { name: 'ci', scopes: ['keys'], expiresAt: '2026-12-28T10:00:00.000Z', createdBy: 'cli:alice' };
    const recordAhead = async ({ after }: { after: AdminTokenRecord }) => {
      await log.append({ time: '2026-11-28T10:00:00.000Z', ...WHO, action: 'token.create', target: after.id, before: null, after: adminTokenAuditFields(after) }, { open: true });
    };
    const { record: kept } = await tokens.create(input, NOW, recordAhead);
    await assert.rejects(
      tokens.create(input, NOW, async (change) => {
        await recordAhead(change);
        throw new Error('killed');
      }),
      /killed/,
    );
    assert.deepEqual(await log.openSeqs(), [1, 2]);
    assert.deepEqual(await resolveOpenChanges({ log, keys, tokens, trail, logger, clock: () => NOW }), { made: [1], notMade: [2], missing: [], young: [] });
    const [outcome, lost] = (await log.list({})).records;
    assert.deepEqual([outcome?.action, outcome?.detail], ['change.incomplete', { seq: 2, action: 'token.create', reason: `the token is not in the store: ${NOT_WRITTEN}` }]);
    assert.notEqual(lost?.target, kept.id);
    assert.deepEqual((await tokens.list()).map((t) => t.id), [kept.id]);
    await keys.close();
  });

  test('a forged record past the head: refused before anything is appended or logged', async () => {
    const { dataDir, log, keys, lines, recover } = setUp();
    const first = await log.append({ time: '2026-11-28T10:00:00.000Z', ...WHO, action: 'admin.login', target: 'admin', before: null, after: null });
    appendFileSync(path.join(dataDir, 'audit.jsonl'), recordLine(chainRecord({ time: '2026-11-28T10:00:00.000Z', ...WHO, action: 'admin.login', target: 'admin', before: null, after: null }, first)) + '\n');
    lines.length = 0;
    await assert.rejects(recover(), (error: unknown) => error instanceof AuditLogError && /record 2 is past the stored head \(seq 1\)/.test(error.message));
    assert.deepEqual(lines, []);
    await keys.close();
  });
});

describe('a later change of the same key on the chain', () => {
  const crashedUpdate = async (log: ReturnType<typeof setUp>['log'], keys: KeyStore, id: string, name: string, write: boolean) => {
    const died = new Error('killed');
    const updating = keys.update(id, { name }, async ({ before, after }) => {
      await log.append({ time: '2026-11-28T10:00:00.000Z', ...WHO, action: 'key.update', target: id, before: auditKeyView(before as KeyRecord, NOW), after: auditKeyView(after, NOW) }, { open: true });
      if (!write) throw died;
    });
    if (write) await updating;
    else await assert.rejects(updating, died);
  };

  test('an update written but never settled, then the key changed again: made (the later record starts from its after)', async () => {
    const { log, keys, trail, logger } = setUp();
    const audited = auditedKeyStore(keys, trail, WHO, () => NOW);
    const { record } = await audited.create('a');
    await crashedUpdate(log, keys, record.id, 'b', true);
    await audited.update(record.id, { name: 'c' });
    assert.deepEqual(await log.openSeqs(), [2]);
    assert.deepEqual(await resolveOpenChanges({ log, keys, trail, logger, clock: () => NOW }), { made: [2], notMade: [], missing: [], young: [] });
    assert.deepEqual((await log.list({})).records.map((r) => [r.seq, r.action]), [[3, 'key.update'], [2, 'key.update'], [1, 'key.create']]);
    assert.deepEqual(await log.openSeqs(), []);
    await keys.close();
  });

  test('an update never written, then the key changed again: not made, named by the later record', async () => {
    const { log, keys, trail, logger } = setUp();
    const audited = auditedKeyStore(keys, trail, WHO, () => NOW);
    const { record } = await audited.create('a');
    await crashedUpdate(log, keys, record.id, 'b', false);
    await audited.update(record.id, { name: 'b2' });
    assert.deepEqual(await resolveOpenChanges({ log, keys, trail, logger, clock: () => NOW }), { made: [], notMade: [2], missing: [], young: [] });
    const [outcome] = (await log.list({})).records;
    assert.deepEqual([outcome?.seq, outcome?.action, outcome?.detail], [
      4,
      'change.incomplete',
      { seq: 2, action: 'key.update', reason: `the later change of its key (seq 3) and those after it did not start from this record's after: ${NOT_WRITTEN}` },
    ]);
    await keys.close();
  });

  test('two open updates of one key, both written: the first is judged by the second, the second by the store', async () => {
    const { log, keys, trail, logger } = setUp();
    const audited = auditedKeyStore(keys, trail, WHO, () => NOW);
    const { record } = await audited.create('a');
    await crashedUpdate(log, keys, record.id, 'b', true);
    await crashedUpdate(log, keys, record.id, 'c', true);
    assert.deepEqual(await resolveOpenChanges({ log, keys, trail, logger, clock: () => NOW }), { made: [2, 3], notMade: [], missing: [], young: [] });
    await keys.close();
  });

  test('a create never settled, then its key updated: made', async () => {
    const { log, keys, trail, logger } = setUp();
    const { record } = await keys.create('kept', {}, async ({ after }) => {
      await log.append({ time: '2026-11-28T10:00:00.000Z', ...WHO, action: 'key.create', target: after.id, before: null, after: auditKeyView(after, NOW) }, { open: true });
    });
    await auditedKeyStore(keys, trail, WHO, () => NOW).update(record.id, { name: 'renamed' });
    assert.deepEqual(await resolveOpenChanges({ log, keys, trail, logger, clock: () => NOW }), { made: [1], notMade: [], missing: [], young: [] });
    await keys.close();
  });
});

describe('a store that throws after the write-ahead record', () => {
  const realOpen = fsPromises.open;
  const realRename = fsPromises.rename;
  afterEach(() => {
    (fsPromises as unknown as Record<string, unknown>)['open'] = realOpen;
    (fsPromises as unknown as Record<string, unknown>)['rename'] = realRename;
    syncBuiltinESMExports();
  });

  test('keys.json renamed into place, then the directory fsync fails: the change is in the store, the record stands and is settled', async () => {
    const { dataDir, log, keys, trail } = setUp();
    const audited = auditedKeyStore(keys, trail, WHO, () => NOW);
    const { record } = await audited.create('a');
    // The data directory opened for its fsync (atomic-file.ts syncDirectory) right after keys.json's rename.
    let renamed = false;
    const writable = fsPromises as unknown as Record<string, unknown>;
    writable['rename'] = async (from: string, to: string) => {
      await realRename(from, to);
      renamed = to === path.join(dataDir, 'keys.json');
    };
    writable['open'] = async (...args: unknown[]) => {
      if (renamed && args[0] === dataDir && args[1] === 'r') {
        renamed = false;
        throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
      }
      return Reflect.apply(realOpen, fsPromises, args);
    };
    syncBuiltinESMExports();
    await assert.rejects(audited.update(record.id, { name: 'b' }), (error: unknown) => error instanceof FileIoError && error.message === `Could not sync the directory ${dataDir}: EIO: i/o error, fsync`);
    assert.equal((await keys.get(record.id)).name, 'b');
    assert.deepEqual((await log.list({})).records.map((r) => [r.seq, r.action]), [[2, 'key.update'], [1, 'key.create']]);
    assert.deepEqual(await log.openSeqs(), []);
    await keys.close();
  });

  /** The store, with `update` failing as Redis can: `written` says whether the change got there first. */
  const redisLike = (keys: KeyStore, written: boolean, readable = true): KeyStore => {
    const { whileNoChange: _lock, ...unlocked } = keys;
    const timeout = new KeyStoreIoError('write', 'redis://127.0.0.1:6379', new RedisUnavailableError('command_timeout', 'Redis at 127.0.0.1:6379 sent no reply within 2000 ms; the connection is dropped and the command may have run.'));
    return {
      ...unlocked,
      location: 'redis://127.0.0.1:6379',
      async update(id, patch, ahead) {
        if (written) await keys.update(id, patch, ahead);
        else await keys.update(id, patch, async (change) => {
          await ahead?.(change);
          throw timeout;
        }).catch((error: unknown) => {
          if (error !== timeout) throw error;
        });
        throw timeout;
      },
      get: readable ? (id) => keys.get(id) : async () => {
        throw new KeyStoreIoError('read', 'redis://127.0.0.1:6379', new RedisUnavailableError('not_connected', 'Redis at 127.0.0.1:6379 is not connected.'));
      },
    };
  };

  test('a Redis command that timed out after it ran: the record stands and is settled', async () => {
    const { log, keys, trail } = setUp();
    const { record } = await auditedKeyStore(keys, trail, WHO, () => NOW).create('a');
    const audited = auditedKeyStore(redisLike(keys, true), trail, WHO, () => NOW);
    await assert.rejects(audited.update(record.id, { name: 'b' }), /may have run/);
    assert.deepEqual((await log.list({})).records.map((r) => [r.seq, r.action]), [[2, 'key.update'], [1, 'key.create']]);
    assert.deepEqual(await log.openSeqs(), []);
    await keys.close();
  });

  test('a Redis command that timed out before it ran: change.incomplete with the store\'s error, settled', async () => {
    const { log, keys, trail } = setUp();
    const { record } = await auditedKeyStore(keys, trail, WHO, () => NOW).create('a');
    const audited = auditedKeyStore(redisLike(keys, false), trail, WHO, () => NOW);
    await assert.rejects(audited.update(record.id, { name: 'b' }), /may have run/);
    assert.equal((await keys.get(record.id)).name, 'a');
    const [outcome] = (await log.list({})).records;
    assert.deepEqual([outcome?.seq, outcome?.action, outcome?.detail], [
      3,
      'change.incomplete',
      { seq: 2, action: 'key.update', reason: 'the store did not write the change: Could not write redis://127.0.0.1:6379: Redis at 127.0.0.1:6379 sent no reply within 2000 ms; the connection is dropped and the command may have run.' },
    ]);
    assert.deepEqual(await log.openSeqs(), []);
    await keys.close();
  });

  test('the store cannot be read again: the record stays open, and the next start judges it', async () => {
    const { log, keys, trail, logger } = setUp();
    const { record } = await auditedKeyStore(keys, trail, WHO, () => NOW).create('a');
    const audited = auditedKeyStore(redisLike(keys, true, false), trail, WHO, () => NOW);
    await assert.rejects(audited.update(record.id, { name: 'b' }), /may have run/);
    assert.deepEqual((await log.list({})).records.map((r) => [r.seq, r.action]), [[2, 'key.update'], [1, 'key.create']]);
    assert.deepEqual(await log.openSeqs(), [2]);
    assert.deepEqual(await resolveOpenChanges({ log, keys, trail, logger, clock: () => NOW }), { made: [2], notMade: [], missing: [], young: [] });
    await keys.close();
  });
});
