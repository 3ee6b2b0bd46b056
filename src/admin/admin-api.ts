// The admin JSON API's key, usage and alias endpoints (docs/admin-api.md).
// Sessions, CSRF and login live in admin-server.ts; every handler here runs
// only for a logged-in session that passed those checks.
//
// A raw key leaves this module exactly twice: in the answer to a create and
// to a rotate. Nothing else (list, get, the store) can ever return it, because
// nothing keeps it: the store holds its SHA-256.
import { aliasRequestFields } from '../config/request-fields-config.ts';
import { maxInputsPerCall } from '../config/alias-kind-config.ts';
import type { AuditTrail } from '../audit/audit-event.ts';
import { AuditLogError } from '../audit/audit-log.ts';
import type { GatewayConfig } from '../config/config.ts';
import { ApiError, InvalidRequestError } from '../errors/api-error.ts';
import type { AliasTargets } from '../routing/alias-targets.ts';
import { readRequestJson } from '../http/json-body.ts';
import { pathParams } from '../http/router.ts';
import { sendJson } from '../http/respond.ts';
import type { RequestContext } from '../http/request-context.ts';
import {
  AdminTokenAlreadyRevokedError,
  AdminTokenLimitError,
  AdminTokenNotFoundError,
  InvalidTokenSettingError,
} from '../keys/admin-token-errors.ts';
import {
  InvalidKeyNameError,
  InvalidKeySettingError,
  KeyAlreadyRevokedError,
  KeyNotFoundError,
  KeyRevokedError,
  KeyStoreIoError,
} from '../keys/errors.ts';
import { FileError } from '../files/errors.ts';
import { keyStatus, type KeyStatus } from '../keys/key-settings.ts';
import { redactSecretText } from '../log/secret-kinds.ts';
import { auditedKeyStore } from '../state/audited-key-store.ts';
import type { KeyPatch, KeyRecord, KeyStore, ListedKey } from '../state/key-store-port.ts';
import type { StateBackend } from '../state/state-backend.ts';
import { GRANULARITIES, type Granularity } from '../usage/usage-series.ts';
import type { AdminHandler, AdminPrincipal, AdminRoute } from './admin-principal.ts';
import { periodUsageView, usageView } from './usage-view.ts';

export interface AdminApiDeps {
  /** The configuration and alias routes serving now (a reload swaps them). */
  view(): { config: GatewayConfig; targets: AliasTargets };
  state: StateBackend;
  /** Where every change, login and token use is recorded (docs/audit.md). */
  audit: AuditTrail;
  clock: () => number;
  /**
   * The API listener's address as it listens (`http://127.0.0.1:8080`, or
   * `http+unix:/path` for an inherited Unix socket): the dashboard shows a new
   * key's base URL and a first request with it. Absent or null: not known.
   */
  apiAddress?: () => string | null;
}

type Handler = AdminHandler;

/** Admin request bodies are small; these bounds keep them so. */
const BODY_LIMITS = { maxBytes: 64 * 1024, limits: { maxDepth: 8, maxStringBytes: 4096, maxMembers: 512 } };
const CREATE_FIELDS = ['name', 'allowedAliases', 'expiresAt', 'limits', 'guard'] as const;
const NO_STORE = { 'cache-control': 'no-store' };

/** What the API shows of a key: everything but its hash. */
export interface KeyView {
  id: string;
  name: string;
  prefix: string;
  status: KeyStatus;
  createdAt: string;
  revokedAt: string | null;
  rotatedAt: string | null;
  expiresAt: string | null;
  lastUsedAt: string | null;
  allowedAliases: readonly string[] | null;
  limits: KeyRecord['limits'];
  guard: KeyRecord['guard'];
}

function keyView(record: KeyRecord | ListedKey, nowMs: number): KeyView {
  return {
    id: record.id,
    // A secret pasted as a name is shown redacted: tokens with only the read scope list keys too.
    name: redactSecretText(record.name),
    prefix: record.prefix,
    status: keyStatus(record, nowMs),
    createdAt: record.createdAt,
    revokedAt: record.revokedAt,
    rotatedAt: record.rotatedAt,
    expiresAt: record.expiresAt,
    lastUsedAt: 'lastUsedAt' in record ? record.lastUsedAt : null,
    allowedAliases: record.allowedAliases,
    limits: record.limits,
    guard: record.guard,
  };
}

