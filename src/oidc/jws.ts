// JWS compact serialization (RFC 7515 section 7.1) for ID tokens: split,
// decode and signature check. Only what an ID token needs: three parts, a
// JSON header and payload, an asymmetric signature. Everything is bounded
// before it is decoded.
//
// The algorithms are the asymmetric ones of RFC 7518 section 3.1 plus EdDSA
// (RFC 8037). `none` and the HS* family are never accepted: an HMAC would
// make the client secret the verification key, and a token whose header says
// HS256 must not be checked against an RSA public key read as an HMAC secret.
// Under security.requireFips EdDSA is left out (FIPS_ID_TOKEN_ALGS): FIPS 186-5
// approves it, but the validated OpenSSL FIPS providers (3.0.8 under FIPS 140-2,
// 3.1.2 under FIPS 140-3) do not list it as approved (docs/crypto.md).
import { verify as cryptoVerify, constants, type KeyObject } from 'node:crypto';

export const ID_TOKEN_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
export type IdTokenAlg = (typeof ID_TOKEN_ALGS)[number];
/** What security.requireFips accepts: RSA PKCS#1 v1.5, RSA-PSS and ECDSA on the NIST curves. */
export const FIPS_ID_TOKEN_ALGS: readonly IdTokenAlg[] = ID_TOKEN_ALGS.filter((alg) => alg !== 'EdDSA');

/** ID tokens of real providers are 1 to 4 KiB; a large groups claim can make them bigger. */
export const MAX_JWS_LENGTH = 32 * 1024;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Why a token was refused: each one a stable reason for the audit record. */
export type IdTokenFailure =
  | 'malformed'
  | 'unsupported_alg'
  | 'unknown_key'
  | 'bad_signature'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'expired'
  | 'not_yet_valid'
  | 'nonce_mismatch';

export class IdTokenError extends Error {
  override name = 'IdTokenError';
  readonly reason: IdTokenFailure;
  constructor(reason: IdTokenFailure, message: string) {
    super(message);
    this.reason = reason;
  }
}

export interface ParsedJws {
  header: { alg: IdTokenAlg; kid: string | undefined } & Record<string, unknown>;
  payload: Record<string, unknown>;
  /** ASCII(BASE64URL(header) || '.' || BASE64URL(payload)): what was signed. */
  signingInput: Buffer;
  signature: Buffer;
}

function decodeJsonPart(part: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw new IdTokenError('malformed', `the ID token's ${what} is not base64url JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new IdTokenError('malformed', `the ID token's ${what} is not a JSON object`);
  return value as Record<string, unknown>;
}

export function isIdTokenAlg(value: unknown): value is IdTokenAlg {
  return typeof value === 'string' && (ID_TOKEN_ALGS as readonly string[]).includes(value);
}

/** RFC 7515 section 5.2, steps 1 to 8 (signature checked separately); a header alg outside `accepted` is refused. */
export function parseJws(token: string, accepted: readonly IdTokenAlg[] = ID_TOKEN_ALGS): ParsedJws {
  if (typeof token !== 'string' || token.length === 0 || token.length > MAX_JWS_LENGTH) {
    throw new IdTokenError('malformed', `the ID token must be a JWS of 1 to ${MAX_JWS_LENGTH} characters`);
  }
  const first = token.indexOf('.');
  const second = first === -1 ? -1 : token.indexOf('.', first + 1);
  if (first <= 0 || second === -1 || token.indexOf('.', second + 1) !== -1) {
    throw new IdTokenError('malformed', 'the ID token is not a JWS in compact form (three dot-separated parts)');
  }
  const [h, p, s] = [token.slice(0, first), token.slice(first + 1, second), token.slice(second + 1)];
  if (p.length === 0 || s.length === 0 || !BASE64URL.test(h) || !BASE64URL.test(p) || !BASE64URL.test(s)) {
    throw new IdTokenError('malformed', 'the ID token has an empty part or characters outside base64url');
  }
  const header = decodeJsonPart(h, 'header');
  const payload = decodeJsonPart(p, 'payload');
  // RFC 7515 section 4.1.11: a critical extension we do not understand makes the token invalid.
  if (header['crit'] !== undefined) throw new IdTokenError('malformed', 'the ID token names critical header extensions, which are not supported');
  if (!isIdTokenAlg(header['alg']) || !accepted.includes(header['alg'])) {
    const alg = typeof header['alg'] === 'string' ? header['alg'].slice(0, 16) : String(header['alg']);
    throw new IdTokenError('unsupported_alg', `the ID token is signed with ${JSON.stringify(alg)}; accepted: ${accepted.join(', ')}`);
  }
  const kid = header['kid'];
  if (kid !== undefined && (typeof kid !== 'string' || kid.length > 256)) throw new IdTokenError('malformed', 'the ID token\'s kid is not a string of at most 256 characters');
  return {
    header: { ...header, alg: header['alg'], kid },
    payload,
    signingInput: Buffer.from(`${h}.${p}`, 'ascii'),
    signature: Buffer.from(s, 'base64url'),
  };
}

const HASHES = { '256': 'sha256', '384': 'sha384', '512': 'sha512' } as const;
/** ECDSA: the curve each algorithm requires (RFC 7518 section 3.4) and the raw r||s length. */
const EC_CURVES: Record<string, { curve: string; signatureBytes: number }> = {
  ES256: { curve: 'prime256v1', signatureBytes: 64 },
  ES384: { curve: 'secp384r1', signatureBytes: 96 },
  ES512: { curve: 'secp521r1', signatureBytes: 132 },
};
/** RFC 7518 section 3.3 and 3.5: a key of at least 2048 bits. */
const MIN_RSA_BITS = 2048;

/** Whether `key` is of the type `alg` needs (an RSA key for RS/PS, the curve for ES, an Edwards key for EdDSA). */
export function keyFitsAlg(key: KeyObject, alg: IdTokenAlg): boolean {
  if (key.type !== 'public') return false;
  const type = key.asymmetricKeyType;
  const details = key.asymmetricKeyDetails;
  switch (alg.slice(0, 2)) {
    case 'RS':
    case 'PS':
      return type === 'rsa' && (details?.modulusLength ?? 0) >= MIN_RSA_BITS;
    case 'ES':
      return type === 'ec' && details?.namedCurve === EC_CURVES[alg]?.curve;
    default:
      return type === 'ed25519' || type === 'ed448';
  }
}

/** RFC 7518 section 3: the signature of `jws` under `key` for its header's alg. */
export function verifyJwsSignature(jws: ParsedJws, key: KeyObject): boolean {
  const alg = jws.header.alg;
  if (!keyFitsAlg(key, alg)) return false;
  const hash = HASHES[alg.slice(2) as keyof typeof HASHES];
  try {
    switch (alg.slice(0, 2)) {
      case 'RS':
        return cryptoVerify(hash, jws.signingInput, key, jws.signature);
      case 'PS':
        // RFC 7518 section 3.5: MGF1 with the same hash, salt as long as the hash.
        return cryptoVerify(hash, jws.signingInput, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }, jws.signature);
      case 'ES':
        // RFC 7518 section 3.4: the signature is R || S, each fixed length, not DER.
        if (jws.signature.length !== EC_CURVES[alg]?.signatureBytes) return false;
        return cryptoVerify(hash, jws.signingInput, { key, dsaEncoding: 'ieee-p1363' }, jws.signature);
      default:
        return cryptoVerify(null, jws.signingInput, key, jws.signature);
    }
  } catch {
    return false;
  }
}
