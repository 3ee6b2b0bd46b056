// Was the change of a write-ahead record made (docs/audit.md, "Write-ahead")?
// Judged after a crash (change-recovery.ts) and after a store error that may
// have come after the write (write-ahead.ts). Two witnesses, pure: the records
// of the same target after it on the chain (each was decided on the store as
// it then was, so its `before` shows whether this change was there), and,
// when there are none, the store as it is now. The two readers at the end are
// the I/O around them.
import type { AuditRecord } from '../audit/audit-record.ts';
import { canonicalJson } from '../audit/audit-record.ts';
import { adminTokenAuditFields, type AdminTokenRecord } from '../keys/admin-token.ts';
import { KeyNotFoundError } from '../keys/errors.ts';
import type { AdminTokenStore } from './admin-token-store-port.ts';
import { auditKeyView } from './key-audit-view.ts';
import type { KeyRecord, KeyStore } from './key-store-port.ts';

export type ChangeVerdict = { made: true } | { made: false; reason: string };

/** What a verdict reads of a record: a write-ahead event before it has a seq will do. */
export type JudgedChange = Pick<AuditRecord, 'action' | 'after'>;

const NOT_WRITTEN = 'the process stopped after recording the change and before writing it';

/**
 * Was the change of the open write-ahead record `record` made? `current` is the key the store
 * holds now (null: none with the record's target). A create is made when the key exists (its
 * id was drawn at random for it); an update, rotate or revoke when the key's non-secret
 * fields are exactly the record's `after` (status aside: it depends on the time it is read).
 */
export function keyChangeVerdict(record: JudgedChange, current: KeyRecord | null): ChangeVerdict {
  switch (record.action) {
    case 'key.create':
      return current !== null ? { made: true } : { made: false, reason: `the key is not in the store: ${NOT_WRITTEN}` };
    case 'key.update':
    case 'key.rotate':
    case 'key.revoke': {
      if (current === null) return { made: false, reason: 'the key is not in the store' };
      if (record.after !== null && withoutStatus(auditKeyView(current, 0)) === withoutStatus(record.after)) return { made: true };
      return { made: false, reason: `the key in the store is not as this record's after: ${NOT_WRITTEN}` };
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
export function tokenChangeVerdict(record: JudgedChange, current: AdminTokenRecord | null): ChangeVerdict {
  switch (record.action) {
    case 'token.create':
      return current !== null ? { made: true } : { made: false, reason: `the token is not in the store: ${NOT_WRITTEN}` };
    case 'token.revoke':
      if (current === null) return { made: false, reason: 'the token is not in the store' };
      if (record.after !== null && canonicalJson(adminTokenAuditFields(current)) === canonicalJson(record.after)) return { made: true };
      return { made: false, reason: `the token in the store is not as this record's after: ${NOT_WRITTEN}` };
    default:
      return keyChangeVerdict(record, null);
  }
}

/** Is this a key or token change another could have been decided on (a change with a `before`)? */
export function isDecidedChange(record: AuditRecord): boolean {
  return (record.action.startsWith('key.') || record.action.startsWith('token.')) && record.action !== 'token.use' && record.action !== 'token.refused' && record.before !== null;
}

/**
 * The verdict the chain gives on write-ahead record `record`, from `later`: records after it
 * (any order, any target: only its target's decided changes count). Each later change of
 * the same key or token was decided on the store as it was then, so its `before` is that
 * state: when one is this record's `after` (a create: when there is one at all), the change
 * was made. When later changes exist and none shows it, it was not. When there is none,
 * null: only the store can tell (keyChangeVerdict, tokenChangeVerdict). The store alone
 * would be wrong here: a later change moved it on from this record's `after`.
 */
export function chainVerdict(record: AuditRecord, later: readonly AuditRecord[]): ChangeVerdict | null {
  const after = record.after;
  let first: AuditRecord | null = null;
  for (const other of later) {
    if (other.seq <= record.seq || other.target !== record.target || !isDecidedChange(other)) continue;
    if (record.action.endsWith('.create')) return { made: true };
    if (after !== null && other.before !== null && withoutStatus(other.before) === withoutStatus(after)) return { made: true };
    if (first === null || other.seq < first.seq) first = other;
  }
  if (first === null) return null;
  return { made: false, reason: `the later change of its ${record.action.startsWith('token.') ? 'token' : 'key'} (seq ${first.seq}) and those after it did not start from this record's after: ${NOT_WRITTEN}` };
}

function withoutStatus(view: { readonly [field: string]: unknown }): string {
  const { status: _status, ...rest } = view;
  return canonicalJson(rest);
}

/** The key `id` as the store holds it now; null when it has none. Throws when the store cannot be read. */
export async function readCurrentKey(keys: KeyStore, id: string | null): Promise<KeyRecord | null> {
  if (id === null) return null;
  try {
    return await keys.get(id);
  } catch (error) {
    if (error instanceof KeyNotFoundError) return null;
    throw error;
  }
}

/** The token `id` as the store holds it now; null when it has none (or there is no token store). Throws when the store cannot be read. */
export async function readCurrentToken(tokens: AdminTokenStore | undefined, id: string | null): Promise<AdminTokenRecord | null> {
  if (tokens === undefined || id === null) return null;
  return (await tokens.list()).find((token) => token.id === id) ?? null;
}
