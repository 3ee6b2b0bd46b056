// The provider's signing keys (its jwks_uri, RFC 7517), as node:crypto
// KeyObjects, looked up by the ID token's kid. Keys rotate: a kid the cache
// does not know fetches the set again, at most once per `minRefetchMs`
// (60 s), so a stream of tokens naming made-up kids cannot make the gateway
// hammer the provider.
import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { keyFitsAlg, type IdTokenAlg } from './jws.ts';

/** Real sets hold a handful of keys; more than this is not a key set we accept. */
export const MAX_JWKS_KEYS = 100;
const DEFAULT_MIN_REFETCH_MS = 60_000;
/** After a failed fetch with nothing cached, the next try waits this long (a login meanwhile fails at once). */
const RETRY_AFTER_FAILURE_MS = 5_000;

interface CachedKey {
  kid: string | undefined;
  /** The JWK's own alg, when it names one (RFC 7517 section 4.4): the key is then only for that alg. */
  alg: string | undefined;
  key: KeyObject;
}

export interface JwksCache {
  /** The key for a token's kid and alg, or null when the provider has none (after at most one refetch). */
  key(kid: string | undefined, alg: IdTokenAlg): Promise<KeyObject | null>;
}

export interface JwksCacheOptions {
  /** GET the jwks_uri and parse its JSON (bounded in size and time by the caller). */
  fetchJwks: () => Promise<unknown>;
  clock: () => number;
  minRefetchMs?: number;
}

/** The signing keys a JWKS document holds; unusable entries (private-only, encryption keys, unknown types) are skipped. */
export function parseJwks(document: unknown): CachedKey[] {
  const keys = (document as { keys?: unknown } | null)?.keys;
  if (typeof document !== 'object' || document === null || !Array.isArray(keys)) throw new Error('the JWKS is not a JSON object with a "keys" array');
  if (keys.length > MAX_JWKS_KEYS) throw new Error(`the JWKS holds more than ${MAX_JWKS_KEYS} keys`);
  const parsed: CachedKey[] = [];
  for (const jwk of keys as unknown[]) {
    if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) continue;
    const { use, kid, alg, kty } = jwk as Record<string, unknown>;
    if (use !== undefined && use !== 'sig') continue;
    if (kty !== 'RSA' && kty !== 'EC' && kty !== 'OKP') continue;
    // Only the public members: a private JWK must not turn into a private KeyObject here.
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, oth: _oth, ...publicPart } = jwk as Record<string, unknown>;
    try {
      const key = createPublicKey({ key: publicPart as JsonWebKey, format: 'jwk' });
      parsed.push({ kid: typeof kid === 'string' ? kid : undefined, alg: typeof alg === 'string' ? alg : undefined, key });
    } catch {
      // not a key node:crypto can read (an unknown curve, bad numbers): skipped
    }
  }
  return parsed;
}

function pick(keys: readonly CachedKey[], kid: string | undefined, alg: IdTokenAlg): KeyObject | null {
  const fitting = keys.filter((k) => (k.alg === undefined || k.alg === alg) && keyFitsAlg(k.key, alg));
  // OIDC Core 10.1: without a kid, the set must hold one key that can verify the token.
  if (kid === undefined) return fitting.length === 1 ? (fitting[0] as CachedKey).key : null;
  return fitting.find((k) => k.kid === kid)?.key ?? null;
}

export function createJwksCache(options: JwksCacheOptions): JwksCache {
  const minRefetchMs = options.minRefetchMs ?? DEFAULT_MIN_REFETCH_MS;
  let keys: CachedKey[] | null = null;
  let fetchedAtMs = -Infinity;
  let inflight: Promise<void> | null = null;

  const refresh = (): Promise<void> => {
    inflight ??= (async () => {
      try {
        fetchedAtMs = options.clock();
        keys = parseJwks(await options.fetchJwks());
      } finally {
        inflight = null;
      }
    })();
    return inflight;
  };

  return {
    async key(kid, alg) {
      if (keys === null) {
        if (inflight === null && options.clock() - fetchedAtMs < RETRY_AFTER_FAILURE_MS) throw new Error('the JWKS could not be fetched a moment ago; not asking again yet');
        await refresh();
      }
      const found = pick(keys ?? [], kid, alg);
      if (found !== null) return found;
      if (options.clock() - fetchedAtMs < minRefetchMs) return null;
      await refresh();
      return pick(keys ?? [], kid, alg);
    },
  };
}
