// Single sign-on routes of the admin listener (docs/sso.md):
// - GET /api/sso: which ways in the sign-in page offers (no session needed).
// - GET /sso/start: a new login transaction (src/oidc/flow.ts), its browser
//   binding cookie, and a 302 to the provider.
// - GET /sso/callback: the provider's redirect back; a session on success
//   (a 302 to /), else a 302 to /?sso_error=<code>. Each refusal after the
//   provider sent the browser back is an admin.login_failed audit record.
//
// The binding cookie is SameSite=Lax: the callback is a cross-site top-level
// navigation from the provider, on which a Strict cookie is not sent. It
// holds a random secret whose hash the transaction keeps, so a callback URL
// carried to another browser (login CSRF, a leaked URL) is refused there.
// The settings are read from the serving config on every request, so a
// reload applies them; a change to who is admitted ends SSO sessions (ssoGrant).
//
// Anyone can call /sso/callback, so its refusals are bounded in the audit
// trail (refusal-record-limit.ts): at most one admin.login_failed per
// address, user (or anonymous) and reason a minute, 100 a minute in all;
// each refusal still has its 'sso login refused' warning in the log stream.
import { createHash } from 'node:crypto';
import { ConfigIssueCode } from '../config/config-issues.ts';
import { readConfigFile } from '../config/config-files.ts';
import type { GatewayConfig } from '../config/config.ts';
import type { OidcConfig } from '../config/oidc-config.ts';
import type { AuditActor, AuditTrail } from '../audit/audit-event.ts';
import { ApiError } from '../errors/api-error.ts';
import { parseCookies, serializeCookie } from '../http/cookies.ts';
import { sendJson } from '../http/respond.ts';
import type { RequestContext, RouteHandler } from '../http/request-context.ts';
import type { Logger } from '../log/logger.ts';
import { createSsoFlow, LOGIN_TTL_MS, SsoStartError, type CallbackParams, type OidcUser, type SsoFlow } from '../oidc/flow.ts';
import { ANONYMOUS_ACTOR, clientAddress } from './admin-principal.ts';
import { createRefusalRecordLimit } from './refusal-record-limit.ts';
import type { Session, SessionStore } from './sessions.ts';

const BINDING_COOKIE = 'portcullis_sso';
const SECURE_BINDING_COOKIE = '__Host-portcullis_sso';
const MAX_SECRET_BYTES = 4096;
/** A refusal at /sso/start (the provider unusable) is audited once per reason per this long: anyone can hit /sso/start. */
const START_FAILURE_AUDIT_MS = 60_000;
const CALLBACK_PARAMS = ['state', 'code', 'error', 'iss'] as const;

export interface SsoRoutesOptions {
  view(): { config: GatewayConfig };
  audit: AuditTrail;
  logger: Logger;
  clock: () => number;
  sessions: SessionStore;
  secureCookies: boolean;
  /** The Set-Cookie value that gives the browser this session (the admin server's session cookie). */
  sessionCookie(id: string): string;
  env?: NodeJS.ProcessEnv | undefined;
  flow?: SsoFlow | undefined;
}

/** The audit trail's actor for a user the OIDC flow signed in. */
export function ssoActor(user: OidcUser): AuditActor {
  return { kind: 'sso', id: user.subject, issuer: user.issuer, ...(user.name === undefined ? {} : { name: user.name }) };
}

/** Whether POST /api/login is open: always without SSO; with SSO unless admin.oidc.passwordLogin is false. */
export function passwordLoginAllowed(oidc: OidcConfig | null): boolean {
  return oidc === null || oidc.passwordLogin;
}

/**
 * What admits a user (issuer, client, audiences, allow-lists, groups claim), as a
 * fingerprint an SSO session keeps: when a reload changes any of it, SSO sessions
 * end at their next request, so a user taken off the lists is out at once rather
 * than at the end of the session's lifetime.
 */
export function ssoGrant(oidc: OidcConfig): string {
  const admits = [oidc.issuer, oidc.clientId, oidc.audiences, oidc.allowedUsers, oidc.allowedGroups, oidc.groupsClaim];
  return createHash('sha256').update(JSON.stringify(admits), 'utf8').digest('base64url');
}

/** Whether an SSO session may go on under the serving admin.oidc (null: SSO switched off). */
export function ssoSessionValid(session: Pick<Session, 'actor' | 'grant'>, oidc: OidcConfig | null): boolean {
  return oidc !== null && session.actor.issuer === oidc.issuer && session.grant === ssoGrant(oidc);
}

/** The client secret, read when a code is exchanged (a rotated secret file applies at the next login). */
export function readClientSecret(config: GatewayConfig, oidc: OidcConfig, env: NodeJS.ProcessEnv): string | null {
  if (oidc.clientSecretEnv !== null) {
    const value = env[oidc.clientSecretEnv];
    if (value === undefined || value === '') throw new Error(`environment variable ${oidc.clientSecretEnv} (admin.oidc.clientSecretEnv) is not set`);
    return value;
  }
  if (oidc.clientSecretFile === null) return null;
  const { bytes } = readConfigFile(config.source, 'admin.oidc.clientSecretFile', oidc.clientSecretFile, env, MAX_SECRET_BYTES, ConfigIssueCode.MissingCredential);
  const secret = bytes.toString('utf8').replace(/\r?\n$/, '');
  if (secret === '') throw new Error('admin.oidc.clientSecretFile is empty');
  return secret;
}

