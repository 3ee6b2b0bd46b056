// The head beside the chain: how an appender judges the chain's tail against
// it (judgeTail, pure), and the file log living by it: records forged past the
// head (write access to audit.jsonl only) are refused by verify, by appends and
// at start; the one record a crash leaves past the head is adopted; open
// write-ahead records are kept in the head until settled.
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { AuditVerification } from '../../src/audit/audit-chain.ts';
import { EMPTY_HEAD, headJson, judgeTail, MAX_OPEN, parseHeadJson } from '../../src/audit/audit-head.ts';
import { AuditLogError } from '../../src/audit/audit-log.ts';
import { chainRecord, GENESIS_HASH, recordLine, type AuditRecord } from '../../src/audit/audit-record.ts';
import { createFileAuditLog } from '../../src/audit/file-audit-log.ts';
import { freshPath, memoryTempDir } from '../support/temp-dir.ts';
import { keyCreate } from './audit-fixtures.ts';

const root = memoryTempDir('audit-head');
const H = (c: string) => c.repeat(64);

function fresh() {
  const dataDir = freshPath(root, 'd');
  const problems: string[] = [];
  const log = createFileAuditLog({ dataDir, onProblem: (m) => problems.push(m) });
  const file = path.join(dataDir, 'audit.jsonl');
  const headFile = path.join(dataDir, 'audit.head');
  return { dataDir, log, problems, file, headFile, head: () => JSON.parse(readFileSync(headFile, 'utf8')) as unknown };
}

async function appendN(log: ReturnType<typeof fresh>['log'], n: number): Promise<AuditRecord[]> {
  const out: AuditRecord[] = [];
  for (let i = 1; i <= n; i++) out.push(await log.append(keyCreate(i)));
  return out;
}

/** Records chained correctly from `last`, as someone with write access to audit.jsonl alone would append them. */
function forge(file: string, last: AuditRecord, n: number): AuditRecord[] {
  const out: AuditRecord[] = [];
  let previous: { seq: number; hash: string } = last;
  for (let i = 0; i < n; i++) {
    const record = chainRecord(keyCreate(100 + i, { target: 'key_forged', after: { id: 'key_forged', name: 'backdoor' } }), previous);
    appendFileSync(file, recordLine(record) + '\n');
    out.push(record);
    previous = record;
  }
  return out;
}

function broken(result: AuditVerification) {
  assert.equal(result.ok, false, result.message);
  return result as Exclude<AuditVerification, { ok: true }>;
}

