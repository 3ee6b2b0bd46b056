// Verification of the audit chain (docs/audit.md, "The chain").
// Pure: the file log and the Redis log feed it stored lines in seq order, one
// at a time, so a chain of any length is checked in bounded memory; the first
// failure latches and names the file, the line and the seq.
import { GENESIS_HASH, parseRecordLine, recordHash, AuditRecordParseError } from './audit-record.ts';

export const CHAIN_FAILURES = ['hash_mismatch', 'prev_mismatch', 'seq_gap', 'seq_order', 'malformed', 'unterminated', 'head_mismatch', 'missing_records', 'past_head', 'missing_head'] as const;
export type ChainFailureReason = (typeof CHAIN_FAILURES)[number];

export interface ChainHead {
  seq: number;
  hash: string;
}

/**
 * The head a store keeps beside its records. `next` is the hash of the record
 * an append is about to write, set before the record is written: a crash
 * after the record and before the head moved leaves exactly that record past
 * the head, and no other record past the head can be explained by a crash.
 */
export interface StoredHead extends ChainHead {
  next?: string | null;
  /** Written without `"v":2`, by a version that did not announce its records: one record past it is a crash's. */
  legacy?: boolean;
}

export interface ChainIntact {
  ok: true;
  /** Records checked. */
  count: number;
  /** First and last seq checked; null for an empty chain. */
  firstSeq: number | null;
  lastSeq: number | null;
  /** The last record's seq and hash ({0, 64 zeros} for an empty chain). */
  head: ChainHead;
  /** True when the chain starts after seq 1 (older records removed by retention). */
  trimmed: boolean;
  message: string;
}

export interface ChainBroken {
  ok: false;
  reason: ChainFailureReason;
  /** The file (or "redis list") and 1-based line of the failure; null when it is not one line's (a head). */
  file: string | null;
  line: number | null;
  seq: number | null;
  message: string;
}

export type AuditVerification = ChainIntact | ChainBroken;

export interface ChainVerifierOptions {
  /** Refuse a chain that does not start at seq 1 (retention removed its start). */
  fromGenesis?: boolean;
  /**
   * The head the store keeps beside the chain (audit.head, the Redis head key): a truncation leaves
   * it ahead; records past it are a break unless one record, the one it announced (`next`).
   * Null: the store keeps no head (none is checked).
   */
  storedHead?: StoredHead | null;
  /**
   * The head read again once the records' extent was fixed (a reader without the appenders' lock):
   * records appended between the two reads are not past it. Judges past_head; storedHead, read
   * first, judges truncation and hashes.
   */
  headAfterRecords?: StoredHead | null;
  /** A hash the operator kept elsewhere (the log stream): some record of the chain must have it. */
  expectHead?: string | null;
  /**
   * The store's head is missing (audit.head deleted, the Redis head key lost): records are then
   * a break (missing_head), whose message says how to write the head they would have.
   */
  missingHead?: MissingHead;
}

/** A head that should be there and is not: its name, and how to write it for a chain ending at `last`. */
export interface MissingHead {
  name: string;
  write(last: ChainHead): string;
}

export interface ChainVerifier {
  /** A new file begins; `nameSeq` is the first seq its name promises (rotated files), null for none. */
  beginFile(file: string, nameSeq: number | null): void;
  /** One stored line, without its newline; `terminated` false for a last line that had none. Returns the failure, if any. */
  line(text: string, lineNumber: number, terminated: boolean): ChainBroken | null;
  /** Fail from outside (a line too long to read, a file that cannot be read). */
  fail(failure: ChainBroken): ChainBroken;
  result(): AuditVerification;
}

