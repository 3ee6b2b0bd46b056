// How a key change becomes an audit event (docs/audit.md, "What each door records"), in one
// place: a KeyStore decorator that every door (the CLI's keys commands, the
// admin API's key handlers, and through them the dashboard) wraps around the
// real store with who is acting. Each create, update, rotate and revoke is
// recorded exactly once, write-ahead: on the chain before the store writes it
// (see auditedKeyStore).
//
// What a record holds of a key is auditKeyView: the non-secret fields only.
// The raw key (returned by create and rotate) and its hash never reach the
// trail.
import type { AuditActor, AuditEvent, AuditTrail } from '../audit/audit-event.ts';
import type { KeyRecord, KeyStore, WriteAhead } from './key-store-port.ts';
import { keyChangeVerdict, readCurrentKey } from './change-verdict.ts';
import { auditKeyView, type AuditFields } from './key-audit-view.ts';
import { writeAhead } from './write-ahead.ts';

export { auditKeyView };

type KeyAction = 'key.create' | 'key.update' | 'key.rotate' | 'key.revoke';

/** Who is changing keys through a wrapped store, as the records name them. */
export interface AuditWho {
  actor: AuditActor;
  /** The client address, "cli" for a command. */
  source: string;
  /** Added to every record (the CLI's sudo user); never a secret. */
  detail?: AuditFields;
}

/**
 * `store`, with every change recorded to `trail` as `who`, write-ahead
 * (write-ahead.ts): the record is appended (and durable) after the store has
 * decided the change (under its lock, so `before` and `after` are exactly what
 * it writes) and before it writes it; a record that cannot be appended stops
 * the change. A crash between the record and the write leaves the record open;
 * the next start checks it against the store (change-recovery.ts).
 *
 * A change the store refuses before deciding it (unknown id, revoked key, bad
 * setting) throws as before and records nothing. Reads pass through.
 */
export function auditedKeyStore(store: KeyStore, trail: AuditTrail, who: AuditWho, clock: () => number = Date.now): KeyStore {
  const eventOf = (action: KeyAction, before: KeyRecord | null, after: KeyRecord): AuditEvent => {
    const nowMs = clock();
    return {
      actor: who.actor,
      source: who.source,
      action,
      target: after.id,
      before: before === null ? null : auditKeyView(before, nowMs),
      after: auditKeyView(after, nowMs),
      ...(who.detail === undefined ? {} : { detail: who.detail }),
    };
  };

  const recorded = <T>(action: KeyAction, change: (ahead: WriteAhead) => Promise<T>): Promise<T> =>
    writeAhead<KeyRecord, T>(trail, ({ before, after }) => eventOf(action, before, after), change, async (event) => keyChangeVerdict(event, await readCurrentKey(store, event.target)));

  return {
    get location() {
      return store.location;
    },
    create: (name, settings) => recorded('key.create', (ahead) => store.create(name, settings, ahead)),
    update: (id, patch) => recorded('key.update', (ahead) => store.update(id, patch, ahead)),
    rotate: (id) => recorded('key.rotate', (ahead) => store.rotate(id, ahead)),
    revoke: (id) => recorded('key.revoke', (ahead) => store.revoke(id, ahead)),
    list: () => store.list(),
    get: (id) => store.get(id),
    reload: () => store.reload(),
    prepareReload: () => store.prepareReload(),
    authenticate: (rawKey) => store.authenticate(rawKey),
    touch: (id) => store.touch(id),
    flushLastUsed: () => store.flushLastUsed(),
    close: () => store.close(),
    ...(store.whileNoChange === undefined ? {} : { whileNoChange: store.whileNoChange.bind(store) }),
  };
}
