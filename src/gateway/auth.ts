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
 */
export function authenticateRequest(req: IncomingMessage, keys: KeyAuthenticator, clientAddress: string): AuthenticatedKey | Promise<AuthenticatedKey> {
  const header = req.headers.authorization;
  if (header === undefined || header.trim() === '') {
    throw new AuthenticationError(
      "You didn't provide an API key. Send it in the Authorization header as 'Bearer YOUR_KEY'; keys are created with `portcullis keys create`.",
    );
  }
  if (header.length <= BEARER.length || header.slice(0, BEARER.length).toLowerCase() !== BEARER) {
    throw new AuthenticationError("The Authorization header must use the Bearer scheme: 'Authorization: Bearer YOUR_KEY'.");
  }
  const rawKey = header.slice(BEARER.length).trim();
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

function unknownKey(): AuthenticationError {
  return new AuthenticationError('Incorrect API key provided, or the key has been revoked.');
}
