// Admin API requests authenticated by `Authorization: Bearer pca_...` instead of
// a session (docs/admin-api.md, "Tokens"). admin-server.ts's authed() hands a
// request here when it carries a Bearer credential; the session cookie, CSRF
// token and Origin check do not apply (no cookie is involved, so a page on
// another site cannot make a browser send the token), the host check still does.
//
// A token is judged on its own merits, before any throttle: the lookup is a
// SHA-256 and a constant-time compare (or one Redis call), and a token this
// gateway issued cannot be guessed, so no flood of wrong passwords or junk
// tokens (behind a reverse proxy, all from the proxy's address) may keep a
// valid token from being served. The password login's throttle is not
// consulted at all.
//
// Order of the checks:
//   1. the token: known and active goes on to 3; revoked 401 admin_token_revoked,
//      expired 401 admin_token_expired (never counted: a token this gateway
//      issued is no guess, and a CI job retrying it must not lock anyone out);
//   2. unknown or malformed: the unknown-token budget of the client's address
//      (its own, apart from the password login's; per address, no global
//      ceiling) decides. Within it, 401 admin_token_invalid, counted; beyond
//      it, 429 admin_token_rate_limited with Retry-After and no audit record,
//      so garbage cannot flood the trail;
//   3. the route: need 'session' 403 session_required_for_route; a scope that
//      does not cover the need 403 token_scope_insufficient.
// Each refusal but the 429 is a token.refused audit record, at most one per
// token (or unknown), address and reason per minute and 100 a minute in all
// (refusal-record-limit.ts); every refusal is in the access log line
// (adminToken: the reason, adminTokenId, client).
// An accepted request that may change something records exactly one token.use
// {method, path, status}, except a key change that succeeded: its key.* record
// (actor kind 'token') is its use record. A read-only request (a 'read' route)
// is counted instead: one token.use per token, address, route and minute, with
// the count (src/audit/token-use-coalescer.ts), so a polling script cannot
// flood the trail.
import type { AuditActor, AuditEvent, AuditTrail } from '../audit/audit-event.ts';
import type { TokenUseCoalescer } from '../audit/token-use-coalescer.ts';
import { ApiError } from '../errors/api-error.ts';
import { renderError } from '../errors/render.ts';
import type { RequestContext } from '../http/request-context.ts';
import { adminTokenPrefix, isWellFormedAdminToken, scopesCover, tokenStatus, type AdminTokenRecord } from '../keys/admin-token.ts';
import type { AdminTokenStore } from '../state/admin-token-store-port.ts';
import { storeCall } from './admin-api.ts';
import { ANONYMOUS_ACTOR, clientAddress, type AdminRoute } from './admin-principal.ts';
import { createLoginThrottle, type LoginThrottle } from './login-throttle.ts';
import { retryAfterSeconds } from '../limits/rate-limit-headers.ts';
import { createRefusalRecordLimit } from './refusal-record-limit.ts';
import type { Scheduler } from '../time/scheduler.ts';

const REALM = 'portcullis-admin';
const INVALID_TOKEN_CHALLENGE = `Bearer realm="${REALM}", error="invalid_token"`;
/** Longest credential looked at; anything longer is malformed (a token is 47 characters). */
const MAX_CREDENTIAL_LENGTH = 256;
const MAX_PATH_LENGTH = 200;
/**
 * The unknown-token budget of one address: 10 within a minute, then a minute of
 * 429. Only unknown tokens are ever refused by it, so it can be tight: a client
 * that fixes its token is served at once.
 */
const UNKNOWN_TOKEN_BUDGET = { maxFailures: 10, windowMs: 60_000, lockoutMs: 60_000, maxGlobalFailures: null };

/** The budget for unknown and malformed admin API tokens (per address, no global ceiling) on `scheduler`. */
export function createUnknownTokenThrottle(scheduler: Scheduler): LoginThrottle {
  return createLoginThrottle({ ...UNKNOWN_TOKEN_BUDGET, scheduler });
}

type RefusalCode = 'admin_token_invalid' | 'admin_token_revoked' | 'admin_token_expired' | 'session_required_for_route' | 'token_scope_insufficient';

export interface TokenAuthOptions {
  tokens: () => AdminTokenStore;
  /** The unknown-token budget (createUnknownTokenThrottle); never the password login's. */
  throttle: LoginThrottle;
  audit: AuditTrail;
  /** Where read-only requests' uses are counted (one record per token, address, route and minute). */
  uses: TokenUseCoalescer;
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

function unknownTokensRefused(throttle: LoginThrottle, retryAfterMs: number): ApiError {
  const seconds = retryAfterSeconds(retryAfterMs);
  const { maxFailures, windowMs } = throttle.settings;
  return new ApiError(
    'admin_token_rate_limited',
    `Too many unknown admin API tokens from this address (${maxFailures} within ${windowMs / 1000} s): unknown tokens from it are refused for ${seconds} s. ` +
      'Tokens this gateway issued are still accepted from it: send the whole pca_... token as it was printed when it was created.',
    { headers: { 'retry-after': seconds } },
  );
}

/** A route that can change nothing: what the 'read' scope covers, by GET. */
function isReadOnly(route: AdminRoute): boolean {
  return route.need === 'read' && (route.method === 'GET' || route.method === 'HEAD');
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
    // The store cannot be read (Redis down, a file error): 503, the client may retry; a broken file stays a 500.
    const record = isWellFormedAdminToken(credential) ? await storeCall(() => options.tokens().findByToken(credential)) : null;
    if (record !== null) {
      const status = tokenStatus(record, clock());
      if (status === 'active') return record;
      const code = status === 'revoked' ? 'admin_token_revoked' : 'admin_token_expired';
      return refuse(ctx, code, tokenActor(record), record.id, new ApiError(code, undefined, { headers: { 'www-authenticate': INVALID_TOKEN_CHALLENGE } }));
    }
    const client = clientAddress(ctx);
    const decision = throttle.check(client);
    if (!decision.allowed) {
      ctx.log['adminToken'] = 'admin_token_rate_limited';
      ctx.log['client'] = client;
      throw unknownTokensRefused(throttle, decision.retryAfterMs);
    }
    throttle.failure(client);
    // Only its prefix, and only when it has a token's shape (never more of what was sent).
    const actor: AuditActor = { ...ANONYMOUS_ACTOR, ...(isWellFormedAdminToken(credential) ? { name: adminTokenPrefix(credential) } : {}) };
    return refuse(ctx, 'admin_token_invalid', actor, null, new ApiError('admin_token_invalid', undefined, { headers: { 'www-authenticate': INVALID_TOKEN_CHALLENGE } }));
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
      if (isReadOnly(route)) {
        options.uses.read({ actor, source, target: record.id, method: ctx.req.method ?? route.method, route: route.path, status });
      } else if (!(route.need === 'keys' && isSuccess(status))) {
        await audit.record({ actor, source, action: 'token.use', target: record.id, before: null, after: null, detail: { method: ctx.req.method ?? route.method, path: boundedPath(ctx.path), status } });
      }
    }
  };

  return { run };
}
