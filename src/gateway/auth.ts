// Bearer-key authentication for the API endpoints. The raw key is only ever
// hashed and looked up; it is never logged or echoed.
import type { IncomingMessage } from 'node:http';
import { AuthenticationError } from '../errors/api-error.ts';
import { addressGroup } from '../http/address-group.ts';
import type { KeyPolicy } from './key-policy.ts';

/** The key's id and what it may do (its record, without the secret's hash). */
export type AuthenticatedKey = KeyPolicy;

export interface KeyAuthenticator {
  /** Synchronous lookup: null for unknown, malformed or revoked keys. */
  authenticate(rawKey: string): AuthenticatedKey | null;
  /**
   * After a null from authenticate(): asks the shared store (a key created on another instance a moment ago),
   * within a rate per `client` (an address group); rejects with a 503 error when it could not ask. Absent for one instance.
   */
  lookup?(rawKey: string, client: string): Promise<AuthenticatedKey | null>;
  /** Records a use (for `keys list`'s last-used column). */
  touch(id: string): void;
}

const BEARER = 'bearer ';

/**
 * The key, at once when this instance knows it; a promise only when a miss asks the shared store.
 * `clientAddress` (ctx.clientAddress) is what the store's lookup rate is counted by.
 * `headers`: `bearer` takes the key from Authorization only (OpenAI's doors); `anthropic` takes
 * it from `x-api-key` (Claude Code) or, without one, from Authorization (Anthropic's SDK with
 * an auth token or a gateway key given as one).
 */
export function authenticateRequest(
  req: IncomingMessage,
  keys: KeyAuthenticator,
  clientAddress: string,
  headers: 'bearer' | 'anthropic' = 'bearer',
): AuthenticatedKey | Promise<AuthenticatedKey> {
  const rawKey = headers === 'anthropic' ? anthropicKeyOf(req) : bearerKeyOf(req, req.headers['x-api-key'] === undefined ? BEARER_HINT : X_API_KEY_HINT);
  const key = keys.authenticate(rawKey);
  if (key !== null) {
    keys.touch(key.id);
    return key;
  }
  if (keys.lookup === undefined) throw unknownKey();
  return keys.lookup(rawKey, addressGroup(clientAddress)).then((found) => {
    if (found === null) throw unknownKey();
    keys.touch(found.id);
    return found;
  });
}

const BEARER_HINT = "Send it in the Authorization header as 'Bearer YOUR_KEY'; keys are created with `portcullis keys create`.";
const X_API_KEY_HINT =
  "This path reads the key from the Authorization header as 'Bearer YOUR_KEY'; x-api-key is read on Anthropic's paths (/v1/messages) and, for GET /v1/models, with an anthropic-version header.";
const ANTHROPIC_HINT = "Send it in the x-api-key header (ANTHROPIC_API_KEY) or as 'Authorization: Bearer YOUR_KEY'; keys are created with `portcullis keys create`.";

function bearerKeyOf(req: IncomingMessage, hint: string): string {
  const header = req.headers.authorization;
  if (header === undefined || header.trim() === '') throw new AuthenticationError(`You didn't provide an API key. ${hint}`);
  if (header.length <= BEARER.length || header.slice(0, BEARER.length).toLowerCase() !== BEARER) {
    throw new AuthenticationError("The Authorization header must use the Bearer scheme: 'Authorization: Bearer YOUR_KEY'.");
  }
  return header.slice(BEARER.length).trim();
}

/** x-api-key when the request has one (a repeated header is refused: node joins it with commas), else the Bearer token. */
function anthropicKeyOf(req: IncomingMessage): string {
  const header = req.headers['x-api-key'];
  if (header === undefined || (typeof header === 'string' && header.trim() === '' && req.headers.authorization !== undefined)) return bearerKeyOf(req, ANTHROPIC_HINT);
  if (typeof header !== 'string' || header.includes(',')) throw new AuthenticationError('Send the x-api-key header once, with one key.');
  const key = header.trim();
  if (key === '') throw new AuthenticationError(`You didn't provide an API key. ${ANTHROPIC_HINT}`);
  return key;
}

function unknownKey(): AuthenticationError {
  return new AuthenticationError('Incorrect API key provided, or the key has been revoked.');
}