export function createAdminApi(deps: AdminApiDeps): AdminRoute[] {
  const { state, clock } = deps;
  const now = (): number => clock();

  const readBody = async (ctx: RequestContext, allowed: readonly string[]): Promise<Record<string, unknown>> => {
    const body = await readRequestJson(ctx, BODY_LIMITS);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new InvalidRequestError('The request body must be a JSON object.', null, 'invalid_type');
    }
    for (const field of Object.keys(body)) {
      if (!allowed.includes(field)) throw new InvalidRequestError(`Unrecognized request argument supplied: ${field}`, field, 'unknown_parameter');
    }
    return body as Record<string, unknown>;
  };

  /** Alias names must exist in the serving config; a typo would lock a key out silently. */
  const checkAliases = (value: unknown): void => {
    if (!Array.isArray(value)) return;
    const { config } = deps.view();
    value.forEach((alias: unknown, i: number) => {
      if (typeof alias === 'string' && !Object.hasOwn(config.aliases, alias)) {
        const known = Object.keys(config.aliases).join(', ');
        throw new InvalidRequestError(`Unknown alias '${alias}'. Configured aliases: ${known}. (service-auto is allowed whenever the alias it resolves to is.)`, `allowedAliases[${i}]`, 'unknown_alias');
      }
    });
  };

  const keyId = (ctx: RequestContext, pattern: string): string => pathParams(pattern, ctx.path)['id'] ?? '';

  /** The key store as `who` changes it: each change it makes is recorded once (src/state/audited-key-store.ts). */
  const keysAs = (who: AdminPrincipal): KeyStore => auditedKeyStore(state.keys, deps.audit, { actor: who.actor, source: who.source }, clock);

  const list: Handler = async (ctx) => {
    const t = now();
    const keys = await storeCall(() => state.keys.list());
    sendJson(ctx.res, 200, { object: 'list', data: keys.map((k) => keyView(k, t)) }, NO_STORE);
  };

  const create: Handler = async (ctx, who) => {
    const body = await readBody(ctx, CREATE_FIELDS);
    if (body['name'] === undefined) throw new InvalidRequestError('Missing required parameter: name.', 'name', 'missing_required_parameter');
    checkAliases(body['allowedAliases']);
    const { key, record } = await storeCall(() =>
      keysAs(who).create(body['name'] as string, { allowedAliases: body['allowedAliases'], expiresAt: body['expiresAt'], limits: body['limits'], guard: body['guard'] }),
    );
    ctx.log['keyId'] = record.id;
    sendJson(ctx.res, 201, { key, record: keyView(record, now()) }, NO_STORE);
  };

  const get: Handler = async (ctx) => {
    const record = await storeCall(() => state.keys.get(keyId(ctx, '/api/keys/:id')));
    sendJson(ctx.res, 200, keyView(record, now()), NO_STORE);
  };

  const patch: Handler = async (ctx, who) => {
    const id = keyId(ctx, '/api/keys/:id');
    const body = await readBody(ctx, CREATE_FIELDS);
    checkAliases(body['allowedAliases']);
    const change: KeyPatch = {};
    for (const field of CREATE_FIELDS) if (body[field] !== undefined) change[field] = body[field];
    ctx.log['keyId'] = id;
    await storeCall(() => keysAs(who).update(id, change));
    sendJson(ctx.res, 200, keyView(await storeCall(() => state.keys.get(id)), now()), NO_STORE);
  };

  const revoke: Handler = async (ctx, who) => {
    const id = keyId(ctx, '/api/keys/:id/revoke');
    ctx.log['keyId'] = id;
    const record = await storeCall(() => keysAs(who).revoke(id));
    sendJson(ctx.res, 200, keyView(record, now()), NO_STORE);
  };

  const rotate: Handler = async (ctx, who) => {
    const id = keyId(ctx, '/api/keys/:id/rotate');
    ctx.log['keyId'] = id;
    const { key, record } = await storeCall(() => keysAs(who).rotate(id));
    sendJson(ctx.res, 200, { key, record: keyView(record, now()) }, NO_STORE);
  };

  const usage: Handler = async (ctx) => {
    const id = keyId(ctx, '/api/keys/:id/usage');
    const granularity = granularityOf(ctx);
    const t = now();
    const record = await storeCall(() => state.keys.get(id));
    const series = await state.usage.series(id, granularity, t);
    const { tokenBudget, costBudget } = record.limits;
    const used = tokenBudget === null && costBudget === null ? null : await state.limiter.budgetUsed(id, record.limits, t);
    const days = costBudget === null ? null : granularity === 'day' ? series : await state.usage.series(id, 'day', t);
    sendJson(ctx.res, 200, usageView(id, series, record.limits, used, deps.view().config.currency, t, days), NO_STORE);
  };

  const usageByKey: Handler = async (ctx) => {
    const granularity = granularityOf(ctx);
    const t = now();
    sendJson(ctx.res, 200, periodUsageView(granularity, await state.usage.periodTotals(granularity, t), deps.view().config.currency, t), NO_STORE);
  };

  const aliases: Handler = async (ctx) => {
    const { config, targets } = deps.view();
    const health = new Map(targets.health().map((h) => [h.id, h.circuit]));
    const data = Object.entries(config.aliases).map(([alias, a]) => ({
      alias,
      kind: a.kind,
      available: targets.isAvailable(alias),
      maxOutputTokens: a.maxOutputTokens,
      contextWindow: a.contextWindow,
      capabilities: a.capabilities,
      // Prices per million tokens in `currency`, as configured; a target's is resolved (its own, the alias's, or free for demo).
      price: a.price === null ? null : { ...a.price },
      imageTokens: a.imageTokens,
      // OpenAI's fields beyond the contract's table it takes: its own list, else the top level's (none for embeddings).
      requestFields: a.kind === 'chat' ? [...aliasRequestFields(a, config.requestFields)] : [],
      targets: a.targets.map((t) => {
        const id = `${t.provider}/${t.model}`;
        const target = { id, provider: t.provider, model: t.model, weight: t.weight, priority: t.priority, price: t.price === null ? null : { ...t.price }, circuit: health.get(id) ?? 'closed' };
        // An embeddings target's settings as the dispatcher uses them: the provider type's default filled in.
        return a.kind === 'chat' ? target : { ...target, acceptsDimensions: t.acceptsDimensions, maxInputsPerCall: maxInputsPerCall(t, config.providers[t.provider]) };
      }),
    }));
    const auto = { default: config.auto.default, rules: config.auto.rules.map((r) => ({ use: r.use, reason: r.reason })) };
    sendJson(ctx.res, 200, { object: 'list', data, auto, currency: config.currency, api: { url: deps.apiAddress?.() ?? null } }, NO_STORE);
  };

  return [
    { method: 'GET', path: '/api/keys', need: 'read', handler: list },
    { method: 'POST', path: '/api/keys', need: 'keys', handler: create },
    { method: 'GET', path: '/api/keys/:id', need: 'read', handler: get },
    { method: 'PATCH', path: '/api/keys/:id', need: 'keys', handler: patch },
    { method: 'POST', path: '/api/keys/:id/revoke', need: 'keys', handler: revoke },
    { method: 'POST', path: '/api/keys/:id/rotate', need: 'keys', handler: rotate },
    { method: 'GET', path: '/api/keys/:id/usage', need: 'read', handler: usage },
    { method: 'GET', path: '/api/usage', need: 'read', handler: usageByKey },
    { method: 'GET', path: '/api/aliases', need: 'read', handler: aliases },
  ];
}

