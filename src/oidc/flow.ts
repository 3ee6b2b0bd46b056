// The authorization code flow with PKCE (OIDC Core section 3.1, RFC 7636),
// without the HTTP around it (src/admin/sso-routes.ts is that):
// - start(): new state, nonce and code verifier; the login transaction is
//   kept in memory, keyed by SHA-256 of the state, with SHA-256 of a browser
//   binding secret that the route sets as a cookie; the answer is the
//   provider's authorization URL.
// - finish(): the callback's state must name a live, unused transaction of
//   this browser (a replayed callback finds it used); then the code is
//   exchanged at the token endpoint, the ID token verified, and the user
//   checked against allowedUsers / allowedGroups (./allowed-users.ts: exact,
//   no Unicode case folding).
// Secrets (state, nonce, verifier, code, tokens) are never returned in an
// outcome, logged or put in an error message.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { OidcConfig } from '../config/oidc-config.ts';
import { refusalHint, userAllowed } from './allowed-users.ts';
import { createDiscovery, DiscoveryError, type Discovery, type ProviderMetadata } from './discovery.ts';
import { verifyIdToken, type VerifiedIdToken } from './id-token.ts';
import { createJwksCache, type JwksCache } from './jwks.ts';
import { FIPS_ID_TOKEN_ALGS, ID_TOKEN_ALGS, IdTokenError } from './jws.ts';
import { newLoginSecrets } from './pkce.ts';
import { fetchFromProvider, ProviderFetchError, type ProviderFetch } from './provider-fetch.ts';

export const LOGIN_TTL_MS = 10 * 60 * 1000;
const DEFAULT_MAX_TRANSACTIONS = 10_000;
/**
 * Pending logins one client address may hold: its next start drops its own
 * oldest. Anyone can call /sso/start, so without this one address could
 * fill the table and push out everyone else's logins in progress.
 */
export const MAX_TRANSACTIONS_PER_CLIENT = 16;
const MAX_TOKEN_ANSWER_BYTES = 256 * 1024;
const MAX_JWKS_BYTES = 256 * 1024;
/** Callback parameters longer than this are not ours (codes of real providers are well under 2 KiB). */
const MAX_PARAM_LENGTH = 4096;

export type SsoErrorCode = 'sso_state_invalid' | 'sso_id_token_invalid' | 'sso_user_not_allowed' | 'sso_provider_error';

/** The user an ID token signed in: who they are to the provider, and a name safe to show. */
export interface OidcUser {
  /** The ID token's `sub`. */
  subject: string;
  /** The ID token's `iss`. */
  issuer: string;
  /** preferred_username, else email, when printable. */
  name?: string;
}

export type SsoOutcome =
  | { ok: true; user: OidcUser }
  | {
      ok: false;
      error: SsoErrorCode;
      /** Specific and non-secret: for the audit record and the log. */
      reason: string;
      /** The user, when the ID token verified but the user is not allowed. */
      user: OidcUser | null;
      detail?: Record<string, string | number>;
      /**
       * Why, in words, when an error lies under the reason (the provider unreachable,
       * the client secret's file missing): for the log stream only, not the audit
       * record. Made from this gateway's own errors, never from what was received.
       */
      problem?: string;
    };

/** The callback's query parameters (each at most once; the route refuses repeats). */
export interface CallbackParams {
  state?: string;
  code?: string;
  error?: string;
  iss?: string;
}

