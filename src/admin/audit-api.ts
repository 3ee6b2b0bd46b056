// GET /api/audit (docs/admin-api.md, "Audit"): the audit chain, newest first,
// filtered and paged. Any principal with the 'read' scope may read it: the
// records hold no secret (the trail redacts secret-like values, the append refuses any left).
import { AUDIT_FILTER_NAMES, AuditFilterError, AuditLogError, parseAuditFilter, type AuditFilterName, type AuditLog } from '../audit/audit-log.ts';
import { ApiError, InvalidRequestError } from '../errors/api-error.ts';
import { sendJson } from '../http/respond.ts';
import type { AdminRoute } from './admin-principal.ts';

const NO_STORE = { 'cache-control': 'no-store' };
const PARAMS: ReadonlySet<string> = new Set(AUDIT_FILTER_NAMES);
const isFilterName = (name: string): name is AuditFilterName => PARAMS.has(name);

export interface AuditApiDeps {
  /** The chain (StateBackend.audit). */
  audit: AuditLog;
}

export function createAuditApi(deps: AuditApiDeps): AdminRoute[] {
  return [
    {
      method: 'GET',
      path: '/api/audit',
      need: 'read',
      async handler(ctx) {
        const query = new URL(ctx.req.url ?? '/', 'http://admin').searchParams;
        const input: Partial<Record<AuditFilterName, string>> = {};
        for (const [name, value] of query) {
          if (!isFilterName(name)) {
            throw new InvalidRequestError(`Unknown query parameter '${name}'; the filters are key, actor, action, since, until, limit and before.`, name, 'unknown_parameter');
          }
          if (Object.hasOwn(input, name)) throw new InvalidRequestError(`${name} is given more than once.`, name, 'invalid_value');
          input[name] = value;
        }
        let filter;
        try {
          filter = parseAuditFilter(input);
        } catch (error) {
          if (error instanceof AuditFilterError) throw new InvalidRequestError(error.message, error.param, 'invalid_value');
          throw error;
        }
        let page;
        try {
          page = await deps.audit.list(filter);
        } catch (error) {
          if (error instanceof AuditLogError) {
            // The operator's copy of why (the access line); the client gets the catalogue's words.
            ctx.log['auditError'] = error.message;
            throw new ApiError('audit_log_unavailable', undefined, { headers: { 'retry-after': '1' }, cause: error });
          }
          throw error;
        }
        sendJson(ctx.res, 200, { object: 'list', data: page.records, nextBefore: page.nextBefore }, NO_STORE);
      },
    },
  ];
}