/** The `granularity` query parameter of the usage routes: `hour` (the default) or `day`. */
function granularityOf(ctx: RequestContext): Granularity {
  const query = new URL(ctx.req.url ?? '/', 'http://admin').searchParams;
  const granularity = (query.get('granularity') ?? 'hour') as Granularity;
  if (!GRANULARITIES.includes(granularity)) {
    throw new InvalidRequestError("granularity must be 'hour' or 'day'.", 'granularity', 'invalid_value');
  }
  return granularity;
}

/**
 * Store failures (the key store's and the admin token store's, admin-tokens-api.ts)
 * as client answers; anything unexpected goes on to the 500 boundary.
 */
export async function storeCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw adminErrorOf(err);
  }
}

function adminErrorOf(err: unknown): unknown {
  if (err instanceof InvalidKeyNameError) return new InvalidRequestError(err.message, 'name', 'invalid_key_name');
  if (err instanceof InvalidKeySettingError) return new InvalidRequestError(err.message, err.param, 'invalid_key_setting');
  if (err instanceof KeyNotFoundError) return new ApiError('key_not_found', err.message);
  if (err instanceof KeyAlreadyRevokedError || err instanceof KeyRevokedError) {
    return new ApiError('key_revoked', err.message);
  }
  if (err instanceof InvalidTokenSettingError) return new InvalidRequestError(err.message, err.param, 'invalid_token_setting');
  if (err instanceof AdminTokenNotFoundError) return new ApiError('admin_token_not_found', err.message);
  if (err instanceof AdminTokenAlreadyRevokedError) return new ApiError('admin_token_already_revoked', err.message);
  if (err instanceof AdminTokenLimitError) return new ApiError('admin_token_limit_reached', err.message);
  if (err instanceof FileError || err instanceof KeyStoreIoError) {
    return new ApiError('key_store_unavailable', undefined, { headers: { 'retry-after': '1' } });
  }
  // A write-ahead record that cannot be appended stops its change (src/state/audited-key-store.ts).
  if (err instanceof AuditLogError) return new ApiError('change_not_recorded');
  return err;
}
