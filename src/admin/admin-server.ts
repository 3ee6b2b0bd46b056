// The admin listener: the dashboard page, the admin JSON API, and the
// operational endpoints (/metrics, /healthz, /readyz). It is a separate socket
// from the API (127.0.0.1:8081 by default) so it can stay off the network the
// API is exposed on.
//
// Who may do what:
// - /api/login takes the admin password (scrypt hash in <dataDir>/admin.json)
//   or, while no password is set, the one-time bootstrap token printed at
//   start. Failures are rate-limited per client address and globally
//   (login-throttle.ts); admin API tokens never pass through that throttle.
// - A session is an HttpOnly, SameSite=Strict cookie (Secure when the admin
//   listener is behind TLS). Every state-changing request must also carry the
//   session's CSRF token in `x-csrf-token`, a JSON content type, and, when the
//   browser sends one, an Origin equal to this listener's own.
// - Sessions opened before the password last changed end at their next
//   request (admin.json is re-read on every API call: it is tiny and admin
//   traffic is rare), so `portcullis admin set-password` logs out every password
//   and bootstrap session (single sign-on sessions do not rest on the password).
// - After a bootstrap login the only thing allowed is setting a password.
// - Single sign-on (admin.oidc, ./sso-routes.ts, docs/sso.md) opens 'sso' sessions:
//   no admin password needed; they end when SSO is switched off or re-pointed.
// - Instead of a session, an admin API token (`Authorization: Bearer pca_...`)
//   may call the routes its scopes cover, without cookie, CSRF or Origin
//   (token-auth.ts; docs/admin-api.md, "Tokens").
import type { Server } from 'node:http';
import type { TrustedProxies } from '../http/client-address.ts';
import { ApiError, InvalidRequestError, MethodNotAllowedError, RouteNotFoundError } from '../errors/api-error.ts';
import { readRequestJson } from '../http/json-body.ts';
import { parseCookies, serializeCookie } from '../http/cookies.ts';
import { sendJson } from '../http/respond.ts';
import { createRouter, type Router } from '../http/router.ts';
import { createHttpShell, type HttpShell } from '../http/server.ts';
import { type RequestContext, type RouteHandler } from '../http/request-context.ts';
import type { ServerLimits } from '../config/config.ts';
import type { SecurityConfig } from '../config/security-config.ts';
import type { ListenerTlsMaterial } from '../config/tls-files.ts';
import type { Logger } from '../log/logger.ts';
import type { AuditActor } from '../audit/audit-event.ts';
import { createTokenUseCoalescer, type TokenUseCoalescer } from '../audit/token-use-coalescer.ts';
import { adminFilePath, AdminPasswordAlreadySetError, adminPasswordFipsProblem, readAdminCredentials, setAdminPassword, WeakAdminPasswordError, type AdminCredentials } from './admin-credentials.ts';
import { createAdminApi, type AdminApiDeps } from './admin-api.ts';
import { createAdminTokensApi } from './admin-tokens-api.ts';
import { createAuditApi } from './audit-api.ts';
import { dashboardRoutes, defaultDashboardDir } from './dashboard-assets.ts';

export { DASHBOARD_CSP, defaultDashboardDir } from './dashboard-assets.ts';
import { ADMIN_SCOPES, ANONYMOUS_ACTOR, clientAddress, type AdminRoute } from './admin-principal.ts';
import type { BootstrapToken } from './bootstrap-token.ts';
import { createLoginThrottle, type LoginDecision, type LoginThrottle } from './login-throttle.ts';
import { retryAfterSeconds } from '../limits/rate-limit-headers.ts';
import { PASSWORD_MAX_LENGTH, verifyPassword } from './password-hash.ts';
import { createSessionStore, verifyCsrf, type Session, type SessionStore } from './sessions.ts';
import { createSsoRoutes, passwordLoginAllowed, ssoSessionValid } from './sso-routes.ts';
import type { SsoFlow } from '../oidc/flow.ts';
import { bearerCredential, createTokenAuth, createUnknownTokenThrottle } from './token-auth.ts';
import { systemScheduler, type Scheduler } from '../time/scheduler.ts';