export function createChainVerifier(options: ChainVerifierOptions = {}): ChainVerifier {
  let failure: ChainBroken | null = null;
  let file: string | null = null;
  let nameSeq: number | null = null;
  let firstInFile = true;
  let count = 0;
  let firstSeq: number | null = null;
  let last: ChainHead = { seq: 0, hash: GENESIS_HASH };
  let expectedFound = false;
  let storedHeadChecked = false;
  const storedHead = options.storedHead ?? null;
  const pastRef = options.headAfterRecords ?? storedHead;
  /** Where the first record past the stored head is, for the message. */
  let pastHeadAt: { file: string | null; line: number } | null = null;

  const broken = (reason: ChainFailureReason, line: number | null, seq: number | null, what: string): ChainBroken => {
    failure = { ok: false, reason, file, line, seq, message: `${where(file, line, seq)}: ${what}` };
    return failure;
  };

  return {
    beginFile(name, seq) {
      file = name;
      nameSeq = seq;
      firstInFile = true;
    },
    line(text, lineNumber, terminated) {
      if (failure !== null) return failure;
      if (!terminated) {
        return broken('unterminated', lineNumber, null, 'the last line is incomplete (no newline): a write was cut short by a crash, or the file was cut; the next append repairs it (docs/audit.md)');
      }
      let record;
      try {
        record = parseRecordLine(text);
      } catch (error) {
        if (!(error instanceof AuditRecordParseError)) throw error;
        return broken('malformed', lineNumber, seqOf(text), `not a valid audit record: ${error.message}`);
      }
      const { seq } = record;
      if (firstInFile && nameSeq !== null && seq !== nameSeq) {
        return broken('malformed', lineNumber, seq, `the file's name says it starts at seq ${nameSeq}, but its first record is seq ${seq}: the file was renamed or edited`);
      }
      firstInFile = false;
      if (recordHash(record) !== record.hash) return broken('hash_mismatch', lineNumber, seq, 'hash does not match its content: the record was edited');
      if (count === 0) {
        if (seq === 1 && record.prev !== GENESIS_HASH) return broken('prev_mismatch', lineNumber, seq, 'the first record of the chain must have prev 64 zeros: it was rewritten');
        if (seq > 1 && options.fromGenesis === true) {
          return broken('missing_records', lineNumber, seq, `the chain starts at seq ${seq}; records 1 to ${seq - 1} were removed (retention or deletion), and --from-genesis was given`);
        }
      } else if (seq <= last.seq) {
        return broken('seq_order', lineNumber, seq, `seq ${seq} follows seq ${last.seq}: records were reordered or repeated`);
      } else if (seq > last.seq + 1) {
        const gap = seq === last.seq + 2 ? `record ${last.seq + 1} is` : `records ${last.seq + 1} to ${seq - 1} are`;
        return broken('seq_gap', lineNumber, seq, `seq ${seq} follows seq ${last.seq}: ${gap} missing here (removed, or moved)`);
      } else if (record.prev !== last.hash) {
        return broken('prev_mismatch', lineNumber, seq, `prev does not match the hash of seq ${last.seq}: the record before it was rewritten or replaced`);
      }
      if (storedHead !== null && seq === storedHead.seq) {
        storedHeadChecked = true;
        if (record.hash !== storedHead.hash) {
          return broken('head_mismatch', lineNumber, seq, `the stored head says seq ${seq} has hash ${storedHead.hash}, but it has ${record.hash}: the chain was rewritten from there on`);
        }
      }
      if (pastRef !== null && seq > pastRef.seq && pastHeadAt === null) pastHeadAt = { file, line: lineNumber };
      if (options.expectHead !== undefined && options.expectHead !== null && record.hash === options.expectHead) expectedFound = true;
      if (count === 0) firstSeq = seq;
      count += 1;
      last = { seq, hash: record.hash };
      return null;
    },
    fail(external) {
      failure ??= external;
      return failure;
    },
    result() {
      if (failure !== null) return failure;
      file = null;
      if (storedHead !== null && storedHead.seq > last.seq) {
        const what = count === 0 ? 'there are no records' : `the last record is seq ${last.seq}`;
        return broken('missing_records', null, last.seq === 0 ? null : last.seq, `the stored head says the chain reached seq ${storedHead.seq}, but ${what}: ${storedHead.seq === last.seq + 1 ? `record ${storedHead.seq} was` : `records ${last.seq + 1} to ${storedHead.seq} were`} removed (the log was truncated)`);
      }
      if (storedHead !== null && !storedHeadChecked && storedHead.seq >= (firstSeq ?? 1) && storedHead.seq > 0) {
        return broken('head_mismatch', null, storedHead.seq, `the stored head names seq ${storedHead.seq}, which is not in the chain`);
      }
      if (options.missingHead !== undefined && last.seq > 0) {
        return broken('missing_head', null, last.seq, missingHeadMessage(options.missingHead, last));
      }
      if (pastRef !== null && pastHeadAt !== null && !(last.seq === pastRef.seq + 1 && (pastRef.next === last.hash || pastRef.legacy === true))) {
        ({ file } = pastHeadAt);
        return broken('past_head', pastHeadAt.line, pastRef.seq + 1, pastHeadMessage(pastRef, last.seq));
      }
      if (options.fromGenesis === true && count === 0 && storedHead !== null && storedHead.seq > 0) {
        return broken('missing_records', null, null, 'there are no records, but the stored head says there were');
      }
      if (options.expectHead !== undefined && options.expectHead !== null && !expectedFound) {
        return broken('head_mismatch', null, null, `no record has the expected head hash ${options.expectHead}: the chain was rewritten, or the records up to it were removed`);
      }
      const trimmed = firstSeq !== null && firstSeq > 1;
      const span = count === 0 ? 'no records' : `${count} record${count === 1 ? '' : 's'}, seq ${firstSeq} to ${last.seq}`;
      const note = trimmed ? `; starts at seq ${firstSeq}: earlier records were removed (retention)` : '';
      return { ok: true, count, firstSeq, lastSeq: count === 0 ? null : last.seq, head: last, trimmed, message: `audit chain intact: ${span}, head ${last.hash}${note}` };
    },
  };
}

