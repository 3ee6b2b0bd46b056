// A real OpenID provider for the SSO tests: oidc-provider (the certified
// Node.js implementation) on 127.0.0.1 port 0, with its development
// interactions (a login form that takes any login name; consent is granted
// at once, as a company provider configured for the gateway would), one
// confidential client (client_secret_basic) and one public client (PKCE
// only), and accounts whose claims the test chooses. Its signing keys are
// made here: RS256, ES256 and EdDSA, one per family.
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type ProviderContext } from 'oidc-provider';

export interface ProviderClient {
  clientId: string;
  /** null: a public client (token_endpoint_auth_method none). */
  secret: string | null;
  redirectUri: string;
  /** The alg the provider signs this client's ID tokens with. */
  idTokenAlg: 'RS256' | 'ES256' | 'EdDSA';
}

export interface TestProvider {
  issuer: string;
  /** Every request the provider saw (method and path), for asserting what the gateway asked. */
  requests: string[];
  close(): Promise<void>;
}

function privateJwk(kid: string, alg: string, pair: { privateKey: { export(o: { format: 'jwk' }): object } }): Record<string, unknown> {
  return { ...pair.privateKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
}

/**
 * `accounts`: login name -> claims (besides sub, which is the login name).
 * Unknown login names sign in with no claims but sub.
 */
export async function startProvider(clients: readonly ProviderClient[], accounts: Record<string, Record<string, unknown>>): Promise<TestProvider> {
  // The package warns on stderr of its in-memory adapter and development interactions: both are what a test wants.
  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const requests: string[] = [];
  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({
      client_id: c.clientId,
      ...(c.secret === null ? { token_endpoint_auth_method: 'none' } : { client_secret: c.secret, token_endpoint_auth_method: 'client_secret_basic' }),
      redirect_uris: [c.redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      id_token_signed_response_alg: c.idTokenAlg,
    })),
    jwks: {
      keys: [
        privateJwk('rsa-1', 'RS256', generateKeyPairSync('rsa', { modulusLength: 2048 })),
        privateJwk('ec-1', 'ES256', generateKeyPairSync('ec', { namedCurve: 'P-256' })),
        privateJwk('ed-1', 'EdDSA', generateKeyPairSync('ed25519')),
      ],
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['preferred_username', 'name'], groups: ['groups'] },
    // The claims of the granted scopes go in the ID token (the gateway does not call userinfo).
    conformIdTokenClaims: false,
    findAccount: async (_ctx: unknown, id: string) => ({ accountId: id, claims: async () => ({ sub: id, ...accounts[id] }) }),
    features: { devInteractions: { enabled: true } },
    enabledJWA: { idTokenSigningAlgValues: ['RS256', 'ES256', 'EdDSA'] },
    pkce: { required: () => true },
    // Consent is given at once, for every scope asked.
    loadExistingGrant: async (ctx: ProviderContext) => {
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId !== undefined) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope('openid profile email groups');
      await grant.save();
      return grant;
    },
  });
  const handle = provider.callback();
  server.on('request', (req, res) => {
    requests.push(`${req.method} ${(req.url ?? '').split('?')[0]}`);
    handle(req, res);
  });
  return {
    issuer,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