describe('judgeTail', () => {
  const last = { seq: 4, hash: H('4') };
  test('the last record is the head: append on it; an announced record never written is no longer open', () => {
    assert.deepEqual(judgeTail({ seq: 4, hash: H('4'), next: null, open: [2] }, last, 'audit.head'), { ok: true, base: last, open: [2], problem: null });
    assert.deepEqual(judgeTail({ seq: 4, hash: H('4'), next: H('5'), open: [2, 5] }, last, 'audit.head'), { ok: true, base: last, open: [2], problem: null });
  });
  test('the one announced record past the head (a crash): adopted, with a warning', () => {
    assert.deepEqual(judgeTail({ seq: 3, hash: H('3'), next: H('4'), open: [4] }, last, 'audit.head'), {
      ok: true,
      base: last,
      open: [4],
      problem: 'the last append was cut short by a crash after its record (seq 4) was written; audit.head now names it',
    });
  });
  test('a head an earlier version wrote (no "v"): the one record past it is that version\'s crash, adopted; two are refused', () => {
    assert.deepEqual(judgeTail({ seq: 3, hash: H('3'), next: null, open: [], legacy: true }, last, 'audit.head'), {
      ok: true,
      base: last,
      open: [],
      problem: 'audit.head was written by an earlier version of portcullis and is one record behind (seq 4): that version\'s append was cut short by a crash after its record was written; audit.head now names it',
    });
    const judged = judgeTail({ seq: 2, hash: H('2'), next: null, open: [], legacy: true }, last, 'audit.head');
    assert.equal(judged.ok, false);
    assert.match(judged.ok ? '' : judged.problem, /^records 3 to 4 \(2\) are past the stored head \(seq 2\)/);
  });
  test('a record past the head that was not announced, or more than one: refused', () => {
    for (const head of [
      { seq: 3, hash: H('3'), next: null, open: [] },
      { seq: 3, hash: H('3'), next: H('9'), open: [] },
      { seq: 2, hash: H('2'), next: H('3'), open: [] },
    ]) {
      const judged = judgeTail(head, last, 'audit.head');
      assert.equal(judged.ok, false);
      assert.match(judged.ok ? '' : judged.problem, head.seq === 3 ? /^record 4 is past the stored head \(seq 3\)/ : /^records 3 to 4 \(2\) are past the stored head \(seq 2\)/);
    }
  });
  test('no head and records: refused, with the head to write back; no head and no records: an empty chain', () => {
    assert.deepEqual(judgeTail(null, last, 'audit.head'), {
      ok: false,
      problem: `audit.head is missing, but the chain has records (up to seq 4): no crash removes the head once written. If the records are portcullis's (compare the last record's hash, ${H('4')}, with the latest "audit" line of the log stream), write {"seq":4,"hash":"${H('4')}","v":2} to audit.head (docs/audit.md, "A missing head"); until then appends are refused`,
    });
    assert.deepEqual(judgeTail(null, last, 'the head key pcl:{audit}:head', (head) => `set it: SET pcl:{audit}:head "${head.seq} ${head.hash}"`), {
      ok: false,
      problem: `the head key pcl:{audit}:head is missing, but the chain has records (up to seq 4): no crash removes the head once written. If the records are portcullis's (compare the last record's hash, ${H('4')}, with the latest "audit" line of the log stream), set it: SET pcl:{audit}:head "4 ${H('4')}" (docs/audit.md, "A missing head"); until then appends are refused`,
    });
    assert.deepEqual(judgeTail(null, { seq: 0, hash: GENESIS_HASH }, 'audit.head'), { ok: true, base: { seq: 0, hash: GENESIS_HASH }, open: [], problem: null });
  });
  test('a last record that is not the head\'s: refused', () => {
    assert.deepEqual(judgeTail({ seq: 4, hash: H('e'), next: null, open: [] }, last, 'audit.head'), {
      ok: false,
      problem: `the last record (seq 4) has hash ${H('4')}, but audit.head says ${H('e')}: the record was replaced; run portcullis audit verify`,
    });
  });
  test('a head ahead of the records (a truncation): built on, so the gap stays visible', () => {
    const judged = judgeTail({ seq: 6, hash: H('6'), next: null, open: [5, 7] }, last, 'audit.head');
    assert.deepEqual(judged, {
      ok: true,
      base: { seq: 6, hash: H('6') },
      open: [5],
      problem: 'audit.head says the chain reached seq 6 but the records end at seq 4: records were removed; the chain continues from the head, and audit verify reports the gap',
    });
  });
  test('the head as stored: only what is set; anything else is refused when read', () => {
    assert.equal(headJson(EMPTY_HEAD), `{"seq":0,"hash":"${GENESIS_HASH}","v":2}`);
    const full = { seq: 3, hash: H('3'), next: H('4'), open: [2, 4] };
    assert.equal(headJson(full), `{"seq":3,"hash":"${H('3')}","next":"${H('4')}","open":[2,4],"v":2}`);
    assert.deepEqual(parseHeadJson(headJson(full)), full);
    assert.deepEqual(parseHeadJson(`{"seq":3,"hash":"${H('3')}","v":2}`), { seq: 3, hash: H('3'), next: null, open: [] });
    // Without "v": written by a version that wrote the head only after each record.
    assert.deepEqual(parseHeadJson(`{"seq":3,"hash":"${H('3')}"}`), { seq: 3, hash: H('3'), next: null, open: [], legacy: true });
    assert.equal(parseHeadJson(`{"seq":3,"hash":"${H('3')}","v":3}`), null);
    for (const bad of ['', 'null', '{"seq":-1,"hash":"' + H('3') + '"}', `{"seq":3,"hash":"${H('3')}","next":"x"}`, `{"seq":3,"hash":"${H('3')}","open":[0]}`, `{"seq":3,"hash":"${H('3')}","open":"1"}`]) {
      assert.equal(parseHeadJson(bad), null, bad);
    }
  });
});