/** The callback's parameters; a repeated one makes the whole answer suspect (RFC 6749 section 3.1). */
function callbackParams(ctx: RequestContext): CallbackParams | null {
  const url = ctx.req.url ?? '';
  const q = url.indexOf('?');
  const query = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
  const params: CallbackParams = {};
  for (const name of CALLBACK_PARAMS) {
    const values = query.getAll(name);
    if (values.length > 1) return null;
    if (values.length === 1) params[name] = values[0] as string;
  }
  return params;
}

function redirect(ctx: RequestContext, location: string, cookies: string[] = []): void {
  if (cookies.length > 0) ctx.res.setHeader('set-cookie', cookies);
  ctx.res.writeHead(302, { location, 'content-length': 0 }).end();
}

export function createSsoRoutes(options: SsoRoutesOptions): Array<[method: string, path: string, handler: RouteHandler]> {
  const { audit, logger, clock } = options;
  const env = options.env ?? process.env;
  const flow = options.flow ?? createSsoFlow({ clock });
  const bindingName = options.secureCookies ? SECURE_BINDING_COOKIE : BINDING_COOKIE;
  const lastStartFailureAudit = new Map<string, number>();
  const callbackRecords = createRefusalRecordLimit({ clock });

  const bindingCookie = (value: string, maxAgeSeconds: number): string =>
    serializeCookie(bindingName, value, { httpOnly: true, secure: options.secureCookies, sameSite: 'Lax', path: '/', maxAgeSeconds });

  const oidcOrRefuse = (): { config: GatewayConfig; oidc: OidcConfig } => {
    const { config } = options.view();
    if (config.admin.oidc === null) throw new ApiError('sso_not_configured');
    return { config, oidc: config.admin.oidc };
  };

  /** Logs the refusal (with `problem`, why in words, when known); records it too unless `record` is false (the callback's bound). */
  const refused = async (ctx: RequestContext, oidc: OidcConfig, error: string, reason: string, actor: AuditActor | null, detail: Record<string, string | number> = {}, record = true, problem?: string): Promise<void> => {
    const client = clientAddress(ctx);
    logger.warn('sso login refused', { requestId: ctx.requestId, client, error, reason, ...detail, ...(problem === undefined ? {} : { problem }), ...(actor === null ? {} : { sub: actor.id }), ...(record ? {} : { auditRecord: 'suppressed' }) });
    if (!record) return;
    await audit.record({
      actor: actor ?? ANONYMOUS_ACTOR,
      source: client,
      action: 'admin.login_failed',
      target: 'admin',
      before: null,
      after: null,
      detail: { reason, issuer: oidc.issuer, ...detail },
    });
  };

  const api: RouteHandler = async (ctx) => {
    const oidc = options.view().config.admin.oidc;
    sendJson(ctx.res, 200, { password: passwordLoginAllowed(oidc), sso: oidc === null ? null : { label: oidc.label } }, { 'cache-control': 'no-store' });
  };

  const start: RouteHandler = async (ctx) => {
    const { oidc } = oidcOrRefuse();
    let begun: { location: string; binding: string };
    try {
      begun = await flow.start(oidc, clientAddress(ctx));
    } catch (err) {
      if (!(err instanceof SsoStartError)) throw err;
      const nowMs = clock();
      logger.warn('sso provider unusable', { requestId: ctx.requestId, issuer: oidc.issuer, reason: err.reason, problem: err.message });
      if (nowMs - (lastStartFailureAudit.get(err.reason) ?? -Infinity) >= START_FAILURE_AUDIT_MS) {
        lastStartFailureAudit.set(err.reason, nowMs);
        await refused(ctx, oidc, 'sso_provider_error', err.reason, null);
      }
      redirect(ctx, '/?sso_error=sso_provider_error');
      return;
    }
    redirect(ctx, begun.location, [bindingCookie(begun.binding, Math.floor(LOGIN_TTL_MS / 1000))]);
  };

  const callback: RouteHandler = async (ctx) => {
    const { config, oidc } = oidcOrRefuse();
    const clearBinding = bindingCookie('', 0);
    const params = callbackParams(ctx);
    const binding = parseCookies(ctx.req.headers.cookie).get(bindingName);
    const outcome =
      params === null
        ? ({ ok: false, error: 'sso_state_invalid', reason: 'repeated_parameter', user: null } as const)
        : await flow.finish(oidc, params, binding, () => readClientSecret(config, oidc, env), config.security.requireFips);
    if (!outcome.ok) {
      const detail = 'detail' in outcome ? outcome.detail : {};
      const record = callbackRecords.take(`${outcome.user?.subject ?? '-'}\n${clientAddress(ctx)}\n${outcome.reason}`);
      const actor = outcome.user === null ? null : ssoActor(outcome.user);
      await refused(ctx, oidc, outcome.error, outcome.reason, actor, detail, record, 'problem' in outcome ? outcome.problem : undefined);
      redirect(ctx, `/?sso_error=${outcome.error}`, [clearBinding]);
      return;
    }
    const actor = ssoActor(outcome.user);
    const created = options.sessions.create(actor, ssoGrant(oidc));
    const client = clientAddress(ctx);
    logger.info('admin login', { requestId: ctx.requestId, client, sso: true, sub: actor.id });
    await audit.record({ actor, source: client, action: 'admin.login', target: 'admin', before: null, after: null, detail: { issuer: oidc.issuer } });
    redirect(ctx, '/', [options.sessionCookie(created.id), clearBinding]);
  };

  return [
    ['GET', '/api/sso', api],
    ['GET', '/sso/start', start],
    ['GET', '/sso/callback', callback],
  ];
}
