// What `portcullis serve` does at start with write-ahead records left open by
// a crash (docs/audit.md, "Write-ahead"): a key or admin token change is
// recorded before the store writes it, and settled once written, so an open
// record is a change that may or may not have been written when the process
// died. Each is judged by the later changes of its key or token on the chain,
// or, when it is the last, against its store (change-verdict.ts): made, the
// record stands and is settled; not made, a `change.incomplete` record says so
// (naming its seq), then it is settled.
import type { AuditEvent, AuditTrail } from '../audit/audit-event.ts';
import { MAX_LIST_LIMIT, type AuditLog } from '../audit/audit-log.ts';
import type { AuditRecord } from '../audit/audit-record.ts';
import { incompleteEvent } from '../audit/audit-trail.ts';
import type { Logger } from '../log/logger.ts';
import type { AdminTokenStore } from './admin-token-store-port.ts';
import { chainVerdict, isDecidedChange, keyChangeVerdict, readCurrentKey, readCurrentToken, tokenChangeVerdict } from './change-verdict.ts';
import type { KeyStore } from './key-store-port.ts';

export { keyChangeVerdict, tokenChangeVerdict, type ChangeVerdict } from './change-verdict.ts';

/** Who writes the outcome of a change the gateway found open at start. */
export const RECOVERY_WHO: Pick<AuditEvent, 'actor' | 'source'> = { actor: { kind: 'system', id: 'serve' }, source: 'start' };

export interface OpenChangesOutcome {
  /** Seqs whose change was made (settled). */
  made: number[];
  /** Seqs whose change was not made (a change.incomplete record appended, then settled). */
  notMade: number[];
  /** Open seqs with no record in the log (announced, never written): settled. */
  missing: number[];
  /** Open records left open: perhaps in flight on another instance (a store without a lock). */
  young: number[];
}

/**
 * Where the store takes no lock for its changes (Redis), an open record this young may be a
 * change another instance is making right now: it is left open for a later start.
 */
export const IN_FLIGHT_MS = 5 * 60_000;

export interface ResolveOptions {
  log: AuditLog;
  keys: KeyStore;
  /** The admin token store, for token.create and token.revoke records. */
  tokens?: AdminTokenStore;
  trail: AuditTrail;
  logger: Logger;
  /** Milliseconds since the epoch, to tell young open records (Redis) from old ones. */
  clock?: () => number;
}

/**
 * Resolves every open write-ahead record of `log` against `keys`; each outcome is logged
 * (warn). With a store whose changes take a lock (the files), under that lock, so a change
 * another process is making is either written or not begun; otherwise records younger than
 * IN_FLIGHT_MS are left open.
 */
export async function resolveOpenChanges(options: ResolveOptions): Promise<OpenChangesOutcome> {
  const { keys, tokens } = options;
  if (keys.whileNoChange === undefined) return resolveOpen(options, (options.clock ?? Date.now)() - IN_FLIGHT_MS);
  // Both stores' locks, in the order no writer reverses (a writer takes one of them, then the audit log's).
  const whileNoTokenChange = tokens?.whileNoChange?.bind(tokens) ?? (<T>(work: () => Promise<T>) => work());
  return keys.whileNoChange(() => whileNoTokenChange(() => resolveOpen(options, null)));
}

async function resolveOpen(options: ResolveOptions, olderThanMs: number | null): Promise<OpenChangesOutcome> {
  const { log, keys, trail, logger } = options;
  const outcome: OpenChangesOutcome = { made: [], notMade: [], missing: [], young: [] };
  const seqs = await log.openSeqs();
  if (seqs.length === 0) return outcome;
  const { records, later } = await openAndLaterChanges(log, seqs);
  for (const seq of seqs) {
    const record = records.get(seq);
    if (record !== undefined && olderThanMs !== null && Date.parse(record.time) > olderThanMs) {
      outcome.young.push(seq);
      logger.info('audit: an open write-ahead record may be a change another instance is making; it is left open for a later start', { seq, action: record.action, target: record.target });
      continue;
    }
    if (record === undefined) {
      outcome.missing.push(seq);
      logger.warn('audit: an open write-ahead record is not in the log; it is closed', { seq });
      await log.settle(seq);
      continue;
    }
    const verdict =
      chainVerdict(record, later) ??
      (record.action.startsWith('token.') ? tokenChangeVerdict(record, await readCurrentToken(options.tokens, record.target)) : keyChangeVerdict(record, await readCurrentKey(keys, record.target)));
    if (verdict.made) {
      outcome.made.push(seq);
      logger.warn('audit: a change recorded before a crash was made; its record stands', { seq, action: record.action, target: record.target });
    } else {
      outcome.notMade.push(seq);
      logger.warn('audit: a change recorded before a crash was not made; a change.incomplete record says so', { seq, action: record.action, target: record.target, reason: verdict.reason });
      await trail.record(incompleteEvent(RECOVERY_WHO, record, verdict.reason));
    }
    await log.settle(seq);
  }
  return outcome;
}

/**
 * The open records `seqs` (those in the log), and every key or token change from the oldest
 * of them on (the chain's witnesses, chainVerdict), read back from the end: a page at a time,
 * keeping only those (admin changes are rare next to requests).
 */
async function openAndLaterChanges(log: AuditLog, seqs: readonly number[]): Promise<{ records: Map<number, AuditRecord>; later: AuditRecord[] }> {
  const wanted = new Set(seqs);
  const records = new Map<number, AuditRecord>();
  const later: AuditRecord[] = [];
  const lowest = Math.min(...wanted);
  let before: number | undefined;
  do {
    const page = await log.list(before === undefined ? { limit: MAX_LIST_LIMIT } : { before, limit: MAX_LIST_LIMIT });
    for (const record of page.records) {
      if (record.seq < lowest) break;
      if (wanted.has(record.seq)) records.set(record.seq, record);
      if (isDecidedChange(record)) later.push(record);
    }
    before = page.nextBefore ?? undefined;
  } while (before !== undefined && before > lowest);
  return { records, later };
}

/**
 * What `serve` does with the chain before it listens: the tail judged against the head
 * (AuditLogError when records are past it that no crash explains: the caller refuses to
 * start), the head written to the log stream (a witness for `audit verify --expect-head`),
 * then the open write-ahead records resolved.
 */
export async function recoverAuditChain(options: ResolveOptions): Promise<OpenChangesOutcome> {
  const head = await options.log.checkTail();
  options.logger.info('audit chain head', { seq: head.seq, hash: head.hash, location: options.log.location });
  return resolveOpenChanges(options);
}
