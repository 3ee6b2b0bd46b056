// GET /v1/models: OpenAI's list shape, one entry per alias (service-auto included).
// A key limited to some aliases sees those (and service-auto); an expired key is refused.
import { type GatewayConfig } from '../config/config.ts';
import { sendJson } from '../http/respond.ts';
import type { RouteHandler } from '../http/request-context.ts';
import { listAliases } from '../routing/alias-routing.ts';
import { authenticateRequest, type KeyAuthenticator } from './auth.ts';
import { checkExpiry, usableAliases } from './key-policy.ts';

interface ModelListing {
  object: 'list';
  data: Array<{ id: string; object: 'model'; created: number; owned_by: string }>;
}

/** `created` is when this configuration was loaded: aliases have no other birth date. */
function buildModelListing(config: Pick<GatewayConfig, 'aliases'>, created: number): ModelListing {
  return {
    object: 'list',
    data: listAliases(config).map((id) => ({ id, object: 'model', created, owned_by: 'portcullis' })),
  };
}

export function createModelsHandler(config: GatewayConfig, keys: KeyAuthenticator, loadedAt: number, clock: () => number = Date.now): RouteHandler {
  const listing = buildModelListing(config, loadedAt);
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
