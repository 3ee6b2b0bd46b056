// x-request-id, as the spec says: letters, digits, dot, underscore, hyphen;
// at most 128 characters; echoed back; intended for support.
import { randomUUID } from 'node:crypto';
import { InvalidRequestError } from '../errors/api-error.ts';

export const REQUEST_ID_HEADER = 'x-request-id';
const MAX_REQUEST_ID_LENGTH = 128;

const C_DOT = 0x2e;
const C_HYPHEN = 0x2d;
const C_UNDERSCORE = 0x5f;

export function isValidRequestId(id: string): boolean {
  if (id.length === 0 || id.length > MAX_REQUEST_ID_LENGTH) return false;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    const ok =
      (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === C_DOT || c === C_HYPHEN || c === C_UNDERSCORE;
    if (!ok) return false;
  }
  return true;
}

/**
 * A fresh id in the same alphabet: `req_` + 32 hex characters (a version-4
 * UUID without its hyphens, 122 random bits). randomUUID draws from a cached
 * entropy pool, cheaper per request than randomBytes.
 */
export function generateRequestId(): string {
  const u = randomUUID();
  return `req_${u.slice(0, 8)}${u.slice(9, 13)}${u.slice(14, 18)}${u.slice(19, 23)}${u.slice(24)}`;
}

/**
 * Returns the id to use for this request. A present but invalid header is a
 * 400 naming the header; the bad value is never echoed (the caller answers
 * with a fresh id so the failure can still be traced).
 */
export function requestIdFromHeader(value: string | string[] | undefined): string {
  if (value === undefined) return generateRequestId();
  if (Array.isArray(value)) {
    throw new InvalidRequestError('The x-request-id header must be given at most once.', null, 'invalid_request_id');
  }
  if (!isValidRequestId(value)) {
    throw new InvalidRequestError(
      'The x-request-id header is invalid: use 1 to 128 characters from letters, digits, ".", "_" and "-".',
      null,
      'invalid_request_id',
    );
  }
  return value;
}
