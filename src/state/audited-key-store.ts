// How a key change becomes an audit event (docs/audit.md, "What each door records"), in one
// place: a KeyStore decorator that every door (the CLI's keys commands, the
// admin API's key handlers, and through them the dashboard) wraps around the
// real store with who is acting. Each create, update, rotate and revoke that
// the store carries out is recorded exactly once, after it succeeded and
// before the call returns; a change the store refuses (unknown id, revoked
// key, bad setting) throws as before and records nothing. Reads pass through.
//
// What a record holds of a key is auditKeyView: the non-secret fields only.
// The raw key (returned by create and rotate) and its hash never reach the
// trail.
import type { AuditActor, AuditTrail, AuditValue } from '../audit/audit-event.ts';
import { keyStatus } from '../keys/key-settings.ts';
import type { KeyLimits } from '../limits/key-limits.ts';
import type { KeyRecord, KeyStore } from './key-store-port.ts';

type AuditFields = { readonly [field: string]: AuditValue };

/** Who is changing keys through a wrapped store, as the records name them. */
export interface AuditWho {
  actor: AuditActor;
  /** The client address, "cli" for a command. */
  source: string;
  /** Added to every record (the CLI's sudo user); never a secret. */
  detail?: AuditFields;
}

function limitsValue(limits: KeyLimits): AuditFields {
  const { tokenBudget, costBudget } = limits;
  return {
    requestsPerMinute: limits.requestsPerMinute,
    tokensPerMinute: limits.tokensPerMinute,
    concurrentRequests: limits.concurrentRequests,
    tokenBudget: tokenBudget === null ? null : { tokens: tokenBudget.tokens, period: tokenBudget.period },
    costBudget: costBudget === null ? null : { amount: costBudget.amount, period: costBudget.period },
  };
}

/**
 * The non-secret view of a key that audit records carry as before/after:
 * {id, name, prefix, status, expiresAt, allowedAliases, limits, revokedAt,
 * rotatedAt}. Built field by field, so nothing else (the hash, last use) can
 * slip in. `status` is judged at `nowMs`.
 */
export function auditKeyView(record: KeyRecord, nowMs: number = Date.now()): AuditFields {
  return {
    id: record.id,
    name: record.name,
    prefix: record.prefix,
    status: keyStatus(record, nowMs),
    expiresAt: record.expiresAt,
    allowedAliases: record.allowedAliases === null ? null : [...record.allowedAliases],
    limits: limitsValue(record.limits),
    revokedAt: record.revokedAt,
    rotatedAt: record.rotatedAt,
  };
}

/**
 * `store`, with every successful change recorded to `trail` as `who`.
 *
 * `before` of an update, rotate or revoke is the key as read just before the
 * change (a separate read: a change made by another process in between is not
 * seen). Should that read fail while the change itself succeeds (a broken
 * keys-last-used.json fails reads but not changes), the change is still
 * recorded, with before null and detail.beforeUnreadable true.
 *
 * An update that changes nothing is still recorded (before equals after): it
 * was asked for and it rewrote the record.
 */
export function auditedKeyStore(store: KeyStore, trail: AuditTrail, who: AuditWho, clock: () => number = Date.now): KeyStore {
  const record = (action: 'key.create' | 'key.update' | 'key.rotate' | 'key.revoke', target: string, before: KeyRecord | null, after: KeyRecord, beforeUnreadable = false): Promise<void> => {
    const nowMs = clock();
    const detail = beforeUnreadable ? { ...who.detail, beforeUnreadable: true } : who.detail;
    return trail.record({
      actor: who.actor,
      source: who.source,
      action,
      target,
      before: before === null ? null : auditKeyView(before, nowMs),
      after: auditKeyView(after, nowMs),
      ...(detail === undefined ? {} : { detail }),
    });
  };

  /** The key before a change; null (and unreadable) when it could not be read. The change itself decides whether the id exists. */
  const readBefore = async (id: string): Promise<{ before: KeyRecord | null; unreadable: boolean }> => {
    try {
      return { before: await store.get(id), unreadable: false };
    } catch {
      return { before: null, unreadable: true };
    }
  };

  return {
    get location() {
      return store.location;
    },
    async create(name, settings) {
      const issued = await store.create(name, settings);
      await record('key.create', issued.record.id, null, issued.record);
      return issued;
    },
    async update(id, patch) {
      const { before, unreadable } = await readBefore(id);
      const updated = await store.update(id, patch);
      await record('key.update', id, before, updated, unreadable);
      return updated;
    },
    async rotate(id) {
      const { before, unreadable } = await readBefore(id);
      const issued = await store.rotate(id);
      await record('key.rotate', id, before, issued.record, unreadable);
      return issued;
    },
    async revoke(id) {
      const { before, unreadable } = await readBefore(id);
      const revoked = await store.revoke(id);
      await record('key.revoke', id, before, revoked, unreadable);
      return revoked;
    },
    list: () => store.list(),
    get: (id) => store.get(id),
    reload: () => store.reload(),
    prepareReload: () => store.prepareReload(),
    authenticate: (rawKey) => store.authenticate(rawKey),
    touch: (id) => store.touch(id),
    flushLastUsed: () => store.flushLastUsed(),
    close: () => store.close(),
  };
}
