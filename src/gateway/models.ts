// GET /v1/models: OpenAI's list shape, one entry per alias (service-auto included).
import type { GatewayConfig } from '../config/config.ts';
import { sendJson } from '../http/respond.ts';
import type { RouteHandler } from '../http/server.ts';
import { listAliases } from '../routing/alias-routing.ts';
import { authenticateRequest, type KeyAuthenticator } from './auth.ts';

export interface ModelListing {
  object: 'list';
  data: Array<{ id: string; object: 'model'; created: number; owned_by: string }>;
}

/** `created` is when this configuration was loaded: aliases have no other birth date. */
export function buildModelListing(config: Pick<GatewayConfig, 'aliases'>, created: number): ModelListing {
  return {
    object: 'list',
    data: listAliases(config).map((id) => ({ id, object: 'model', created, owned_by: 'portcullis' })),
  };
}

export function createModelsHandler(config: GatewayConfig, keys: KeyAuthenticator, loadedAt: number): RouteHandler {
  const listing = buildModelListing(config, loadedAt);
  return async (ctx) => {
    ctx.log['keyId'] = authenticateRequest(ctx.req, keys).id;
    sendJson(ctx.res, 200, listing);
  };
}
