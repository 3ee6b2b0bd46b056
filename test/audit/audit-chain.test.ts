import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createChainVerifier, verifyChain, type AuditVerification } from '../../src/audit/audit-chain.ts';
import { canonicalJson, chainRecord, GENESIS_HASH, recordHash, recordLine, type AuditRecord } from '../../src/audit/audit-record.ts';
import { keyCreate } from './audit-fixtures.ts';

/** A chain of `n` records from seq `from` (prev of the first: zeros for seq 1, else a made-up hash). */
function chain(n: number, from = 1): AuditRecord[] {
  const records: AuditRecord[] = [];
  let last = { seq: from - 1, hash: from === 1 ? GENESIS_HASH : 'f'.repeat(64) };
  for (let i = 0; i < n; i++) {
    const record = chainRecord(keyCreate(from + i), last);
    records.push(record);
    last = record;
  }
  return records;
}
const lines = (records: readonly AuditRecord[]): string[] => records.map(recordLine);

function broken(result: AuditVerification): Exclude<AuditVerification, { ok: true }> {
  assert.equal(result.ok, false, result.message);
  return result as Exclude<AuditVerification, { ok: true }>;
}

describe('verifyChain', () => {
  test('a whole chain: count, span and head', () => {
    const records = chain(5);
    const result = verifyChain(lines(records));
    assert.deepEqual(result, {
      ok: true,
      count: 5,
      firstSeq: 1,
      lastSeq: 5,
      head: { seq: 5, hash: records[4]?.hash },
      trimmed: false,
      message: `audit chain intact: 5 records, seq 1 to 5, head ${records[4]?.hash}`,
    });
  });

  test('an empty chain is whole', () => {
    assert.deepEqual(verifyChain([]), { ok: true, count: 0, firstSeq: null, lastSeq: null, head: { seq: 0, hash: GENESIS_HASH }, trimmed: false, message: `audit chain intact: no records, head ${GENESIS_HASH}` });
  });

  test('an edited record: hash_mismatch at its line', () => {
    const text = lines(chain(5));
    text[2] = (text[2] as string).replace('"name":"app-3"', '"name":"app-X"');
    const result = broken(verifyChain(text));
    assert.deepEqual([result.reason, result.file, result.line, result.seq], ['hash_mismatch', 'audit.jsonl', 3, 3]);
    assert.equal(result.message, 'audit.jsonl line 3 (seq 3): hash does not match its content: the record was edited');
  });

  test('an edited record with its hash recomputed: the next record names it (prev_mismatch)', () => {
    const records = chain(5);
    const forged = { ...(records[2] as AuditRecord), source: 'elsewhere' };
    forged.hash = recordHash(forged);
    const text = lines(records);
    text[2] = canonicalJson(forged);
    const result = broken(verifyChain(text));
    assert.deepEqual([result.reason, result.line, result.seq], ['prev_mismatch', 4, 4]);
    assert.match(result.message, /prev does not match the hash of seq 3/);
  });

  test('a deleted record: seq_gap at the record after it', () => {
    const text = lines(chain(5));
    text.splice(1, 1);
    const result = broken(verifyChain(text));
    assert.deepEqual([result.reason, result.line, result.seq], ['seq_gap', 2, 3]);
    assert.equal(result.message, 'audit.jsonl line 2 (seq 3): seq 3 follows seq 1: record 2 is missing here (removed, or moved)');
  });

  test('several deleted records are named as a range', () => {
    const text = lines(chain(6));
    text.splice(1, 3);
    assert.match(broken(verifyChain(text)).message, /records 2 to 4 are missing here/);
  });

  test('reordered records: seq_order', () => {
    const text = lines(chain(5));
    [text[1], text[2]] = [text[2] as string, text[1] as string];
    const result = broken(verifyChain(text));
    // seq 3 then seq 2: the jump from 1 to 3 is seen first.
    assert.equal(result.reason, 'seq_gap');
    const swappedLast = lines(chain(3));
    swappedLast.push(swappedLast[1] as string);
    const repeated = broken(verifyChain(swappedLast));
    assert.deepEqual([repeated.reason, repeated.line, repeated.seq], ['seq_order', 4, 2]);
  });

  test('a first record whose prev is not zeros: prev_mismatch', () => {
    const records = chain(1);
    const forged = { ...(records[0] as AuditRecord), prev: 'a'.repeat(64) };
    forged.hash = recordHash(forged);
    assert.equal(broken(verifyChain([canonicalJson(forged)])).reason, 'prev_mismatch');
  });

  test('a malformed line names its line and, where visible, its seq', () => {
    const text = lines(chain(3));
    text[1] = (text[1] as string).replace('"source":"cli"', '"source":7');
    const result = broken(verifyChain(text));
    assert.deepEqual([result.reason, result.line, result.seq], ['malformed', 2, 2]);
    assert.match(result.message, /field source must be a string/);
  });

  test('truncation: the stored head is ahead of the last record (missing_records)', () => {
    const records = chain(5);
    const result = broken(verifyChain(lines(records).slice(0, 3), { storedHead: { seq: 5, hash: (records[4] as AuditRecord).hash } }));
    assert.equal(result.reason, 'missing_records');
    assert.equal(result.seq, 3);
    assert.match(result.message, /records 4 to 5 were removed \(the log was truncated\)/);
    const one = broken(verifyChain(lines(records).slice(0, 4), { storedHead: { seq: 5, hash: (records[4] as AuditRecord).hash } }));
    assert.match(one.message, /but the last record is seq 4: record 5 was removed \(the log was truncated\)$/);
  });

  test('one record past the stored head is accepted only when the head announced it (a crash between the record and the head)', () => {
    const records = chain(5);
    const at = (i: number) => records[i] as AuditRecord;
    assert.equal(verifyChain(lines(records), { storedHead: { seq: 4, hash: at(3).hash, next: at(4).hash } }).ok, true);
    // Announced, but the record was never written (a crash before it): whole.
    assert.equal(verifyChain(lines(records).slice(0, 4), { storedHead: { seq: 4, hash: at(3).hash, next: at(4).hash } }).ok, true);
  });

  test('a reader without the lock: records appended between its two head reads are judged by the later head', () => {
    const records = chain(6);
    const before = { seq: 4, hash: (records[3] as AuditRecord).hash };
    // Two appends landed after the first head read: the head read after the file's size covers them,
    // or announces the last one while it is being written.
    for (const after of [{ seq: 6, hash: (records[5] as AuditRecord).hash }, { seq: 5, hash: (records[4] as AuditRecord).hash, next: (records[5] as AuditRecord).hash }]) {
      assert.equal(verifyChain(lines(records), { storedHead: before, headAfterRecords: after }).ok, true);
    }
    // The later head has not moved (nothing of portcullis's appended them): past_head as before.
    assert.equal(broken(verifyChain(lines(records), { storedHead: before, headAfterRecords: before })).reason, 'past_head');
    assert.equal(broken(verifyChain(lines(records), { storedHead: before })).reason, 'past_head');
  });

  // Forged records: chained correctly from the last one, appended with write access to the records only, the head left as it was.
  for (const forged of [1, 2, 5]) {
    test(`${forged} forged record${forged === 1 ? '' : 's'} past the stored head: past_head, naming them`, () => {
      const records = chain(4 + forged);
      const head = { seq: 4, hash: (records[3] as AuditRecord).hash };
      for (const storedHead of [head, { ...head, next: null }, { ...head, next: 'a'.repeat(64) }]) {
        const result = broken(verifyChain(lines(records), { storedHead }));
        assert.deepEqual([result.reason, result.file, result.line, result.seq], ['past_head', 'audit.jsonl', 5, 5]);
        const which =
          forged === 1
            ? 'record 5 is past the stored head (seq 4) and is not the record the head announced before its append (a crash leaves only that one): it was appended by something other than portcullis, or the head was replaced with an older copy. List it (portcullis audit list --before 6 --json), compare with the "audit" lines of the log stream, then move it out of the log'
            : `records 5 to ${4 + forged} (${forged}) are past the stored head (seq 4); a crash leaves one at most, the one the head announced: they were appended by something other than portcullis, or the head was replaced with an older copy. List them (portcullis audit list --before ${5 + forged} --json), compare with the "audit" lines of the log stream, then move them out of the log`;
        assert.equal(result.message, `audit.jsonl line 5 (seq 5): ${which} (docs/audit.md, "Records past the head"); until then appends are refused`);
      }
    });
  }

  test('two records past a head that announced the first: past_head all the same', () => {
    const records = chain(6);
    const result = broken(verifyChain(lines(records), { storedHead: { seq: 4, hash: (records[3] as AuditRecord).hash, next: (records[4] as AuditRecord).hash } }));
    assert.deepEqual([result.reason, result.seq], ['past_head', 5]);
    assert.match(result.message, /records 5 to 6 \(2\) are past the stored head \(seq 4\)/);
  });

  test('records and an empty stored head (the head was deleted, or never written): every record is past it', () => {
    const result = broken(verifyChain(lines(chain(3)), { storedHead: { seq: 0, hash: GENESIS_HASH } }));
    assert.deepEqual([result.reason, result.line, result.seq], ['past_head', 1, 1]);
    assert.match(result.message, /records 1 to 3 \(3\) are past the stored head \(seq 0\)/);
  });

  test('a stored head that disagrees with its record: head_mismatch', () => {
    const records = chain(5);
    const result = broken(verifyChain(lines(records), { storedHead: { seq: 4, hash: 'e'.repeat(64) } }));
    assert.deepEqual([result.reason, result.line, result.seq], ['head_mismatch', 4, 4]);
  });

  test('retention: a chain starting later passes, noted; --from-genesis refuses it', () => {
    const text = lines(chain(4, 101));
    const result = verifyChain(text);
    assert.equal(result.ok, true);
    assert.equal(result.ok && result.trimmed, true);
    assert.match(result.message, /starts at seq 101: earlier records were removed \(retention\)/);
    const strict = broken(verifyChain(text, { fromGenesis: true }));
    assert.deepEqual([strict.reason, strict.line, strict.seq], ['missing_records', 1, 101]);
  });

  test('--expect-head: found anywhere in the chain passes; absent is head_mismatch', () => {
    const records = chain(5);
    assert.equal(verifyChain(lines(records), { expectHead: (records[2] as AuditRecord).hash }).ok, true);
    const result = broken(verifyChain(lines(records), { expectHead: 'd'.repeat(64) }));
    assert.equal(result.reason, 'head_mismatch');
    assert.match(result.message, /no record has the expected head hash d{64}/);
  });

  test('an unterminated last line: unterminated', () => {
    const verifier = createChainVerifier();
    verifier.beginFile('audit.jsonl', null);
    const [a, b] = lines(chain(2));
    assert.equal(verifier.line(a as string, 1, true), null);
    const failure = verifier.line((b as string).slice(0, 40), 2, false);
    assert.equal(failure?.reason, 'unterminated');
    assert.equal(verifier.result().ok, false);
  });

  test('a rotated file whose first record is not the seq its name promises: malformed', () => {
    const verifier = createChainVerifier();
    verifier.beginFile('audit.000000000002.jsonl', 2);
    const failure = verifier.line(lines(chain(1))[0] as string, 1, true);
    assert.equal(failure?.reason, 'malformed');
    assert.match(failure?.message ?? '', /name says it starts at seq 2, but its first record is seq 1/);
  });
});
