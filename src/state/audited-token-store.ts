// How an admin token change becomes an audit record, in one place: an
// AdminTokenStore decorator the CLI's `admin tokens` commands and the admin
// API's token routes wrap around the real store with who is acting. Each
// create and revoke is recorded write-ahead (write-ahead.ts), with the token's
// non-secret fields (adminTokenAuditFields: never the token, never its hash)
// exactly as the store decided them under its lock. Reads pass through.
import type { AuditEvent, AuditTrail } from '../audit/audit-event.ts';
import { adminTokenAuditFields, type AdminTokenRecord } from '../keys/admin-token.ts';
import type { AdminTokenStore, TokenWriteAhead } from './admin-token-store-port.ts';
import type { AuditWho } from './audited-key-store.ts';
import { readCurrentToken, tokenChangeVerdict } from './change-verdict.ts';
import { writeAhead } from './write-ahead.ts';

export function auditedTokenStore(store: AdminTokenStore, trail: AuditTrail, who: AuditWho): AdminTokenStore {
  const recorded = <T>(action: 'token.create' | 'token.revoke', change: (ahead: TokenWriteAhead) => Promise<T>): Promise<T> =>
    writeAhead<AdminTokenRecord, T>(
      trail,
      ({ before, after }): AuditEvent => ({
        actor: who.actor,
        source: who.source,
        action,
        target: after.id,
        before: before === null ? null : adminTokenAuditFields(before),
        after: adminTokenAuditFields(after),
        ...(who.detail === undefined ? {} : { detail: who.detail }),
      }),
      change,
      async (event) => tokenChangeVerdict(event, await readCurrentToken(store, event.target)),
    );
  return {
    get location() {
      return store.location;
    },
    create: (input, nowMs) => recorded('token.create', (ahead) => store.create(input, nowMs, ahead)),
    revoke: (id, nowMs) => recorded('token.revoke', (ahead) => store.revoke(id, nowMs, ahead)),
    list: () => store.list(),
    findByToken: (token) => store.findByToken(token),
    ...(store.whileNoChange === undefined ? {} : { whileNoChange: store.whileNoChange.bind(store) }),
  };
}
