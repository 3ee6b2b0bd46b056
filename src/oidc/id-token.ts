// ID token validation, OpenID Connect Core 1.0 section 3.1.3.7
// (https://openid.net/specs/openid-connect-core-1_0.html#IDTokenValidation).
// The token comes straight from the token endpoint over TLS, but it is still
// verified against the provider's published keys: the signature is what
// binds iss, aud and nonce to this login.
import { IdTokenError, parseJws, verifyJwsSignature, type IdTokenAlg } from './jws.ts';
import type { KeyObject } from 'node:crypto';

/** Clocks of the gateway and the provider may differ by this much. */
export const CLOCK_SKEW_MS = 60_000;

export interface IdTokenExpectations {
  issuer: string;
  clientId: string;
  /** aud must contain one of these (default [clientId]). */
  audiences: readonly string[];
  /** The nonce sent with this login's authorization request. */
  nonce: string;
  nowMs: number;
  /** The header algs accepted (default ID_TOKEN_ALGS; FIPS_ID_TOKEN_ALGS under security.requireFips). */
  algs?: readonly IdTokenAlg[];
  /** The key for the token's kid and alg, or null when the provider publishes none. */
  key(kid: string | undefined, alg: IdTokenAlg): Promise<KeyObject | null>;
}

/** The claims a verified token yields (everything else is kept in `claims`). */
export interface VerifiedIdToken {
  sub: string;
  iss: string;
  claims: Readonly<Record<string, unknown>>;
}

function numericDate(payload: Record<string, unknown>, name: string, required: boolean): number | undefined {
  const value = payload[name];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new IdTokenError('malformed', `the ID token's ${name} is not a NumericDate`);
  return value * 1000;
}

/** Steps 2 to 11 on a token whose signature verified. */
export function checkIdTokenClaims(payload: Record<string, unknown>, expect: Omit<IdTokenExpectations, 'key' | 'algs'>): VerifiedIdToken {
  const { iss, sub, aud, azp, nonce } = payload;
  // 2. The Issuer Identifier MUST exactly match the value of the iss Claim.
  if (iss !== expect.issuer) throw new IdTokenError('wrong_issuer', `the ID token was issued by ${JSON.stringify(String(iss).slice(0, 200))}, not ${expect.issuer}`);
  if (typeof sub !== 'string' || sub.length === 0 || sub.length > 255) throw new IdTokenError('malformed', 'the ID token\'s sub is not a string of 1 to 255 characters');
  // 3. aud MUST contain the client_id (here: one of the configured audiences).
  const audiences = typeof aud === 'string' ? [aud] : Array.isArray(aud) && aud.length <= 64 && aud.every((a) => typeof a === 'string') ? (aud as string[]) : null;
  if (audiences === null) throw new IdTokenError('malformed', 'the ID token\'s aud is not a string or an array of strings');
  if (!audiences.some((a) => expect.audiences.includes(a))) throw new IdTokenError('wrong_audience', 'the ID token is not meant for this gateway (aud holds none of the configured audiences)');
  // 4 and 5. Several audiences: azp must be present and be this client.
  if ((audiences.length > 1 || azp !== undefined) && azp !== expect.clientId) {
    throw new IdTokenError('wrong_audience', 'the ID token was issued to another client (azp is not the client id)');
  }
  // 9. The current time MUST be before exp; 10. iat not in the future beyond the skew; nbf (RFC 7519 4.1.5).
  const exp = numericDate(payload, 'exp', true) as number;
  const iat = numericDate(payload, 'iat', true) as number;
  const nbf = numericDate(payload, 'nbf', false);
  if (expect.nowMs >= exp + CLOCK_SKEW_MS) throw new IdTokenError('expired', 'the ID token has expired');
  if (iat > expect.nowMs + CLOCK_SKEW_MS || (nbf !== undefined && nbf > expect.nowMs + CLOCK_SKEW_MS)) {
    throw new IdTokenError('not_yet_valid', 'the ID token is not valid yet (iat or nbf is in the future; check the clocks)');
  }
  // 11. The nonce Claim Value MUST be checked to verify that it is the same value as the one sent.
  if (typeof nonce !== 'string' || nonce !== expect.nonce) throw new IdTokenError('nonce_mismatch', 'the ID token\'s nonce is not the one this login sent');
  return { sub, iss, claims: payload };
}

/** Parse, verify the signature with the provider's key, then the claims. Throws IdTokenError with the reason. */
export async function verifyIdToken(token: string, expect: IdTokenExpectations): Promise<VerifiedIdToken> {
  const jws = parseJws(token, expect.algs);
  const key = await expect.key(jws.header.kid, jws.header.alg);
  if (key === null) throw new IdTokenError('unknown_key', 'the provider publishes no key for the ID token\'s kid and alg');
  // 6 and 7. Validate the signature with the key of the alg the header names.
  if (!verifyJwsSignature(jws, key)) throw new IdTokenError('bad_signature', 'the ID token\'s signature does not verify with the provider\'s key');
  return checkIdTokenClaims(jws.payload, expect);
}
