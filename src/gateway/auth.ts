// Bearer-key authentication for the API endpoints. The raw key is only ever
// hashed and looked up; it is never logged or echoed.
import type { IncomingMessage } from 'node:http';
import { AuthenticationError } from '../errors/api-error.ts';
import type { KeyPolicy } from './key-policy.ts';

/** The key's id and what it may do (its record, without the secret's hash). */
export type AuthenticatedKey = KeyPolicy;

export interface KeyAuthenticator {
  /** Synchronous lookup: null for unknown, malformed or revoked keys. */
  authenticate(rawKey: string): AuthenticatedKey | null;
  /** Records a use (for `keys list`'s last-used column). */
  touch(id: string): void;
}

const BEARER = 'bearer ';

export function authenticateRequest(req: IncomingMessage, keys: KeyAuthenticator): AuthenticatedKey {
  const header = req.headers.authorization;
  if (header === undefined || header.trim() === '') {
    throw new AuthenticationError(
      "You didn't provide an API key. Send it in the Authorization header as 'Bearer YOUR_KEY'; keys are created with `portcullis keys create`.",
    );
  }
  if (header.length <= BEARER.length || header.slice(0, BEARER.length).toLowerCase() !== BEARER) {
    throw new AuthenticationError("The Authorization header must use the Bearer scheme: 'Authorization: Bearer YOUR_KEY'.");
  }
  const key = keys.authenticate(header.slice(BEARER.length).trim());
  if (key === null) throw new AuthenticationError('Incorrect API key provided, or the key has been revoked.');
  keys.touch(key.id);
  return key;
}
