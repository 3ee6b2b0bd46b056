// Who an admin API request acts as, and what it may do. A session (password,
// bootstrap or single sign-on) may do everything the admin API offers; an
// admin API token only what its scopes allow (docs/admin-api.md, "Tokens").
import type { AuditActor } from '../audit/audit-event.ts';
import type { RequestContext } from '../http/request-context.ts';

// The scopes live in src/keys/admin-token.ts, below admin/, so token records can hold them.
export { ADMIN_SCOPES, type AdminScope } from '../keys/admin-token.ts';
import type { AdminScope } from '../keys/admin-token.ts';

/** What a route needs: a scope a token can hold, or a session (token management, password). */
export type RouteNeed = AdminScope | 'session';

export interface AdminPrincipal {
  actor: AuditActor;
  /** The client address (ctx.clientAddress: the peer, or behind a trusted proxy the client it names). */
  source: string;
  via: 'session' | 'token';
  /** A session's are every scope; a token's are its own. */
  scopes: readonly AdminScope[];
}

export type AdminHandler = (ctx: RequestContext, who: AdminPrincipal) => Promise<void>;

export interface AdminRoute {
  method: string;
  path: string;
  need: RouteNeed;
  handler: AdminHandler;
}

/** The actor of a refused login or token: nobody is known yet. */
export const ANONYMOUS_ACTOR: AuditActor = { kind: 'anonymous', id: '-' };

/** The client address of an admin request, as the audit trail and the login throttle name it (behind a trusted proxy, from X-Forwarded-For). */
export function clientAddress(ctx: RequestContext): string {
  return ctx.clientAddress;
}