/** verifyChain over whole lines (tests, small chains): each line is one record, all terminated. */
export function verifyChain(lines: readonly string[], options: ChainVerifierOptions & { file?: string } = {}): AuditVerification {
  const verifier = createChainVerifier(options);
  verifier.beginFile(options.file ?? 'audit.jsonl', null);
  for (let i = 0; i < lines.length; i++) {
    if (verifier.line(lines[i] as string, i + 1, true) !== null) break;
  }
  return verifier.result();
}

/**
 * Records storedHead.seq+1 .. lastSeq are past the head and a crash does not explain them:
 * a crash leaves one record at most, the one the head announced before it was written.
 */
export function pastHeadMessage(storedHead: StoredHead, lastSeq: number): string {
  const from = storedHead.seq + 1;
  const which =
    lastSeq === from
      ? `record ${from} is past the stored head (seq ${storedHead.seq}) and is not the record the head announced before its append (a crash leaves only that one)`
      : `records ${from} to ${lastSeq} (${lastSeq - from + 1}) are past the stored head (seq ${storedHead.seq}); a crash leaves one at most, the one the head announced`;
  const [they, them] = lastSeq === from ? ['it was', 'it'] : ['they were', 'them'];
  return `${which}: ${they} appended by something other than portcullis, or the head was replaced with an older copy. List ${them} (portcullis audit list --before ${lastSeq + 1} --json), compare with the "audit" lines of the log stream, then move ${them} out of the log (docs/audit.md, "Records past the head"); until then appends are refused`;
}

/**
 * Records and no head: an append writes the head before its first record, so no crash explains
 * it; the head was deleted. The records may well be portcullis's (the log stream tells), and
 * then the head to write is the last record's.
 */
export function missingHeadMessage(head: MissingHead, last: ChainHead): string {
  return `${head.name} is missing, but the chain has records (up to seq ${last.seq}): no crash removes the head once written. If the records are portcullis's (compare the last record's hash, ${last.hash}, with the latest "audit" line of the log stream), ${head.write(last)} (docs/audit.md, "A missing head"); until then appends are refused`;
}

function where(file: string | null, line: number | null, seq: number | null): string {
  const at = file === null ? 'the chain' : line === null ? file : `${file} line ${line}`;
  return seq === null ? at : `${at} (seq ${seq})`;
}

/** The seq of a line that does not parse as a record, when one can be seen: for the message only. */
function seqOf(text: string): number | null {
  const match = /"seq":(\d{1,15})[,}]/.exec(text.slice(0, 4096));
  return match === null ? null : Number(match[1]);
}
