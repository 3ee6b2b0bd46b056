// OpenID Provider metadata, OpenID Connect Discovery 1.0
// (https://openid.net/specs/openid-connect-discovery-1_0.html): fetched from
// <issuer>/.well-known/openid-configuration, checked, and kept for an hour.
// A failed fetch is retried no sooner than a backoff that doubles up to five
// minutes; meanwhile the last good document (if any) goes on serving.
import { isLoopbackUrl } from '../config/oidc-config.ts';
import { ID_TOKEN_ALGS } from './jws.ts';
import { ProviderFetchError, type ProviderFetch } from './provider-fetch.ts';

export interface ProviderMetadata {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  jwksUri: string;
  /** RFC 9207: the provider puts `iss` in its authorization answers, so the callback must carry it. */
  issInAuthorizationResponse: boolean;
}

export interface Discovery {
  metadata(): Promise<ProviderMetadata>;
}

export interface DiscoveryOptions {
  issuer: string;
  fetch: ProviderFetch;
  clock: () => number;
  timeoutMs: number;
}

export const MAX_DISCOVERY_BYTES = 64 * 1024;
const FRESH_MS = 60 * 60 * 1000;
const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 5 * 60 * 1000;

export class DiscoveryError extends Error {
  override name = 'DiscoveryError';
  /** wrong_issuer: the document is another issuer's (Discovery 4.3); anything else is discovery_failed. */
  readonly reason: 'wrong_issuer' | 'discovery_failed';
  constructor(message: string, reason: 'wrong_issuer' | 'discovery_failed' = 'discovery_failed') {
    super(message);
    this.reason = reason;
  }
}

/** An endpoint the metadata names: an absolute https URL (http only when the issuer and the endpoint are loopback). */
function endpoint(document: Record<string, unknown>, name: string, loopbackIssuer: boolean): string {
  const value = document[name];
  if (typeof value !== 'string' || value.length > 2048) throw new DiscoveryError(`the discovery document has no ${name}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new DiscoveryError(`the discovery document's ${name} is not a URL`);
  }
  const plainAllowed = loopbackIssuer && isLoopbackUrl(url);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && plainAllowed)) throw new DiscoveryError(`the discovery document's ${name} is not an https URL`);
  if (url.username !== '' || url.password !== '' || url.hash !== '') throw new DiscoveryError(`the discovery document's ${name} holds credentials or a fragment`);
  return value;
}

/** The checks of Discovery section 4.3 and what this client needs (code flow, PKCE S256, an algorithm it verifies). */
export function checkMetadata(document: unknown, issuer: string): ProviderMetadata {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw new DiscoveryError('the discovery document is not a JSON object');
  const d = document as Record<string, unknown>;
  // 4.3: "The issuer value returned MUST be identical to the Issuer URL that was used as the prefix to /.well-known/openid-configuration".
  if (d['issuer'] !== issuer) {
    throw new DiscoveryError(`the discovery document names issuer ${JSON.stringify(String(d['issuer']).slice(0, 200))}, not ${issuer} as configured (admin.oidc.issuer must be the provider's issuer exactly)`, 'wrong_issuer');
  }
  const loopback = isLoopbackUrl(new URL(issuer));
  const metadata: ProviderMetadata = {
    issuer,
    authorizationEndpoint: endpoint(d, 'authorization_endpoint', loopback),
    tokenEndpoint: endpoint(d, 'token_endpoint', loopback),
    jwksUri: endpoint(d, 'jwks_uri', loopback),
    issInAuthorizationResponse: d['authorization_response_iss_parameter_supported'] === true,
  };
  const methods = d['code_challenge_methods_supported'];
  if (Array.isArray(methods) && !methods.includes('S256')) throw new DiscoveryError('the provider does not support PKCE with S256 (code_challenge_methods_supported)');
  const algs = d['id_token_signing_alg_values_supported'];
  if (Array.isArray(algs) && !algs.some((a) => (ID_TOKEN_ALGS as readonly unknown[]).includes(a))) {
    throw new DiscoveryError(`the provider signs ID tokens with none of ${ID_TOKEN_ALGS.join(', ')}`);
  }
  return metadata;
}

export function discoveryUrl(issuer: string): string {
  // Section 4: the issuer's path with /.well-known/openid-configuration appended (a trailing / removed first).
  return `${issuer.endsWith('/') ? issuer.slice(0, -1) : issuer}/.well-known/openid-configuration`;
}

export function createDiscovery(options: DiscoveryOptions): Discovery {
  let cached: { metadata: ProviderMetadata; fetchedAtMs: number } | null = null;
  let failures = 0;
  let nextTryMs = 0;
  let lastError: Error | null = null;
  let inflight: Promise<ProviderMetadata> | null = null;

  const fetchNow = async (): Promise<ProviderMetadata> => {
    const answer = await options.fetch(discoveryUrl(options.issuer), { timeoutMs: options.timeoutMs, maxBytes: MAX_DISCOVERY_BYTES });
    if (answer.status !== 200) throw new DiscoveryError(`${discoveryUrl(options.issuer)} answered HTTP ${answer.status}`);
    return checkMetadata(answer.json, options.issuer);
  };

  return {
    async metadata() {
      const nowMs = options.clock();
      if (cached !== null && nowMs - cached.fetchedAtMs < FRESH_MS) return cached.metadata;
      if (inflight !== null) return inflight;
      if (nowMs < nextTryMs) {
        if (cached !== null) return cached.metadata;
        throw lastError ?? new DiscoveryError('the provider\'s discovery document is not available yet');
      }
      inflight = fetchNow()
        .then((metadata) => {
          cached = { metadata, fetchedAtMs: options.clock() };
          failures = 0;
          lastError = null;
          return metadata;
        })
        .catch((err: unknown) => {
          failures++;
          nextTryMs = options.clock() + Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.min(failures - 1, 16));
          lastError = err instanceof DiscoveryError || err instanceof ProviderFetchError ? err : new DiscoveryError(String((err as Error).message));
          if (cached !== null) return cached.metadata;
          throw lastError;
        })
        .finally(() => {
          inflight = null;
        });
      return inflight;
    },
  };
}
