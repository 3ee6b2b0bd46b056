// The admin API's token endpoints (docs/admin-api.md, "Tokens"). Every route
// needs a session: a token cannot list, mint or revoke tokens.
//
// A token leaves this module once, in the answer to its create; nothing else
// (list, the store, the audit trail) can return it, because nothing keeps it.
import type { AuditTrail } from '../audit/audit-event.ts';
import { InvalidRequestError } from '../errors/api-error.ts';
import { readRequestJson } from '../http/json-body.ts';
import { pathParams } from '../http/router.ts';
import { sendJson } from '../http/respond.ts';
import type { RequestContext } from '../http/request-context.ts';
import { adminTokenView } from '../keys/admin-token.ts';
import { auditedTokenStore } from '../state/audited-token-store.ts';
import type { StateBackend } from '../state/state-backend.ts';
import { storeCall } from './admin-api.ts';
import type { AdminHandler, AdminRoute } from './admin-principal.ts';

export interface AdminTokensApiDeps {
  state: StateBackend;
  audit: AuditTrail;
  clock: () => number;
}

/** A create body is three short fields. */
const BODY_LIMITS = { maxBytes: 4096, limits: { maxDepth: 3, maxStringBytes: 1024, maxMembers: 8 } };
const CREATE_FIELDS = ['name', 'scopes', 'expiresAt'];
const NO_STORE = { 'cache-control': 'no-store' };

export function createAdminTokensApi(deps: AdminTokensApiDeps): AdminRoute[] {
  const { state, audit, clock } = deps;

  const readBody = async (ctx: RequestContext): Promise<Record<string, unknown>> => {
    const body = await readRequestJson(ctx, BODY_LIMITS);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new InvalidRequestError('The request body must be a JSON object {"name","scopes","expiresAt"}.', null, 'invalid_type');
    }
    for (const field of Object.keys(body)) {
      if (!CREATE_FIELDS.includes(field)) throw new InvalidRequestError(`Unrecognized request argument supplied: ${field}`, field, 'unknown_parameter');
    }
    for (const field of CREATE_FIELDS) {
      if (!Object.hasOwn(body, field)) throw new InvalidRequestError(`Missing required parameter: ${field}.`, field, 'missing_required_parameter');
    }
    return body as Record<string, unknown>;
  };

  const list: AdminHandler = async (ctx) => {
    const now = clock();
    const records = await storeCall(() => state.tokens.list());
    sendJson(ctx.res, 200, { object: 'list', data: records.map((r) => adminTokenView(r, now)) }, NO_STORE);
  };

  const create: AdminHandler = async (ctx, who) => {
    const body = await readBody(ctx);
    const now = clock();
    // Recorded write-ahead: the token.create record is on the chain before the token is stored.
    const { token, record } = await storeCall(() =>
      auditedTokenStore(state.tokens, audit, who).create({ name: body['name'], scopes: body['scopes'], expiresAt: body['expiresAt'], createdBy: `${who.actor.kind}:${who.actor.id}` }, now),
    );
    ctx.log['tokenId'] = record.id;
    sendJson(ctx.res, 201, { token, record: adminTokenView(record, now) }, NO_STORE);
  };

  const revoke: AdminHandler = async (ctx, who) => {
    const id = pathParams('/api/tokens/:id/revoke', ctx.path)['id'] ?? '';
    const now = clock();
    const revoked = await storeCall(() => auditedTokenStore(state.tokens, audit, who).revoke(id, now));
    ctx.log['tokenId'] = revoked.id;
    sendJson(ctx.res, 200, adminTokenView(revoked, now), NO_STORE);
  };

  return [
    { method: 'GET', path: '/api/tokens', need: 'session', handler: list },
    { method: 'POST', path: '/api/tokens', need: 'session', handler: create },
    { method: 'POST', path: '/api/tokens/:id/revoke', need: 'session', handler: revoke },
  ];
}
