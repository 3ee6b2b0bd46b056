// Admin API requests authenticated by `Authorization: Bearer pca_...` instead of
// a session (docs/admin-api.md, "Tokens"). admin-server.ts's authed() hands a
// request here when it carries a Bearer credential; the session cookie, CSRF
// token and Origin check do not apply (no cookie is involved, so a page on
// another site cannot make a browser send the token), the host check still does.
//
// Order of the checks:
//   1. the login throttle (per client address, shared with password logins):
//      a locked-out address gets 429 login_rate_limited and no audit record,
//      so garbage cannot flood the trail;
//   2. the token: unknown or malformed 401 admin_token_invalid (counts as a
//      failed login for the client's address, not toward the throttle's global
//      ceiling: no token can be guessed, and garbage from many addresses must
//      not lock the password login out for everyone), revoked 401
//      admin_token_revoked, expired 401 admin_token_expired (not counted: a
//      token this gateway issued is no guess, and a CI job retrying an expired
//      token from many runners must not lock the password login out for
//      everyone through the throttle's global ceiling);
//   3. the route: need 'session' 403 session_required_for_route; a scope that
//      does not cover the need 403 token_scope_insufficient.
// Each refusal is a token.refused audit record, at most one per token (or
// unknown), address and reason per minute and 100 a minute in all
// (refusal-record-limit.ts); every refusal is in the access log line
// (adminToken: the reason, adminTokenId, client).
// An accepted request records exactly one token.use {method, path, status},
// except a key change that succeeded: its key.* record (actor kind 'token')
// is its use record.
import type { AuditActor, AuditEvent, AuditTrail } from '../audit/audit-event.ts';
import { ApiError } from '../errors/api-error.ts';
import { renderError } from '../errors/render.ts';
import type { RequestContext } from '../http/request-context.ts';
import { adminTokenPrefix, isWellFormedAdminToken, scopesCover, tokenStatus, type AdminTokenRecord } from '../keys/admin-token.ts';
import type { AdminTokenStore } from '../state/admin-token-store-port.ts';
import { storeCall } from './admin-api.ts';
import { ANONYMOUS_ACTOR, clientAddress, type AdminRoute } from './admin-principal.ts';
import type { LoginThrottle } from './login-throttle.ts';
import { createRefusalRecordLimit } from './refusal-record-limit.ts';

const REALM = 'portcullis-admin';
const INVALID_TOKEN_CHALLENGE = `Bearer realm="${REALM}", error="invalid_token"`;
/** Longest credential looked at; anything longer is malformed (a token is 47 characters). */
const MAX_CREDENTIAL_LENGTH = 256;
const MAX_PATH_LENGTH = 200;

type RefusalCode = 'admin_token_invalid' | 'admin_token_revoked' | 'admin_token_expired' | 'session_required_for_route' | 'token_scope_insufficient';

export interface TokenAuthOptions {
  tokens: () => AdminTokenStore;
  throttle: LoginThrottle;
  audit: AuditTrail;
  /** Milliseconds since the epoch: when a token's expiry is judged. */
  clock: () => number;
}

/**
 * The credential of `Authorization: Bearer <credential>`, or null when the
 * request has no Authorization header or another scheme (a proxy's Basic
 * auth must not break the dashboard's session): then the session decides.
 */
export function bearerCredential(ctx: RequestContext): string | null {
  const header = ctx.req.headers.authorization;
  if (typeof header !== 'string') return null;
  const space = header.indexOf(' ');
  const scheme = space === -1 ? header : header.slice(0, space);
  if (scheme.toLowerCase() !== 'bearer') return null;
  const credential = space === -1 ? '' : header.slice(space + 1).trim();
  return credential.length > MAX_CREDENTIAL_LENGTH ? credential.slice(0, MAX_CREDENTIAL_LENGTH) : credential;
}

function tokenActor(record: AdminTokenRecord): AuditActor {
  return { kind: 'token', id: record.id, name: record.name };
}

/** A path as the access log bounds it: a route's :id can be as long as a URL. */
function boundedPath(path: string): string {
  return path.length > MAX_PATH_LENGTH ? `${path.slice(0, MAX_PATH_LENGTH)}...` : path;
}