const SESSION_COOKIE = 'portcullis_session';
/** With Secure cookies the __Host- prefix also pins the cookie to this host and path /. */
const SECURE_SESSION_COOKIE = '__Host-portcullis_session';
const CSRF_HEADER = 'x-csrf-token';
/** Who a password session is: there is one admin password, so one name. */
const PASSWORD_ACTOR: AuditActor = { kind: 'password', id: 'admin' };
const BOOTSTRAP_ACTOR: AuditActor = { kind: 'bootstrap', id: 'bootstrap' };

/**
 * Sent with every admin answer (the listener's shell sets them on each
 * response, refusals and errors included): nothing here may be framed,
 * sniffed, cached or leaked by referrer.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
};

// Room for the longest password the rules allow (PASSWORD_MAX_LENGTH code points, 4 UTF-8
// bytes each), written with JSON escapes (up to 12 bytes for a \uXXXX\uXXXX pair).
const LOGIN_BODY = { maxBytes: PASSWORD_MAX_LENGTH * 12 + 1024, limits: { maxDepth: 2, maxStringBytes: PASSWORD_MAX_LENGTH * 4, maxMembers: 4 } };
/** Logins waiting for their turn (each holds a socket and runs the password hash): beyond this, 429 at once. */
const MAX_QUEUED_LOGINS = 32;
/** Host names every admin listener answers for. */
const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];
interface AdminServerOptions extends AdminApiDeps {
  dataDir: string;
  limits: ServerLimits;
  logger: Logger;
  /** The one-time token printed at first start; null once a password exists. */
  bootstrap: BootstrapToken | null;
  session: { ttlMs: number; idleMs: number; secureCookies: boolean };
  /** Host names accepted besides the loopback names (admin.host and admin.allowedHosts). */
  allowedHosts?: readonly string[];
  /** Where the built dashboard is (index.html, app.js, app.css); default dist/dashboard. */
  dashboardDir?: string;
  /** Unauthenticated operational routes (/metrics, /healthz, /readyz). */
  extraRoutes?: Array<[method: string, path: string, handler: RouteHandler]>;
  /** The password login's throttle (default: per address and global, on `scheduler`). */
  throttle?: LoginThrottle;
  /** The unknown admin API tokens' budget (default: createUnknownTokenThrottle on `scheduler`). */
  tokenThrottle?: LoginThrottle;
  /** The throttles' time and the minutes token uses are counted in (the system's by default). */
  scheduler?: Scheduler;
  /** Token-use entries held before they are appended early (DEFAULT_MAX_PENDING_USES). */
  maxPendingTokenUses?: number;
  sessions?: SessionStore;
  /** admin.tls's material (loadListenerTls): serve the admin listener over HTTPS. */
  tls?: ListenerTlsMaterial;
  /** Each connection refused beyond limits.maxConnections (metrics). */
  onConnectionRefused?: () => void;
  /** Each connection closed to make room for a new one (metrics). */
  onConnectionReclaimed?: () => void;
  /** listen.trustedProxies: whose X-Forwarded-For names the client (ctx.clientAddress). */
  trustedProxies?: TrustedProxies;
  /** Single sign-on (admin.oidc): where the client secret's variable is looked up (process.env by default), and the flow (tests). */
  env?: NodeJS.ProcessEnv;
  ssoFlow?: SsoFlow;
}

export interface AdminServer {
  readonly server: Server;
  readonly shell: HttpShell;
  readonly sessions: SessionStore;
  /**
   * The counted token.use records of read-only requests: close() it once the
   * listener has drained (before the state backend closes) so the minute's
   * counts are appended.
   */
  readonly tokenUses: TokenUseCoalescer;
}

