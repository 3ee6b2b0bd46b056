// The audit chain in the data directory, in one process: appends, verify and
// what it finds (edits, gaps, truncation, torn lines), rotation, retention
// and list. Appenders in separate processes are file-audit-log.system.test.ts's.
import assert from 'node:assert/strict';
import { appendFileSync, readdirSync, readFileSync, statSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { AuditVerification } from '../../src/audit/audit-chain.ts';
import { AuditLogError } from '../../src/audit/audit-log.ts';
import { AuditSecretError, canonicalJson, parseRecordLine, type AuditRecord } from '../../src/audit/audit-record.ts';
import { auditAccessProblem, createFileAuditLog, rotatedName, type FileAuditLogOptions } from '../../src/audit/file-audit-log.ts';
import { freshPath, memoryTempDir } from '../support/temp-dir.ts';
import { keyCreate } from './audit-fixtures.ts';

// Each append syncs twice; the syncing is not what these tests check.
const root = memoryTempDir('audit');

function fresh(options: Omit<FileAuditLogOptions, 'dataDir'> = {}) {
  const dataDir = freshPath(root, 'd');
  const problems: string[] = [];
  const log = createFileAuditLog({ dataDir, onProblem: (m) => problems.push(m), ...options });
  const file = path.join(dataDir, 'audit.jsonl');
  return { dataDir, log, problems, file, lines: () => readFileSync(file, 'utf8').split('\n').slice(0, -1) };
}

async function appendN(log: ReturnType<typeof fresh>['log'], n: number, from = 1): Promise<AuditRecord[]> {
  const out: AuditRecord[] = [];
  for (let i = 0; i < n; i++) out.push(await log.append(keyCreate(from + i)));
  return out;
}

function broken(result: AuditVerification) {
  assert.equal(result.ok, false, result.message);
  return result as Exclude<AuditVerification, { ok: true }>;
}

describe('the file audit log', () => {
  test('appends canonical lines, mode 0600, and keeps audit.head', async () => {
    const { log, file, dataDir, lines } = fresh();
    const records = await appendN(log, 3);
    assert.deepEqual(records.map((r) => r.seq), [1, 2, 3]);
    assert.deepEqual(lines(), records.map((r) => canonicalJson(r)));
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const head = path.join(dataDir, 'audit.head');
    assert.equal(statSync(head).mode & 0o777, 0o600);
    assert.deepEqual(JSON.parse(readFileSync(head, 'utf8')), { seq: 3, hash: records[2]?.hash, v: 2 });
    assert.deepEqual(await log.head(), { seq: 3, hash: records[2]?.hash });
    const result = await log.verify();
    assert.equal(result.ok, true);
    assert.equal(result.ok && result.count, 3);
  });

  test('an empty data directory verifies as an empty chain and lists nothing', async () => {
    const { log } = fresh();
    assert.equal((await log.verify()).ok, true);
    assert.deepEqual(await log.list({}), { records: [], nextBefore: null });
  });

  test('an edited record fails verify naming the file, line and seq', async () => {
    const { log, file, lines } = fresh();
    await appendN(log, 4);
    const text = lines();
    text[1] = (text[1] as string).replace('"name":"app-2"', '"name":"evil"');
    writeFileSync(file, text.join('\n') + '\n');
    const result = broken(await log.verify());
    assert.equal(result.message, 'audit.jsonl line 2 (seq 2): hash does not match its content: the record was edited');
  });

  test('a deleted record fails verify (seq_gap)', async () => {
    const { log, file, lines } = fresh();
    await appendN(log, 4);
    const text = lines();
    text.splice(2, 1);
    writeFileSync(file, text.join('\n') + '\n');
    const result = broken(await log.verify());
    assert.deepEqual([result.reason, result.file, result.line, result.seq], ['seq_gap', 'audit.jsonl', 3, 4]);
  });

  test('reordered records fail verify', async () => {
    const { log, file, lines } = fresh();
    await appendN(log, 4);
    const text = lines();
    writeFileSync(file, [text[0], text[1], text[3], text[2]].join('\n') + '\n');
    const result = broken(await log.verify());
    assert.deepEqual([result.reason, result.line, result.seq], ['seq_gap', 3, 4]);
  });

  test('a truncated log (last records removed) fails verify: the head is ahead', async () => {
    const { log, file, lines } = fresh();
    await appendN(log, 5);
    writeFileSync(file, lines().slice(0, 3).join('\n') + '\n');
    const result = broken(await log.verify());
    assert.equal(result.reason, 'missing_records');
    assert.match(result.message, /the stored head says the chain reached seq 5, but the last record is seq 3: records 4 to 5 were removed/);
  });

  test('after a truncation the next append continues from the head, so the gap stays visible', async () => {
    const { log, file, lines, problems } = fresh();
    await appendN(log, 5);
    writeFileSync(file, lines().slice(0, 3).join('\n') + '\n');
    const next = await log.append(keyCreate(6));
    assert.equal(next.seq, 6);
    assert.match(problems[0] ?? '', /audit.head says the chain reached seq 5 but the records end at seq 3/);
    const result = broken(await log.verify());
    assert.deepEqual([result.reason, result.line, result.seq], ['seq_gap', 4, 6]);
  });

  test('a torn last line (a crash mid-write): verify says unterminated; the next append moves it aside and continues', async () => {
    const { log, file, dataDir, lines, problems } = fresh();
    const [, second] = await appendN(log, 2);
    const torn = canonicalJson(keyCreate(3)).slice(0, 50);
    appendFileSync(file, torn);
    const result = broken(await log.verify());
    assert.deepEqual([result.reason, result.line], ['unterminated', 3]);
    const next = await log.append(keyCreate(3));
    assert.equal(next.seq, 3);
    assert.equal(next.prev, second?.hash);
    assert.equal(lines().length, 3);
    const aside = readdirSync(dataDir).filter((n) => n.startsWith('audit.torn-'));
    assert.equal(aside.length, 1);
    assert.equal(readFileSync(path.join(dataDir, aside[0] as string), 'utf8'), torn);
    assert.match(problems[0] ?? '', /ended with 50 bytes of an incomplete record .* they were removed \(kept in .*audit\.torn-/);
    assert.equal((await log.verify()).ok, true);
  });

  test('a whole record without its newline: the next append adds the newline and keeps the record', async () => {
    const { log, file, lines, problems } = fresh();
    const records = await appendN(log, 3);
    truncateSync(file, statSync(file).size - 1);
    assert.equal(broken(await log.verify()).reason, 'unterminated');
    const next = await log.append(keyCreate(4));
    assert.equal(next.seq, 4);
    assert.equal(next.prev, records[2]?.hash);
    assert.equal(lines().length, 4);
    assert.match(problems[0] ?? '', /whole record without its newline/);
    assert.equal((await log.verify()).ok, true);
  });

  test('a line over 64 KiB fails verify as malformed without reading it whole', async () => {
    const { log, file } = fresh();
    await appendN(log, 1);
    appendFileSync(file, 'x'.repeat(70 * 1024) + '\n');
    const result = broken(await log.verify());
    assert.deepEqual([result.reason, result.line], ['malformed', 2]);
    await assert.rejects(log.list({}), AuditLogError);
  });

  test('an event with a secret is refused and nothing is written', async () => {
    const { log, dataDir } = fresh();
    await assert.rejects(log.append(keyCreate(1, { after: { id: 'k', key: 'x' } })), AuditSecretError);
    assert.deepEqual(readdirSync(root).includes(path.basename(dataDir)), false);
    assert.equal((await log.append(keyCreate(1))).seq, 1);
  });

  test('concurrent appends in one process form one chain', async () => {
    const { log } = fresh();
    const records = await Promise.all(Array.from({ length: 50 }, (_, i) => log.append(keyCreate(i))));
    assert.deepEqual(records.map((r) => r.seq).sort((a, b) => a - b), Array.from({ length: 50 }, (_, i) => i + 1));
    const result = await log.verify();
    assert.equal(result.ok && result.count, 50);
  });
});

describe('a reader the files\' mode refuses', () => {
  // The tests run as root, whom no mode refuses: the wording is checked on the error itself.
  const denied = Object.assign(new Error("EACCES: permission denied, open '/var/lib/portcullis/audit.jsonl'"), { code: 'EACCES' });
  test('verify and list are told to run as the gateway\'s user; an append and other errors are said as they are', () => {
    assert.equal(
      auditAccessProblem('verify', '/var/lib/portcullis', denied),
      "cannot verify the audit log in /var/lib/portcullis: EACCES: permission denied, open '/var/lib/portcullis/audit.jsonl' (the audit files are the gateway's user's alone: run this as that user, e.g. sudo -u portcullis portcullis audit verify)",
    );
    assert.match(auditAccessProblem('read', '/d', denied), /run this as that user, e\.g\. sudo -u portcullis portcullis audit list\)$/);
    assert.equal(auditAccessProblem('append to', '/d', denied), "cannot append to the audit log in /d: EACCES: permission denied, open '/var/lib/portcullis/audit.jsonl'");
    const gone = Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' });
    assert.equal(auditAccessProblem('verify', '/d', gone), 'cannot verify the audit log in /d: EIO: i/o error, read');
  });
});

describe('rotation and retention', () => {
  /** ~9.3 KiB records: a 64 KiB file holds 6. */
  const big = (n: number) => keyCreate(n, { detail: { note: 'n'.repeat(9000) } });

  async function rotatedLog(records: number) {
    const env = fresh({ rotateBytes: 64 * 1024 });
    for (let i = 1; i <= records; i++) await env.log.append(big(i));
    return env;
  }

  test('the full file is renamed to audit.<first seq>.jsonl and the chain continues in a new audit.jsonl', async () => {
    const { log, dataDir, lines } = await rotatedLog(20);
    const names = readdirSync(dataDir).filter((n) => n.endsWith('.jsonl')).sort();
    assert.deepEqual(names, [rotatedName(1), rotatedName(7), rotatedName(13), 'audit.jsonl']);
    assert.equal(rotatedName(7), 'audit.000000000007.jsonl');
    for (const name of names) assert.ok(statSync(path.join(dataDir, name)).size <= 64 * 1024, name);
    const rotatedLast = readFileSync(path.join(dataDir, rotatedName(13)), 'utf8').trimEnd().split('\n').at(-1) as string;
    const firstOfCurrent = parseRecordLine(lines()[0] as string);
    assert.equal(firstOfCurrent.seq, 19);
    assert.equal(firstOfCurrent.prev, parseRecordLine(rotatedLast).hash);
    const result = await log.verify();
    assert.equal(result.ok && `${result.count} ${result.firstSeq} ${result.lastSeq}`, '20 1 20');
    const page = await log.list({ limit: 10 });
    assert.deepEqual(page.records.map((r) => r.seq), [20, 19, 18, 17, 16, 15, 14, 13, 12, 11]);
    assert.equal(page.nextBefore, 11);
    const older = await log.list({ limit: 10, before: 11 });
    assert.deepEqual(older.records.map((r) => r.seq), [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    assert.equal(older.nextBefore, null);
  });

  test('deleting the oldest rotated files is retention: verify passes and says where the chain starts', async () => {
    const { log, dataDir } = await rotatedLog(20);
    unlinkSync(path.join(dataDir, rotatedName(1)));
    const result = await log.verify();
    assert.equal(result.ok, true, result.message);
    assert.match(result.message, /14 records, seq 7 to 20, .*starts at seq 7: earlier records were removed \(retention\)/);
    const strict = broken(await log.verify({ fromGenesis: true }));
    assert.deepEqual([strict.reason, strict.file, strict.line, strict.seq], ['missing_records', rotatedName(7), 1, 7]);
  });

  test('deleting a middle rotated file fails verify at the next file', async () => {
    const { log, dataDir } = await rotatedLog(20);
    unlinkSync(path.join(dataDir, rotatedName(7)));
    const result = broken(await log.verify());
    assert.deepEqual([result.reason, result.file, result.line, result.seq], ['seq_gap', rotatedName(13), 1, 13]);
    assert.match(result.message, /records 7 to 12 are missing/);
  });

  test('deleting the current file after a rotation is a truncation', async () => {
    const { log, file } = await rotatedLog(20);
    unlinkSync(file);
    const result = broken(await log.verify());
    assert.equal(result.reason, 'missing_records');
  });
});

describe('list', () => {
  test('filters by key, actor (id or name), action and time; newest first; pages by before', async () => {
    const { log } = fresh();
    await appendN(log, 6);
    await log.append(keyCreate(7, { action: 'key.revoke', target: 'key_0002', actor: { kind: 'token', id: 'tok_9', name: 'ci' } }));
    assert.deepEqual((await log.list({ key: 'key_0002' })).records.map((r) => r.seq), [7, 2]);
    assert.deepEqual((await log.list({ actor: 'tok_9' })).records.map((r) => r.seq), [7]);
    assert.deepEqual((await log.list({ actor: 'ci' })).records.map((r) => r.seq), [7]);
    assert.deepEqual((await log.list({ action: 'key.create' })).records.map((r) => r.seq), [6, 5, 4, 3, 2, 1]);
    // keyCreate(n) is at 12:00:00 + n s.
    assert.deepEqual((await log.list({ since: '2026-11-26T12:00:03.000Z', until: '2026-11-26T12:00:05.000Z' })).records.map((r) => r.seq), [4, 3]);
    const first = await log.list({ limit: 3 });
    assert.deepEqual([first.records.map((r) => r.seq), first.nextBefore], [[7, 6, 5], 5]);
    const second = await log.list({ limit: 3, before: 5 });
    assert.deepEqual([second.records.map((r) => r.seq), second.nextBefore], [[4, 3, 2], 2]);
    const last = await log.list({ limit: 3, before: 2 });
    assert.deepEqual([last.records.map((r) => r.seq), last.nextBefore], [[1], null]);
    const exact = await log.list({ limit: 6, action: 'key.create' });
    assert.equal(exact.nextBefore, null, 'no further match: no next page');
  });

  test('a torn last line is not listed', async () => {
    const { log, file } = fresh();
    await appendN(log, 2);
    appendFileSync(file, '{"seq":3');
    assert.deepEqual((await log.list({})).records.map((r) => r.seq), [2, 1]);
  });
});