export class SsoStartError extends Error {
  override name = 'SsoStartError';
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

export interface SsoFlowOptions {
  clock: () => number;
  fetch?: ProviderFetch;
  random?: (size: number) => Buffer;
  maxTransactions?: number;
}

export interface SsoFlow {
  /**
   * The provider's authorization URL and the binding cookie's value. Throws SsoStartError when the provider cannot be used.
   * `client`: who asks (the client address): each holds at most MAX_TRANSACTIONS_PER_CLIENT pending logins, and when the
   * table is full the client holding the most loses its oldest, so a flood from some addresses evicts their own logins first.
   */
  start(config: OidcConfig, client?: string): Promise<{ location: string; binding: string }>;
  /**
   * `clientSecret` is read only when the code is exchanged (null: a public client).
   * `requireFips` (security.requireFips) refuses ID tokens signed with EdDSA.
   */
  finish(config: OidcConfig, params: CallbackParams, binding: string | undefined, clientSecret: () => string | null, requireFips?: boolean): Promise<SsoOutcome>;
}

interface Transaction {
  client: string;
  bindingHash: Buffer;
  nonce: string;
  codeVerifier: string;
  issuer: string;
  clientId: string;
  redirectUrl: string;
  createdAtMs: number;
  used: boolean;
}

interface ProviderClient {
  key: string;
  discovery: Discovery;
  jwks: JwksCache | null;
  jwksUri: string | null;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

const fail = (error: SsoErrorCode, reason: string, user: OidcUser | null = null, detail?: Record<string, string | number>): SsoOutcome => ({
  ok: false,
  error,
  reason,
  user,
  ...(detail === undefined ? {} : { detail }),
});

/** A sso_provider_error whose cause is an error of ours: its message goes to the log as `problem`. */
const failBecause = (reason: string, err: unknown): SsoOutcome => ({
  ok: false,
  error: 'sso_provider_error',
  reason,
  user: null,
  problem: (err instanceof Error ? err.message : String(err)).slice(0, 500),
});

/** A provider's error code, as far as it is safe to record: RFC 6749 error codes are short ASCII words. */
function errorCode(value: unknown): string {
  return typeof value === 'string' && /^[\x20-\x7e]{1,64}$/.test(value) ? value.replace(/[^A-Za-z0-9_.-]/g, '_') : 'unknown';
}

/** Control, format (bidi overrides, zero-width), surrogate, private-use and line/paragraph separator characters. */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Zl}\p{Zp}]/u;

/**
 * The name shown beside the subject: a claim the user may choose, so one that could
 * disguise itself in the dashboard or the audit list (a right-to-left override making
 * "nimda" read "admin", zero-width characters) is not used.
 */
function displayName(claims: Readonly<Record<string, unknown>>): string | undefined {
  for (const name of ['preferred_username', 'email']) {
    const value = claims[name];
    if (typeof value === 'string' && value.length > 0 && value.length <= 256 && !UNPRINTABLE.test(value)) return value;
  }
  return undefined;
}

export function oidcUser(token: VerifiedIdToken): OidcUser {
  const name = displayName(token.claims);
  return { subject: token.sub, issuer: token.iss, ...(name === undefined ? {} : { name }) };
}