function passwordAlreadySet(): ApiError {
  return new ApiError('password_already_set');
}

/** The password login's 429: which budget ran out, why, and for how long (also in Retry-After). */
function passwordLoginsRefused(throttle: LoginThrottle, decision: Exclude<LoginDecision, { allowed: true }>): ApiError {
  const seconds = retryAfterSeconds(decision.retryAfterMs);
  const { maxFailures, windowMs, maxGlobalFailures } = throttle.settings;
  const minutes = `${Math.round(windowMs / 60_000)} minutes`;
  const message =
    decision.limit === 'global'
      ? `Too many failed password logins from all addresses together (${maxGlobalFailures} within ${minutes}): password logins are refused for everyone for ${seconds} s. Admin API tokens and single sign-on are not affected.`
      : `Too many failed password logins from this address (${maxFailures} within ${minutes}): password logins from it are refused for ${seconds} s. Admin API tokens are not affected.`;
  return new ApiError('login_rate_limited', message, { headers: { 'retry-after': seconds } });
}

export function createAdminServer(options: AdminServerOptions): AdminServer {
  const { dataDir, logger, bootstrap, clock } = options;
  const sessions = options.sessions ?? createSessionStore({ ttlMs: options.session.ttlMs, idleMs: options.session.idleMs, clock });
  const scheduler = options.scheduler ?? systemScheduler;
  const throttle = options.throttle ?? createLoginThrottle({ scheduler });
  const secure = options.session.secureCookies;
  const cookieName = secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
  const router = createRouter<RouteHandler>();

  const sessionCookie = (value: string, maxAgeSeconds: number): string =>
    serializeCookie(cookieName, value, { httpOnly: true, secure, sameSite: 'Strict', path: '/', maxAgeSeconds });
  const setSessionCookie = (ctx: RequestContext, value: string, maxAgeSeconds: number): void => {
    ctx.res.setHeader('set-cookie', sessionCookie(value, maxAgeSeconds));
  };

  const sessionIdOf = (ctx: RequestContext): string | undefined => parseCookies(ctx.req.headers.cookie).get(cookieName);

  /** The session of this request, or 401 (`noSession` the message without one); ends password sessions older than the password. */
  const requireSession = (ctx: RequestContext, credentials: AdminCredentials | null, noSession = 'Log in to the admin API first (POST /api/login).'): Session => {
    const id = sessionIdOf(ctx);
    const session = id === undefined ? null : sessions.get(id);
    if (id === undefined || session === null) throw new ApiError('session_required', noSession);
    // SSO sessions do not depend on the password; they end when SSO is switched
    // off or who it admits changes (ssoSessionValid), password sessions when password login is off.
    const oidc = options.view().config.admin.oidc;
    const kind = session.actor.kind;
    if (kind === 'sso' ? !ssoSessionValid(session, oidc) : !passwordLoginAllowed(oidc)) {
      sessions.destroy(id);
      throw new ApiError('session_required', 'The way this session signed in is no longer enabled (admin.oidc); sign in again.');
    }
    if (kind !== 'sso' && credentials !== null && session.createdAtMs < Date.parse(credentials.updatedAt)) {
      sessions.destroy(id);
      throw new ApiError('session_required', 'The admin password changed since this session began; log in again.');
    }
    return session;
  };

  /** Cross-site requests carry a foreign Origin; same-origin fetches carry ours or none. */
  const checkOrigin = (ctx: RequestContext): void => {
    const origin = ctx.req.headers.origin;
    if (origin === undefined) return;
    const host = ctx.req.headers.host;
    if (host === undefined || (origin !== `http://${host}` && origin !== `https://${host}`)) {
      throw new ApiError('origin_refused');
    }
  };

  const requireCsrf = (ctx: RequestContext, session: Session): void => {
    checkOrigin(ctx);
    const presented = ctx.req.headers[CSRF_HEADER];
    if (!verifyCsrf(session, typeof presented === 'string' ? presented : undefined)) {
      throw new ApiError('csrf_token_invalid', `Missing or wrong ${CSRF_HEADER} header; read the token from /api/session.`);
    }
  };

  const allowedHosts = new Set([...LOOPBACK_HOSTS, ...(options.allowedHosts ?? []).map((h) => h.toLowerCase())]);
  /**
   * A page on another site can point its own name at 127.0.0.1 (DNS rebinding)
   * and then talk to this listener as "same origin". The Host it sends still
   * names that site, so only the names this listener is meant to be reached by
   * are answered.
   */
  const checkHost = (ctx: RequestContext): void => {
    const host = ctx.req.headers.host ?? '';
    const name = (host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0] ?? '').toLowerCase();
    if (!allowedHosts.has(name)) {
      throw new ApiError('host_not_allowed');
    }
  };

  /** Every admin route begins with the host check (the security headers are the shell's). */
  const withHostCheck = (handler: RouteHandler): RouteHandler => async (ctx) => {
    checkHost(ctx);
    await handler(ctx);
  };

  const tokenUses = createTokenUseCoalescer({ trail: options.audit, scheduler, ...(options.maxPendingTokenUses === undefined ? {} : { maxPending: options.maxPendingTokenUses }) });
  const tokenAuth = createTokenAuth({ tokens: () => options.state.tokens, throttle: options.tokenThrottle ?? createUnknownTokenThrottle(scheduler), audit: options.audit, uses: tokenUses, clock });

  /**
   * A handler for logged-in sessions; state-changing methods also need the CSRF token.
   * A request with `Authorization: Bearer ...` is an admin API token's instead
   * (token-auth.ts): the bearer wins and a session cookie sent with it is ignored.
   */
  const authed = (route: AdminRoute): RouteHandler =>
    withHostCheck(async (ctx) => {
      const bearer = bearerCredential(ctx);
      if (bearer !== null) return tokenAuth.run(ctx, route, bearer);
      const credentials = await readAdminCredentials(dataDir);
      // A script that sent no token (or another scheme than Bearer) learns how to send one.
      const session = requireSession(ctx, credentials, 'Log in to the admin API first (POST /api/login), or send an admin API token in the header "Authorization: Bearer pca_...".');
      if (route.method !== 'GET') requireCsrf(ctx, session);
      // Only a bootstrap session must set a password first; an SSO session needs none.
      if (credentials === null && session.actor.kind !== 'sso') {
        throw new ApiError('password_required');
      }
      await route.handler(ctx, { actor: session.actor, source: clientAddress(ctx), via: 'session', scopes: ADMIN_SCOPES });
    });

  const sessionBody = (created: { csrfToken: string; expiresAtMs: number }, mustSetPassword: boolean) => ({
    csrfToken: created.csrfToken,
    expiresAt: new Date(created.expiresAtMs).toISOString(),
    mustSetPassword,
  });

  const readPassword = async (ctx: RequestContext): Promise<string> => {
    const body = await readRequestJson(ctx, LOGIN_BODY);
    const password = (body as { password?: unknown } | null)?.password;
    if (typeof body !== 'object' || body === null || Object.keys(body).some((k) => k !== 'password') || typeof password !== 'string') {
      throw new InvalidRequestError('The body must be {"password": "..."}.', 'password', 'invalid_type');
    }
    return password;
  };

  // Logins are checked one at a time: parallel guesses would otherwise all pass
  // the throttle before the first failure is counted (and each scrypt hash
  // takes 32 MiB).
  let loginQueue: Promise<unknown> = Promise.resolve();
  let queuedLogins = 0;
  const checkLogin = (client: string, password: string, security: SecurityConfig): Promise<{ ok: boolean; credentials: AdminCredentials | null }> => {
    if (queuedLogins >= MAX_QUEUED_LOGINS) {
      return Promise.reject(new ApiError('login_rate_limited', `Too many password logins at once (${MAX_QUEUED_LOGINS} waiting their turn); try again in 5 s.`, { headers: { 'retry-after': '5' } }));
    }
    queuedLogins++;
    const run = loginQueue.then(async () => {
      const decision = throttle.check(client);
      if (!decision.allowed) throw passwordLoginsRefused(throttle, decision);
      const credentials = await readAdminCredentials(dataDir);
      // admin.json is read at each login and may have been replaced since start: a hash
      // requireFips refuses is never run (OpenSSL's FIPS provider has no scrypt anyway).
      const fipsProblem = security.requireFips && credentials !== null ? adminPasswordFipsProblem(adminFilePath(dataDir), credentials) : null;
      if (fipsProblem !== null) {
        logger.error('admin password login refused', { client, problem: `security.requireFips ${fipsProblem}` });
        throw new ApiError('admin_password_not_approved');
      }
      const ok = credentials !== null ? await verifyPassword(password, credentials.passwordHash) : (bootstrap?.consume(password) ?? false);
      if (ok) throttle.success(client);
      else throttle.failure(client);
      return { ok, credentials };
    });
    loginQueue = run.catch(() => undefined).finally(() => {
      queuedLogins--;
    });
    return run;
  };

  router.add('POST', '/api/login', withHostCheck(async (ctx) => {
    checkOrigin(ctx);
    if (!passwordLoginAllowed(options.view().config.admin.oidc)) throw new ApiError('password_login_disabled');
    const client = clientAddress(ctx);
    const password = await readPassword(ctx);
    const { ok, credentials } = await checkLogin(client, password, options.view().config.security);
    if (!ok) {
      logger.warn('admin login failed', { requestId: ctx.requestId, client });
      // Only a password actually checked and found wrong is recorded: the throttle bounds
      // those (docs/audit.md, "What each door records"); its refusals (429) are not, so a flood cannot fill the trail.
      await options.audit.record({ actor: ANONYMOUS_ACTOR, source: client, action: 'admin.login_failed', target: 'admin', before: null, after: null, detail: { reason: 'wrong_password' } });
      throw new ApiError('invalid_password');
    }
    const actor = credentials === null ? BOOTSTRAP_ACTOR : PASSWORD_ACTOR;
    const created = sessions.create(actor);
    setSessionCookie(ctx, created.id, Math.floor(options.session.ttlMs / 1000));
    logger.info('admin login', { requestId: ctx.requestId, client, bootstrap: credentials === null });
    await options.audit.record({ actor, source: client, action: 'admin.login', target: 'admin', before: null, after: null });
    sendJson(ctx.res, 200, sessionBody(created, credentials === null));
  }));

  router.add('GET', '/api/session', withHostCheck(async (ctx) => {
    const credentials = await readAdminCredentials(dataDir);
    const session = requireSession(ctx, credentials);
    // Who is signed in, for the dashboard; an SSO session needs no password.
    const { kind, id: actorId, name } = session.actor;
    sendJson(ctx.res, 200, { ...sessionBody(session, credentials === null && kind !== 'sso'), actor: { kind, id: actorId, ...(name === undefined ? {} : { name }) } });
  }));

  router.add('POST', '/api/logout', withHostCheck(async (ctx) => {
    checkOrigin(ctx);
    const id = sessionIdOf(ctx);
    const session = id === undefined ? null : sessions.get(id);
    // Logging out needs the CSRF token too: a forged logout is a nuisance, not harmless.
    if (id !== undefined && session !== null) {
      requireCsrf(ctx, session);
      sessions.destroy(id);
    }
    setSessionCookie(ctx, '', 0);
    ctx.res.writeHead(204).end();
  }));

  // Only while no password exists (after a bootstrap login). Changing a set
  // password is `portcullis admin set-password`, on the machine itself.
  router.add('POST', '/api/password', withHostCheck(async (ctx) => {
    const credentials = await readAdminCredentials(dataDir);
    const session = requireSession(ctx, credentials);
    requireCsrf(ctx, session);
    // The shared password is not an SSO user's to set (it would turn the session into "password:admin").
    if (session.actor.kind === 'sso') throw new ApiError('password_set_refused');
    if (credentials !== null) throw passwordAlreadySet();
    const password = await readPassword(ctx);
    let set: AdminCredentials;
    try {
      set = await setAdminPassword(dataDir, password, () => new Date(clock()), { onlyIfUnset: true, scheme: options.view().config.security.passwordHash });
    } catch (err) {
      if (err instanceof WeakAdminPasswordError) throw new InvalidRequestError(`Password too weak: ${err.problem}`, 'password', 'weak_password');
      if (err instanceof AdminPasswordAlreadySetError) throw passwordAlreadySet();
      throw err;
    }
    // The password is newer than every session now; this one continues as a new session.
    const id = sessionIdOf(ctx);
    if (id !== undefined) sessions.destroy(id);
    const created = sessions.create(PASSWORD_ACTOR);
    setSessionCookie(ctx, created.id, Math.floor(options.session.ttlMs / 1000));
    logger.info('admin password set from the dashboard', { requestId: ctx.requestId });
    // Only while none was set: there is no earlier password to name in `before`.
    await options.audit.record({ actor: session.actor, source: clientAddress(ctx), action: 'admin.password_set', target: 'admin', before: null, after: { updatedAt: set.updatedAt } });
    sendJson(ctx.res, 200, sessionBody(created, false));
  }));

  for (const route of [...createAdminApi(options), ...createAdminTokensApi(options)]) router.add(route.method, route.path, authed(route));
  for (const route of createAuditApi({ audit: options.state.audit })) router.add(route.method, route.path, authed(route));

  // Single sign-on with OpenID Connect (./sso-routes.ts).
  const ssoRoutes = createSsoRoutes({ ...options, logger, clock, sessions, secureCookies: secure, sessionCookie: (id) => sessionCookie(id, Math.floor(options.session.ttlMs / 1000)), flow: options.ssoFlow });
  for (const [method, route, handler] of ssoRoutes) router.add(method, route, withHostCheck(handler));

  for (const [method, route, handler] of dashboardRoutes(options.dashboardDir ?? defaultDashboardDir())) router.add(method, route, withHostCheck(handler));

  for (const [method, route, handler] of options.extraRoutes ?? []) router.add(method, route, withHostCheck(handler));

  /**
   * The router the shell sees: a path or a method this listener does not
   * serve is refused after the same host check as every route, so a page
   * on a foreign Host (DNS rebinding) cannot even learn which paths exist.
   */
  const shellRouter: Router<RouteHandler> = {
    add: (method, route, handler) => router.add(method, route, handler),
    match(method, route) {
      const found = router.match(method, route);
      if (found.kind === 'found') return found;
      const refusal = found.kind === 'not_found' ? new RouteNotFoundError(method, route) : new MethodNotAllowedError(method, route, found.allow);
      return {
        kind: 'found',
        handler: withHostCheck(async () => {
          throw refusal;
        }),
      };
    },
  };

  const shell = createHttpShell({
    router: shellRouter,
    limits: options.limits,
    logger,
    responseHeaders: SECURITY_HEADERS,
    name: 'admin',
    ...(options.tls === undefined ? {} : { tls: options.tls }),
    ...(options.onConnectionRefused === undefined ? {} : { onConnectionRefused: options.onConnectionRefused }),
    ...(options.onConnectionReclaimed === undefined ? {} : { onConnectionReclaimed: options.onConnectionReclaimed }),
    ...(options.trustedProxies === undefined ? {} : { trustedProxies: options.trustedProxies }),
  });
  return { server: shell.server, shell, sessions, tokenUses };
}