function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

export function createTokenAuth(options: TokenAuthOptions) {
  const { throttle, audit, clock } = options;
  const recordLimit = createRefusalRecordLimit({ clock });

  const refuse = async (ctx: RequestContext, code: RefusalCode, actor: AuditActor, target: string | null, error: ApiError): Promise<never> => {
    const source = clientAddress(ctx);
    ctx.log['adminToken'] = code;
    ctx.log['client'] = source;
    if (target !== null) ctx.log['adminTokenId'] = target;
    if (recordLimit.take(`${target ?? actor.name ?? '-'}\n${source}\n${code}`)) {
      const event: AuditEvent = { actor, source, action: 'token.refused', target, before: null, after: null, detail: { reason: code } };
      await audit.record(event);
    } else {
      ctx.log['auditRecord'] = 'suppressed';
    }
    throw error;
  };

  /** Authenticates `credential`; refuses (throws) or returns the token's record. */
  const authenticate = async (ctx: RequestContext, credential: string): Promise<AdminTokenRecord> => {
    const client = clientAddress(ctx);
    const decision = throttle.check(client);
    if (!decision.allowed) {
      const seconds = String(Math.max(1, Math.ceil(decision.retryAfterMs / 1000)));
      throw new ApiError('login_rate_limited', `Too many refused logins or tokens from this address; try again in ${seconds} s.`, { headers: { 'retry-after': seconds } });
    }
    // The store cannot be read (Redis down, a file error): 503, the client may retry; a broken file stays a 500.
    const record = isWellFormedAdminToken(credential) ? await storeCall(() => options.tokens().findByToken(credential)) : null;
    const status = record === null ? null : tokenStatus(record, clock());
    if (record === null || status !== 'active') {
      // Per address only: a 256-bit token cannot be guessed, so unknown tokens from many
      // addresses must not reach the global ceiling that guards the password login.
      if (record === null) throttle.failure(client, { global: false });
      const code = record === null ? 'admin_token_invalid' : status === 'revoked' ? 'admin_token_revoked' : 'admin_token_expired';
      // Unknown: only its prefix, and only when it has a token's shape (never more of what was sent).
      const actor: AuditActor =
        record !== null ? tokenActor(record) : { ...ANONYMOUS_ACTOR, ...(isWellFormedAdminToken(credential) ? { name: adminTokenPrefix(credential) } : {}) };
      return refuse(ctx, code, actor, record?.id ?? null, new ApiError(code, undefined, { headers: { 'www-authenticate': INVALID_TOKEN_CHALLENGE } }));
    }
    return record;
  };

  /** Runs `route` for the token `credential`, recording what the module header says. */
  const run = async (ctx: RequestContext, route: AdminRoute, credential: string): Promise<void> => {
    const record = await authenticate(ctx, credential);
    const actor = tokenActor(record);
    ctx.log['adminToken'] = record.id;
    if (route.need === 'session') {
      return refuse(ctx, 'session_required_for_route', actor, record.id, new ApiError('session_required_for_route'));
    }
    if (!scopesCover(record.scopes, route.need)) {
      const error = new ApiError('token_scope_insufficient', `This route needs the '${route.need}' scope; the token has ${record.scopes.map((s) => `'${s}'`).join(' and ')}.`, {
        headers: { 'www-authenticate': `Bearer realm="${REALM}", error="insufficient_scope", scope="${route.need}"` },
      });
      return refuse(ctx, 'token_scope_insufficient', actor, record.id, error);
    }
    const source = clientAddress(ctx);
    let status = 500;
    try {
      await route.handler(ctx, { actor, source, via: 'token', scopes: record.scopes });
      status = ctx.res.statusCode;
    } catch (error) {
      status = renderError(error).status;
      throw error;
    } finally {
      if (!(route.need === 'keys' && isSuccess(status))) {
        await audit.record({ actor, source, action: 'token.use', target: record.id, before: null, after: null, detail: { method: ctx.req.method ?? route.method, path: boundedPath(ctx.path), status } });
      }
    }
  };

  return { run };
}
