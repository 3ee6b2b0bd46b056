// GET /v1/models: OpenAI's list shape, one entry per alias (service-auto included).
// A key limited to some aliases sees those (and service-auto); an expired key is refused.
// An alias that takes OpenAI's fields beyond the contract's table (requestFields)
// lists them in `request_fields`; service-auto lists what any alias takes.
import type { FieldPolicy, RequestFieldName } from '../chat/request-fields.ts';
import { type GatewayConfig } from '../config/config.ts';
import { REQUEST_FIELD_NAMES } from '../config/request-fields-config.ts';
import { sendJson } from '../http/respond.ts';
import type { RouteHandler } from '../http/request-context.ts';
import { listAliases } from '../routing/alias-routing.ts';
import { authenticateRequest, type KeyAuthenticator } from './auth.ts';
import { checkExpiry, usableAliases } from './key-policy.ts';

interface ModelRecord {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  /** Absent when the alias takes the contract's table alone. */
  request_fields?: RequestFieldName[];
}

interface ModelListing {
  object: 'list';
  data: ModelRecord[];
}

/** `created` is when this configuration was loaded: aliases have no other birth date. */
function buildModelListing(config: Pick<GatewayConfig, 'aliases'>, policy: FieldPolicy, created: number): ModelListing {
  return {
    object: 'list',
    data: listAliases(config).map((id) => {
      const record: ModelRecord = { id, object: 'model', created, owned_by: 'portcullis' };
      const accepted = policy.acceptedFor(id);
      if (accepted.size > 0) record.request_fields = REQUEST_FIELD_NAMES.filter((name) => accepted.has(name));
      return record;
    }),
  };
}

export function createModelsHandler(config: GatewayConfig, policy: FieldPolicy, keys: KeyAuthenticator, loadedAt: number, clock: () => number = Date.now): RouteHandler {
  const listing = buildModelListing(config, policy, loadedAt);
  return async (ctx) => {
    const key = await authenticateRequest(ctx.req, keys, ctx.clientAddress);
    ctx.log['keyId'] = key.id;
    checkExpiry(key, clock());
    if (key.allowedAliases === null) {
      sendJson(ctx.res, 200, listing);
      return;
    }
    const usable = new Set(usableAliases(key, config));
    sendJson(ctx.res, 200, { object: 'list', data: listing.data.filter((m) => usable.has(m.id)) });
  };
}
