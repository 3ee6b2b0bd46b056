// GET and DELETE /v1/responses/{id}: a stored response (responses.store) for
// the key that made it. Any other key, an expired response and one never
// stored answer alike, 404 response_not_found: whether an id exists is itself
// not told to another key. With the store off, every id is not found, and the
// message says why.
import { ApiError } from '../errors/api-error.ts';
import { sendJson } from '../http/respond.ts';
import type { RouteHandler } from '../http/request-context.ts';
import { pathParams } from '../http/router.ts';
import type { ResponseStore, StoredResponse } from '../state/response-store-port.ts';
import { authenticateRequest, type KeyAuthenticator } from './auth.ts';
import { checkExpiry } from './key-policy.ts';

export const STORED_RESPONSE_PATH = '/v1/responses/:id';

function notFound(id: string, storeOn: boolean): ApiError {
  const shown = id.slice(0, 64);
  return new ApiError(
    'response_not_found',
    storeOn ? `No stored response '${shown}' for this API key (it may have expired).` : `No stored response '${shown}': the gateway's response store is off (responses.store in its config), so no response is kept.`,
  );
}

/** The response as stored: what a retrieve gives back (the conversation's items are not repeated). */
function storedView(record: StoredResponse): Record<string, unknown> {
  return {
    id: record.id,
    object: 'response',
    created_at: Math.floor(record.createdAt / 1000),
    status: 'completed',
    output: record.output,
    usage: record.usage,
    previous_response_id: record.previousId,
    store: true,
  };
}

export function createStoredResponsesHandlers(keys: KeyAuthenticator, store: ResponseStore | undefined, clock: () => number): { get: RouteHandler; delete: RouteHandler } {
  const keyOf = async (ctx: Parameters<RouteHandler>[0]): Promise<{ keyId: string; id: string }> => {
    const found = authenticateRequest(ctx.req, keys, ctx.clientAddress, 'bearer', 'responses');
    const key = found instanceof Promise ? await found : found;
    ctx.log['keyId'] = key.id;
    checkExpiry(key, clock());
    return { keyId: key.id, id: pathParams(STORED_RESPONSE_PATH, ctx.path)['id'] ?? '' };
  };
  return {
    async get(ctx) {
      const { keyId, id } = await keyOf(ctx);
      const record = store === undefined ? null : await store.get(id, keyId);
      if (record === null) throw notFound(id, store !== undefined);
      sendJson(ctx.res, 200, storedView(record));
    },
    async delete(ctx) {
      const { keyId, id } = await keyOf(ctx);
      const deleted = store === undefined ? false : await store.delete(id, keyId);
      if (!deleted) throw notFound(id, store !== undefined);
      sendJson(ctx.res, 200, { id, object: 'response', deleted: true });
    },
  };
}
