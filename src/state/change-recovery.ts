// What `portcullis serve` does at start with write-ahead records left open by
// a crash (docs/audit.md, "Write-ahead"): a key or admin token change is
// recorded before the store writes it, and settled once written, so an open
// record is a change that may or may not have been written when the process
// died. Each is checked against its store: made, the record stands and is
// settled; not made, a `change.incomplete` record says so (naming its seq),
// then it is settled.
import type { AuditEvent, AuditTrail } from '../audit/audit-event.ts';
import { recordsBySeq, type AuditLog } from '../audit/audit-log.ts';
import { canonicalJson, type AuditRecord } from '../audit/audit-record.ts';
import { incompleteEvent } from '../audit/audit-trail.ts';
import { KeyNotFoundError } from '../keys/errors.ts';
import type { Logger } from '../log/logger.ts';
import { auditKeyView } from './audited-key-store.ts';
import { adminTokenAuditFields, type AdminTokenRecord } from '../keys/admin-token.ts';
import type { AdminTokenStore } from './admin-token-store-port.ts';
import type { KeyRecord, KeyStore } from './key-store-port.ts';

export type ChangeVerdict = { made: true } | { made: false; reason: string };

/** Who writes the outcome of a change the gateway found open at start. */
export const RECOVERY_WHO: Pick<AuditEvent, 'actor' | 'source'> = { actor: { kind: 'system', id: 'serve' }, source: 'start' };

/**
 * Was the change of the open write-ahead record `record` made? `current` is the key the store
 * holds now (null: none with the record's target). A create is made when the key exists (its
 * id was drawn at random for it); an update, rotate or revoke when the key's non-secret
 * fields are exactly the record's `after` (status aside: it depends on the time it is read).
 */
export function keyChangeVerdict(record: AuditRecord, current: KeyRecord | null): ChangeVerdict {
  switch (record.action) {
    case 'key.create':
      return current !== null ? { made: true } : { made: false, reason: 'the key is not in the store: the process stopped after recording the change and before writing it' };
    case 'key.update':
    case 'key.rotate':
    case 'key.revoke': {
      if (current === null) return { made: false, reason: 'the key is not in the store' };
      if (record.after !== null && withoutStatus(auditKeyView(current, 0)) === withoutStatus(record.after)) return { made: true };
      return { made: false, reason: "the key in the store is not as this record's after: the process stopped after recording the change and before writing it" };
    }
    default:
      return { made: false, reason: `a ${record.action} record cannot be checked against the key store` };
  }
}

/**
 * Was the change of the open write-ahead token record `record` made? `current` is the token
 * the store holds now (null: none with the record's target). A create is made when the token
 * exists (its id was drawn at random for it); a revoke when its revokedAt is the record's.
 */
export function tokenChangeVerdict(record: AuditRecord, current: AdminTokenRecord | null): ChangeVerdict {
  switch (record.action) {
    case 'token.create':
      return current !== null ? { made: true } : { made: false, reason: 'the token is not in the store: the process stopped after recording the change and before writing it' };
    case 'token.revoke':
      if (current === null) return { made: false, reason: 'the token is not in the store' };
      if (record.after !== null && canonicalJson(adminTokenAuditFields(current)) === canonicalJson(record.after)) return { made: true };
      return { made: false, reason: "the token in the store is not as this record's after: the process stopped after recording the change and before writing it" };
    default:
      return keyChangeVerdict(record, null);
  }
}

function withoutStatus(view: { readonly [field: string]: unknown }): string {
  const { status: _status, ...rest } = view;
  return canonicalJson(rest);
}

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
  const records = new Map((await recordsBySeq(log, seqs)).map((record) => [record.seq, record]));
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
    const verdict = record.action.startsWith('token.') ? tokenChangeVerdict(record, await currentToken(options.tokens, record.target)) : keyChangeVerdict(record, await currentKey(keys, record.target));
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

async function currentToken(tokens: AdminTokenStore | undefined, id: string | null): Promise<AdminTokenRecord | null> {
  if (tokens === undefined || id === null) return null;
  return (await tokens.list()).find((token) => token.id === id) ?? null;
}

async function currentKey(keys: KeyStore, id: string | null): Promise<KeyRecord | null> {
  if (id === null) return null;
  try {
    return await keys.get(id);
  } catch (error) {
    if (error instanceof KeyNotFoundError) return null;
    throw error;
  }
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