describe('the file log and its head', () => {
  test('an append announces its record in the head before writing it, then moves the head onto it', async () => {
    const { log, head } = fresh();
    const [one] = await appendN(log, 1);
    assert.deepEqual(head(), { seq: 1, hash: one?.hash, v: 2 });
  });

  for (const forged of [1, 2, 5]) {
    test(`${forged} forged record${forged === 1 ? '' : 's'} appended to audit.jsonl, the head left as it was: verify fails, appends and start refuse`, async () => {
      const { log, file, head } = fresh();
      const records = await appendN(log, 3);
      const headBefore = head();
      forge(file, records[2] as AuditRecord, forged);
      const result = broken(await log.verify());
      assert.deepEqual([result.reason, result.file, result.line, result.seq], ['past_head', 'audit.jsonl', 4, 4]);
      assert.match(result.message, forged === 1 ? /^audit\.jsonl line 4 \(seq 4\): record 4 is past the stored head \(seq 3\)/ : new RegExp(`^audit\\.jsonl line 4 \\(seq 4\\): records 4 to ${3 + forged} \\(${forged}\\) are past the stored head \\(seq 3\\)`));
      await assert.rejects(log.append(keyCreate(50)), (error: unknown) => {
        assert.ok(error instanceof AuditLogError);
        assert.match(error.message, /is not extended: record(s)? 4 .*past the stored head \(seq 3\)/);
        return true;
      });
      await assert.rejects(log.checkTail(), AuditLogError);
      assert.deepEqual(head(), headBefore);
      assert.equal(readFileSync(file, 'utf8').split('\n').length - 1, 3 + forged);
    });
  }

  test('a crash after the record and before the head: verify is whole, the start adopts it with a warning', async () => {
    const { log, file, headFile, problems, head } = fresh();
    const records = await appendN(log, 3);
    const last = records[2] as AuditRecord;
    // What an append leaves when it dies after its fsync: the head announcing the record, the record written.
    const record = chainRecord(keyCreate(4), last);
    writeFileSync(headFile, headJson({ seq: 3, hash: last.hash, next: record.hash, open: [4] }) + '\n');
    appendFileSync(file, recordLine(record) + '\n');
    const result = await log.verify();
    assert.equal(result.ok, true, result.message);
    assert.deepEqual(await log.checkTail(), { seq: 4, hash: record.hash });
    assert.deepEqual(problems, ['audit log: the last append was cut short by a crash after its record (seq 4) was written; audit.head now names it']);
    assert.deepEqual(head(), { seq: 4, hash: record.hash, open: [4], v: 2 });
    assert.deepEqual(await log.openSeqs(), [4]);
    assert.equal((await log.append(keyCreate(5))).seq, 5);
  });

  test('a head an earlier version left one record behind (its crash): the start adopts it and writes the head in this format; a record forged after that is refused', async () => {
    const { log, file, headFile, problems, head } = fresh();
    const records = await appendN(log, 3);
    // An earlier version wrote {"seq","hash"} only after each record: its crash leaves the record, the head one behind.
    writeFileSync(headFile, JSON.stringify({ seq: 2, hash: (records[1] as AuditRecord).hash }) + '\n');
    assert.equal((await log.verify()).ok, true);
    assert.deepEqual(await log.checkTail(), { seq: 3, hash: (records[2] as AuditRecord).hash });
    assert.deepEqual(problems, ['audit log: audit.head was written by an earlier version of portcullis and is one record behind (seq 3): that version\'s append was cut short by a crash after its record was written; audit.head now names it']);
    assert.deepEqual(head(), { seq: 3, hash: (records[2] as AuditRecord).hash, v: 2 });
    forge(file, records[2] as AuditRecord, 1);
    assert.equal(broken(await log.verify()).reason, 'past_head');
    await assert.rejects(log.checkTail(), AuditLogError);
  });

  test('a crash after the head announced a record and before it was written: whole, and the next append takes its seq', async () => {
    const { log, headFile, head } = fresh();
    const records = await appendN(log, 2);
    const last = records[1] as AuditRecord;
    writeFileSync(headFile, headJson({ seq: 2, hash: last.hash, next: H('a'), open: [3] }) + '\n');
    assert.equal((await log.verify()).ok, true);
    assert.deepEqual(await log.checkTail(), { seq: 2, hash: last.hash });
    assert.deepEqual(head(), { seq: 2, hash: last.hash, v: 2 });
    const next = await log.append(keyCreate(3));
    assert.equal(next.seq, 3);
    assert.equal((await log.verify()).ok, true);
  });

  test('a write-ahead record stays open in the head until settled', async () => {
    const { log, head } = fresh();
    await appendN(log, 1);
    const ahead = await log.append(keyCreate(2), { open: true });
    const other = await log.append(keyCreate(3));
    assert.deepEqual(await log.openSeqs(), [2]);
    assert.deepEqual(head(), { seq: 3, hash: other.hash, open: [2], v: 2 });
    await log.settle(ahead.seq);
    assert.deepEqual(await log.openSeqs(), []);
    assert.deepEqual(head(), { seq: 3, hash: other.hash, v: 2 });
    await log.settle(ahead.seq);
    assert.deepEqual(head(), { seq: 3, hash: other.hash, v: 2 });
  });

  test('an append that would open more write-ahead records than the head holds is refused, naming the way out', async () => {
    const { log, headFile } = fresh();
    const [one] = await appendN(log, 1);
    writeFileSync(headFile, headJson({ seq: 1, hash: (one as AuditRecord).hash, next: null, open: Array<number>(MAX_OPEN).fill(1) }) + '\n');
    await assert.rejects(log.append(keyCreate(2), { open: true }), {
      name: 'AuditLogError',
      message: `audit.head lists ${MAX_OPEN} write-ahead records whose changes were never settled, the most it holds; restart portcullis serve, which resolves them against the stores`,
    });
    assert.equal((await log.append(keyCreate(2))).seq, 2);
  });

  test('audit.head deleted with records left: verify reports the missing head with the one to write back; appends refuse; written back, the chain is whole', async () => {
    const { log, headFile, file } = fresh();
    const [, second] = await appendN(log, 2);
    const headBefore = readFileSync(headFile, 'utf8');
    unlinkSync(headFile);
    const advice = `audit.head is missing, but the chain has records (up to seq 2): no crash removes the head once written. If the records are portcullis's (compare the last record's hash, ${second?.hash}, with the latest "audit" line of the log stream), write {"seq":2,"hash":"${second?.hash}","v":2} to audit.head (docs/audit.md, "A missing head"); until then appends are refused`;
    assert.deepEqual(await log.verify(), { ok: false, reason: 'missing_head', file: null, line: null, seq: 2, message: `the chain (seq 2): ${advice}` });
    await assert.rejects(log.append(keyCreate(3)), { name: 'AuditLogError', message: `the audit log in ${path.dirname(file)} is not extended: ${advice}` });
    // The advice followed: the head it names is the one that was deleted.
    writeFileSync(headFile, `{"seq":2,"hash":"${second?.hash}","v":2}\n`);
    assert.equal(readFileSync(headFile, 'utf8'), headBefore);
    assert.equal((await log.verify()).ok, true);
    assert.equal((await log.append(keyCreate(3))).seq, 3);
  });
});
