// GET /v1/models: OpenAI's list shape, one entry per alias (service-auto included);
// Anthropic's (`type: "model"`, `display_name`, `created_at`, `has_more`) when the
// request carries `anthropic-version`, as Anthropic's SDKs and Claude Code send it,
// with the key in x-api-key or Authorization and errors in Anthropic's envelope.
// A key limited to some aliases sees those (and service-auto); an expired key is refused.
// An alias that takes OpenAI's fields beyond the contract's table (requestFields)
// lists them in `request_fields`; service-auto lists what any alias takes.
// Each record says its `kind` ("chat" or "embeddings"; service-auto is chat);
// Anthropic's listing holds the chat models only, since a Claude client can
// send nothing an embeddings model serves.
import type { FieldPolicy, RequestFieldName } from '../chat/request-fields.ts';
import { type AliasKind, type GatewayConfig } from '../config/config.ts';
import { REQUEST_FIELD_NAMES } from '../config/request-fields-config.ts';
import { sendJson } from '../http/respond.ts';
import type { RouteHandler } from '../http/request-context.ts';
import { aliasKind, listAliases } from '../routing/alias-routing.ts';
import { ANTHROPIC_REQUEST_ID_HEADER, renderAnthropicError } from '../messages/message-errors.ts';
import { authenticateRequest, type KeyAuthenticator } from './auth.ts';
import { checkExpiry, usableAliases } from './key-policy.ts';

interface ModelRecord {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  kind: AliasKind;
  /** Absent when the alias takes the contract's table alone. */
  request_fields?: RequestFieldName[];
}

interface ModelListing {
  object: 'list';
  data: ModelRecord[];
}

/** An embeddings request takes no chat fields. */
const NO_FIELDS: ReadonlySet<RequestFieldName> = new Set();

/** `created` is when this configuration was loaded: aliases have no other birth date. */
function buildModelListing(config: Pick<GatewayConfig, 'aliases'>, policy: FieldPolicy, created: number): ModelListing {
  return {
    object: 'list',
    data: listAliases(config).map((id) => {
      const record: ModelRecord = { id, object: 'model', created, owned_by: 'portcullis', kind: aliasKind(config, id) ?? 'chat' };
      const accepted = record.kind === 'chat' ? policy.acceptedFor(id) : NO_FIELDS;
      if (accepted.size > 0) record.request_fields = REQUEST_FIELD_NAMES.filter((name) => accepted.has(name));
      return record;
    }),
  };
}

interface AnthropicModelRecord {
  type: 'model';
  id: string;
  display_name: string;
  created_at: string;
}

/** Anthropic's page of models: the whole list of chat models on one page. */
function anthropicListing(records: readonly ModelRecord[]): { data: AnthropicModelRecord[]; has_more: false; first_id: string | null; last_id: string | null } {
  const data = records.filter((r) => r.kind === 'chat').map((r): AnthropicModelRecord => ({ type: 'model', id: r.id, display_name: r.id, created_at: new Date(r.created * 1000).toISOString().replace('.000Z', 'Z') }));
  return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null };
}

export function createModelsHandler(config: GatewayConfig, policy: FieldPolicy, keys: KeyAuthenticator, loadedAt: number, clock: () => number = Date.now): RouteHandler {
  const listing = buildModelListing(config, policy, loadedAt);
  const anthropic = anthropicListing(listing.data);
  return async (ctx) => {
    const inAnthropicShape = ctx.req.headers['anthropic-version'] !== undefined;
    if (inAnthropicShape) {
      ctx.renderError = renderAnthropicError;
      ctx.res.setHeader(ANTHROPIC_REQUEST_ID_HEADER, ctx.requestId);
    }
    const key = await authenticateRequest(ctx.req, keys, ctx.clientAddress, inAnthropicShape ? 'anthropic' : 'bearer', 'models');
    ctx.log['keyId'] = key.id;
    checkExpiry(key, clock());
    if (key.allowedAliases === null) {
      sendJson(ctx.res, 200, inAnthropicShape ? anthropic : listing);
      return;
    }
    const usable = new Set(usableAliases(key, config));
    const records = listing.data.filter((m) => usable.has(m.id));
    sendJson(ctx.res, 200, inAnthropicShape ? anthropicListing(records) : { object: 'list', data: records });
  };
}
