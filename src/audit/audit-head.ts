// The head a store keeps beside the chain (docs/audit.md, "The head"), and
// what an appender makes of the chain's last record compared with it. Pure:
// the file log and the Redis log read and write it.
//
// An append announces its record in the head before writing it (`next`, the
// record's hash), then moves the head onto it. So a crash leaves at most that
// one record past the head, and any other record past the head was written by
// something else: appends refuse to build on it, verify reports it.
//
// `open` lists the seqs of write-ahead records whose change is not known to
// be made yet (src/state/write-ahead.ts): a record written before its change,
// settled once the change is made. After a crash the ones left open are
// resolved against the store.
import { missingHeadMessage, pastHeadMessage, type ChainHead, type MissingHead, type StoredHead } from './audit-chain.ts';
import { GENESIS_HASH } from './audit-record.ts';

export interface HeadState extends StoredHead {
  next: string | null;
  open: readonly number[];
}

const HEX64 = /^[0-9a-f]{64}$/;
/** Open seqs kept at most: a write-ahead record is open only while its change is written. */
export const MAX_OPEN = 4096;

export const EMPTY_HEAD: HeadState = { seq: 0, hash: GENESIS_HASH, next: null, open: [] };

/** The head format this version writes: a head without it was written by one that did not announce records. */
const HEAD_FORMAT = 2;

/** The head as stored: `{"seq":N,"hash":"...","v":2}`, with `next` and `open` only when set. */
export function headJson(head: HeadState): string {
  return JSON.stringify({ seq: head.seq, hash: head.hash, ...(head.next === null ? {} : { next: head.next }), ...(head.open.length === 0 ? {} : { open: head.open }), v: HEAD_FORMAT });
}

/** How to write the head file `name` back for a chain ending at `last`, for a missing head's message. */
export function headFileWrite(name: string): MissingHead['write'] {
  return (last) => `write ${headJson({ seq: last.seq, hash: last.hash, next: null, open: [] })} to ${name}`;
}

/** The stored head, or null when it is not one (the caller names the file and what to do). */
export function parseHeadJson(text: string): HeadState | null {
  let value: { seq?: unknown; hash?: unknown; next?: unknown; open?: unknown; v?: unknown };
  try {
    value = JSON.parse(text) as typeof value;
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { seq, hash, next, open, v } = value;
  if (v !== undefined && v !== HEAD_FORMAT) return null;
  if (!Number.isSafeInteger(seq) || (seq as number) < 0 || typeof hash !== 'string' || !HEX64.test(hash)) return null;
  if (next !== undefined && (typeof next !== 'string' || !HEX64.test(next))) return null;
  if (open !== undefined && (!Array.isArray(open) || open.length > MAX_OPEN || !open.every((s) => Number.isSafeInteger(s) && (s as number) > 0))) return null;
  return { seq: seq as number, hash, next: next ?? null, open: (open as number[] | undefined) ?? [], ...(v === undefined ? { legacy: true } : {}) };
}

export type TailJudgement =
  /** Append on `base`; `problem` (a repair or a truncation) is logged as a warning. */
  | { ok: true; base: ChainHead; open: readonly number[]; problem: string | null }
  /** Do not append: the tail is not what portcullis wrote. */
  | { ok: false; problem: string };

/**
 * What an appender makes of the last record `last` ({0, zeros}: none) and the stored head
 * (null: none). A head ahead of the records (a truncation) is built on, so the gap stays
 * visible; the one announced record past the head (a crash) is adopted; anything else
 * past the head, or a last record that is not the head's, is refused.
 */
export function judgeTail(stored: HeadState | null, last: ChainHead, headName: string, writeHead: MissingHead['write'] = headFileWrite(headName)): TailJudgement {
  if (stored === null && last.seq > 0) return { ok: false, problem: missingHeadMessage({ name: headName, write: writeHead }, last) };
  const head = stored ?? EMPTY_HEAD;
  if (head.seq > last.seq) {
    return {
      ok: true,
      base: { seq: head.seq, hash: head.hash },
      open: head.open.filter((s) => s <= head.seq),
      problem: `${headName} says the chain reached seq ${head.seq} but the records end at seq ${last.seq}: records were removed; the chain continues from the head, and audit verify reports the gap`,
    };
  }
  if (head.seq === last.seq) {
    if (head.hash !== last.hash) {
      return { ok: false, problem: `the last record (seq ${last.seq}) has hash ${last.hash}, but ${headName} says ${head.hash}: the record was replaced; run portcullis audit verify` };
    }
    // An announced record that was never written (a crash before it) is no longer open.
    return { ok: true, base: last, open: head.open.filter((s) => s <= last.seq), problem: null };
  }
  if (last.seq === head.seq + 1 && head.next === last.hash) {
    return { ok: true, base: last, open: head.open, problem: `the last append was cut short by a crash after its record (seq ${last.seq}) was written; ${headName} now names it` };
  }
  // A version that wrote the head only after the record could leave one record past it in a
  // crash, unannounced. The first head this version writes ends that allowance.
  if (last.seq === head.seq + 1 && head.legacy === true) {
    return { ok: true, base: last, open: head.open, problem: `${headName} was written by an earlier version of portcullis and is one record behind (seq ${last.seq}): that version's append was cut short by a crash after its record was written; ${headName} now names it` };
  }
  return { ok: false, problem: pastHeadMessage(head, last.seq) };
}