export function createSsoFlow(options: SsoFlowOptions): SsoFlow {
  const { clock } = options;
  const fetch = options.fetch ?? fetchFromProvider;
  const maxTransactions = options.maxTransactions ?? DEFAULT_MAX_TRANSACTIONS;
  // Insertion order is creation order: the first entry is the oldest.
  const transactions = new Map<string, Transaction>();
  /** The keys of each client's transactions, oldest first. */
  const byClient = new Map<string, string[]>();
  let provider: ProviderClient | null = null;

  const forget = (key: string): void => {
    const tx = transactions.get(key);
    if (tx === undefined) return;
    transactions.delete(key);
    const keys = byClient.get(tx.client);
    if (keys === undefined) return;
    const i = keys.indexOf(key);
    if (i !== -1) keys.splice(i, 1);
    if (keys.length === 0) byClient.delete(tx.client);
  };

  /** Room for one more transaction of `client`: its own oldest goes first, then the busiest client's. */
  const makeRoom = (client: string): void => {
    const own = byClient.get(client);
    while (own !== undefined && own.length >= MAX_TRANSACTIONS_PER_CLIENT) forget(own[0] as string);
    while (transactions.size >= maxTransactions) {
      let busiest: string[] | undefined;
      for (const keys of byClient.values()) if (busiest === undefined || keys.length > busiest.length) busiest = keys;
      if (busiest === undefined || busiest.length === 0) break;
      forget(busiest[0] as string);
    }
  };

  /** One discovery and key cache per issuer; a reload that changes the issuer starts afresh. */
  const providerFor = (config: OidcConfig): ProviderClient => {
    const key = `${config.issuer}\n${config.timeoutMs}`;
    if (provider === null || provider.key !== key) {
      provider = { key, discovery: createDiscovery({ issuer: config.issuer, fetch, clock, timeoutMs: config.timeoutMs }), jwks: null, jwksUri: null };
    }
    return provider;
  };

  const jwksFor = (client: ProviderClient, metadata: ProviderMetadata, timeoutMs: number): JwksCache => {
    if (client.jwks === null || client.jwksUri !== metadata.jwksUri) {
      const uri = metadata.jwksUri;
      client.jwksUri = uri;
      client.jwks = createJwksCache({
        clock,
        fetchJwks: async () => {
          const answer = await fetch(uri, { timeoutMs, maxBytes: MAX_JWKS_BYTES });
          if (answer.status !== 200) throw new ProviderFetchError(`${uri} answered HTTP ${answer.status}`);
          return answer.json;
        },
      });
    }
    return client.jwks;
  };

  const dropExpired = (nowMs: number): void => {
    for (const [key, tx] of transactions) {
      if (nowMs - tx.createdAtMs < LOGIN_TTL_MS) break;
      forget(key);
    }
  };

  const exchangeCode = async (config: OidcConfig, metadata: ProviderMetadata, code: string, tx: Transaction, secret: string | null) => {
    // RFC 6749 section 4.1.3, RFC 7636 section 4.5.
    const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: tx.redirectUrl, code_verifier: tx.codeVerifier });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (secret === null) {
      form.set('client_id', config.clientId);
    } else {
      // RFC 6749 section 2.3.1: client_secret_basic, both parts form-urlencoded first.
      const user = encodeURIComponent(config.clientId).replace(/%20/g, '+');
      const password = encodeURIComponent(secret).replace(/%20/g, '+');
      headers['authorization'] = `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
    }
    return fetch(metadata.tokenEndpoint, { method: 'POST', headers, body: form.toString(), timeoutMs: config.timeoutMs, maxBytes: MAX_TOKEN_ANSWER_BYTES });
  };

  return {
    async start(config, client = '-') {
      let metadata: ProviderMetadata;
      try {
        metadata = await providerFor(config).discovery.metadata();
      } catch (err) {
        const reason = err instanceof DiscoveryError ? err.reason : 'discovery_failed';
        throw new SsoStartError(reason, (err as Error).message);
      }
      const secrets = newLoginSecrets(options.random);
      const nowMs = clock();
      dropExpired(nowMs);
      const clientKey = client.slice(0, 256);
      makeRoom(clientKey);
      const key = sha256(secrets.state).toString('base64url');
      const keys = byClient.get(clientKey);
      if (keys === undefined) byClient.set(clientKey, [key]);
      else keys.push(key);
      transactions.set(key, {
        client: clientKey,
        bindingHash: sha256(secrets.binding),
        nonce: secrets.nonce,
        codeVerifier: secrets.codeVerifier,
        issuer: config.issuer,
        clientId: config.clientId,
        redirectUrl: config.redirectUrl,
        createdAtMs: nowMs,
        used: false,
      });
      // OIDC Core section 3.1.2.1; RFC 7636 section 4.3.
      const url = new URL(metadata.authorizationEndpoint);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('client_id', config.clientId);
      url.searchParams.set('redirect_uri', config.redirectUrl);
      url.searchParams.set('scope', config.scopes.join(' '));
      url.searchParams.set('state', secrets.state);
      url.searchParams.set('nonce', secrets.nonce);
      url.searchParams.set('code_challenge', secrets.codeChallenge);
      url.searchParams.set('code_challenge_method', 'S256');
      return { location: url.toString(), binding: secrets.binding };
    },

    async finish(config, params, binding, clientSecret, requireFips = false) {
      const { state } = params;
      if (typeof state !== 'string' || state.length === 0 || state.length > MAX_PARAM_LENGTH) return fail('sso_state_invalid', 'state_missing');
      const nowMs = clock();
      const tx = transactions.get(sha256(state).toString('base64url'));
      if (tx === undefined) return fail('sso_state_invalid', 'state_unknown');
      if (tx.used) return fail('sso_state_invalid', 'state_reused');
      // Used from here on, whatever happens next: a callback URL works once.
      tx.used = true;
      if (nowMs - tx.createdAtMs >= LOGIN_TTL_MS) return fail('sso_state_invalid', 'state_expired');
      if (binding === undefined || binding.length > MAX_PARAM_LENGTH) return fail('sso_state_invalid', 'binding_missing');
      if (!timingSafeEqual(sha256(binding), tx.bindingHash)) return fail('sso_state_invalid', 'binding_mismatch');
      if (tx.issuer !== config.issuer || tx.clientId !== config.clientId || tx.redirectUrl !== config.redirectUrl) return fail('sso_state_invalid', 'config_changed');

      const client = providerFor(config);
      let metadata: ProviderMetadata;
      try {
        metadata = await client.discovery.metadata();
      } catch (err) {
        return failBecause(err instanceof DiscoveryError ? err.reason : 'discovery_failed', err);
      }
      // RFC 9207 section 2.4: iss, when sent (or promised), must be this issuer: an answer meant for another provider is refused.
      if (params.iss !== undefined ? params.iss !== config.issuer : metadata.issInAuthorizationResponse) return fail('sso_provider_error', 'wrong_issuer');
      if (params.error !== undefined) return fail('sso_provider_error', 'provider_refused', null, { error: errorCode(params.error) });
      const { code } = params;
      if (typeof code !== 'string' || code.length === 0 || code.length > MAX_PARAM_LENGTH) return fail('sso_provider_error', 'code_missing');

      let secret: string | null;
      try {
        secret = clientSecret();
      } catch (err) {
        return failBecause('client_secret_unavailable', err);
      }
      let answer;
      try {
        answer = await exchangeCode(config, metadata, code, tx, secret);
      } catch (err) {
        return failBecause('token_endpoint_unreachable', err);
      }
      const body = answer.json as Record<string, unknown> | undefined;
      if (answer.status !== 200) return fail('sso_provider_error', 'token_exchange_failed', null, { status: answer.status, error: errorCode(body?.['error']) });
      const idToken = typeof body === 'object' && body !== null ? body['id_token'] : undefined;
      if (typeof idToken !== 'string') return fail('sso_provider_error', 'no_id_token');

      let token: VerifiedIdToken;
      try {
        const jwks = jwksFor(client, metadata, config.timeoutMs);
        token = await verifyIdToken(idToken, {
          issuer: config.issuer,
          clientId: config.clientId,
          audiences: config.audiences,
          nonce: tx.nonce,
          nowMs: clock(),
          algs: requireFips ? FIPS_ID_TOKEN_ALGS : ID_TOKEN_ALGS,
          key: (kid, alg) => jwks.key(kid, alg),
        });
      } catch (err) {
        if (err instanceof IdTokenError) return fail('sso_id_token_invalid', err.reason);
        return failBecause('jwks_unavailable', err);
      }
      const user = oidcUser(token);
      if (!userAllowed(config, token)) {
        const hint = refusalHint(config, token);
        return { ...fail('sso_user_not_allowed', 'user_not_allowed', user), ...(hint === undefined ? {} : { problem: hint }) };
      }
      return { ok: true, user };
    },
  };
}
