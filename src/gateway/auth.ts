// Bearer-key authentication for the API endpoints. The raw key is only ever
// hashed and looked up (or handed to the host's Authenticator); it is never
// logged or echoed.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { ApiDoor, AuthenticationRequest, Authenticator } from '../api/keys.ts';
import { ApiError, AuthenticationError } from '../errors/api-error.ts';
import { addressGroup } from '../http/address-group.ts';
import type { Logger } from '../log/logger.ts';
import { checkHostPolicy } from './host-policy.ts';
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
  /**
   * A host's Authenticator (hostAuthenticator): when present it decides every request, given
   * the key as the door reads it or null, and authenticate()/lookup() are not asked.
   */
  decide?(request: AuthenticationRequest): AuthenticatedKey | Promise<AuthenticatedKey>;
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
  headers: 'bearer' | 'anthropic',
  door: ApiDoor,
): AuthenticatedKey | Promise<AuthenticatedKey> {
  if (keys.decide !== undefined) return keys.decide(authenticationRequest(req, clientAddress, headers, door));
  const rawKey = keyOf(req, headers);
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

function keyOf(req: IncomingMessage, headers: 'bearer' | 'anthropic'): string {
  return headers === 'anthropic' ? anthropicKeyOf(req) : bearerKeyOf(req, req.headers['x-api-key'] === undefined ? BEARER_HINT : X_API_KEY_HINT);
}

/** What the host's Authenticator is given: the key as the door reads it (null without one; a malformed header is still the client's 401). */
function authenticationRequest(req: IncomingMessage, clientAddress: string, headers: 'bearer' | 'anthropic', door: ApiDoor): AuthenticationRequest {
  const given = headers === 'anthropic' ? req.headers['x-api-key'] !== undefined || req.headers.authorization !== undefined : req.headers.authorization !== undefined;
  return { apiKey: given ? keyOf(req, headers) : null, headers: req.headers, clientAddress, clientCertificate: presentedCertificate(req), door };
}

/**
 * The certificate the client presented on a TLS connection whose server let it
 * through, and whether it verified against that server's CAs. The gateway's
 * listener refuses an unverified one before this is asked; a host's server
 * that accepts one (requestCert without rejectUnauthorized) leaves the host to
 * decide, by its fingerprint for instance.
 */
function presentedCertificate(req: IncomingMessage): AuthenticationRequest['clientCertificate'] {
  const socket = req.socket as Partial<TLSSocket>;
  if (socket.encrypted !== true || socket.getPeerX509Certificate === undefined) return null;
  const certificate = socket.getPeerX509Certificate();
  return certificate === undefined ? null : { subject: certificate.subject, fingerprint256: certificate.fingerprint256, verified: socket.authorized === true };
}

/**
 * The port the pipeline asks when the host decides keys: its answer checked
 * (./host-policy.ts); null is the client's 401, a bad policy or a throw a generic 500
 * with an error log (the key store is never asked, and nothing is widened).
 */
export function hostAuthenticator(authenticate: Authenticator, logger: Logger): KeyAuthenticator {
  const settle = (answer: unknown): AuthenticatedKey => {
    if (answer === null) throw unknownKey();
    return checkHostPolicy(answer, logger);
  };
  const failed = (error: unknown): never => {
    // Only the error's name: a host's DB driver may quote the query, and the client's key in it.
    logger.error('the authenticator threw; the request failed with a 500', { error: error instanceof Error ? error.name : typeof error });
    throw new ApiError('internal_error');
  };
  return {
    authenticate: () => null,
    touch: () => {},
    decide(request) {
      let answer: ReturnType<Authenticator>;
      try {
        answer = authenticate(request);
      } catch (error) {
        return failed(error);
      }
      return isThenable(answer) ? Promise.resolve(answer).then(settle, failed) : settle(answer);
    },
  };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
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
