// The key cache (src/oidc/jwks.ts) and discovery (src/oidc/discovery.ts) with
// a counting fetch in place of the provider: keys picked by kid and type, an
// unknown kid refetching at most once per 60 s, the discovery document's
// issuer checked exactly, http refused for a non-loopback issuer, failures
// retried only after a backoff.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, test } from 'node:test';
import { checkMetadata, createDiscovery, DiscoveryError, discoveryUrl } from '../../src/oidc/discovery.ts';
import { createJwksCache, MAX_JWKS_KEYS, parseJwks } from '../../src/oidc/jwks.ts';
import type { ProviderFetch } from '../../src/oidc/provider-fetch.ts';

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ed = generateKeyPairSync('ed25519');
const jwk = (pair: { publicKey: { export(o: { format: 'jwk' }): object } }, extra: Record<string, unknown>) => ({ ...pair.publicKey.export({ format: 'jwk' }), ...extra });

describe('JWKS', () => {
  test('keys are found by kid and must fit the alg; encryption keys and unreadable entries are skipped', () => {
    const keys = parseJwks({
      keys: [jwk(rsa, { kid: 'r', use: 'sig' }), jwk(ec, { kid: 'e', use: 'enc' }), { kty: 'EC', kid: 'bad', crv: 'P-999', x: 'AA', y: 'AA' }, jwk(ed, { kid: 'd' }), 'junk'],
    });
    assert.deepEqual(keys.map((k) => k.kid), ['r', 'd']);
    assert.throws(() => parseJwks({ keys: new Array(MAX_JWKS_KEYS + 1).fill({}) }), /more than 100 keys/);
    assert.throws(() => parseJwks([]), /"keys" array/);
  });

  test('a private JWK yields only a public key', () => {
    const priv = { ...rsa.privateKey.export({ format: 'jwk' }), kid: 'p' };
    const [key] = parseJwks({ keys: [priv] });
    assert.equal(key?.key.type, 'public');
  });

  test('an unknown kid refetches at most once per 60 s; a token without kid needs exactly one fitting key', async () => {
    let nowMs = 1_000_000;
    let fetches = 0;
    let set: unknown = { keys: [jwk(rsa, { kid: 'old' })] };
    const cache = createJwksCache({ clock: () => nowMs, fetchJwks: async () => (fetches++, set) });
    assert.equal((await cache.key('old', 'RS256'))?.asymmetricKeyType, 'rsa');
    assert.equal(await cache.key('old', 'ES256'), null, 'an RSA key never serves ES256');
    assert.equal(fetches, 1, 'the ES256 miss came within 60 s of the fetch: no refetch');
    set = { keys: [jwk(rsa, { kid: 'old' }), jwk(ec, { kid: 'new' })] };
    assert.equal(await cache.key('new', 'ES256'), null, 'within 60 s of the last fetch');
    assert.equal(fetches, 1);
    nowMs += 60_000;
    assert.equal((await cache.key('new', 'ES256'))?.asymmetricKeyType, 'ec');
    assert.equal(fetches, 2);
    assert.equal(await cache.key('gone', 'ES256'), null);
    assert.equal(fetches, 2, 'the refetch just happened');
    assert.equal((await cache.key(undefined, 'ES256'))?.asymmetricKeyType, 'ec', 'one EC key: a kid-less token may use it');
    assert.equal((await cache.key(undefined, 'RS256'))?.asymmetricKeyType, 'rsa');
  });

  test('a JWK whose alg names another algorithm does not serve this one', async () => {
    const cache = createJwksCache({ clock: () => 0, fetchJwks: async () => ({ keys: [jwk(rsa, { kid: 'k', alg: 'PS256' })] }) });
    assert.equal(await cache.key('k', 'RS256'), null);
    assert.notEqual(await cache.key('k', 'PS256'), null);
  });

  test('a failed first fetch is not repeated within 5 s', async () => {
    let nowMs = 0;
    let fetches = 0;
    const cache = createJwksCache({ clock: () => nowMs, fetchJwks: async () => { fetches++; throw new Error('down'); } });
    await assert.rejects(cache.key('k', 'RS256'), /down/);
    await assert.rejects(cache.key('k', 'RS256'), /not asking again yet/);
    assert.equal(fetches, 1);
    nowMs = 5_000;
    await assert.rejects(cache.key('k', 'RS256'), /down/);
    assert.equal(fetches, 2);
  });
});

const ISSUER = 'https://login.example.com/realms/main';
const DOC = {
  issuer: ISSUER,
  authorization_endpoint: `${ISSUER}/auth`,
  token_endpoint: `${ISSUER}/token`,
  jwks_uri: `${ISSUER}/certs`,
  code_challenge_methods_supported: ['plain', 'S256'],
  id_token_signing_alg_values_supported: ['RS256'],
};

describe('discovery', () => {
  test('the document URL is the issuer plus /.well-known/openid-configuration', () => {
    assert.equal(discoveryUrl(ISSUER), `${ISSUER}/.well-known/openid-configuration`);
    assert.equal(discoveryUrl('https://accounts.google.com/'), 'https://accounts.google.com/.well-known/openid-configuration');
  });

  test('a good document yields the endpoints', () => {
    assert.deepEqual(checkMetadata(DOC, ISSUER), {
      issuer: ISSUER,
      authorizationEndpoint: `${ISSUER}/auth`,
      tokenEndpoint: `${ISSUER}/token`,
      jwksUri: `${ISSUER}/certs`,
      issInAuthorizationResponse: false,
    });
  });

  const bad: Array<[string, Record<string, unknown>, string, RegExp]> = [
    ['another issuer', { issuer: 'https://login.example.com/realms/other' }, 'wrong_issuer', /names issuer .* not https:\/\/login/],
    ['the issuer with a trailing slash', { issuer: `${ISSUER}/` }, 'wrong_issuer', /exactly/],
    ['no token endpoint', { token_endpoint: undefined }, 'discovery_failed', /no token_endpoint/],
    ['an http endpoint', { jwks_uri: 'http://login.example.com/certs' }, 'discovery_failed', /jwks_uri is not an https URL/],
    ['no S256', { code_challenge_methods_supported: ['plain'] }, 'discovery_failed', /S256/],
    ['only HS256 ID tokens', { id_token_signing_alg_values_supported: ['HS256', 'none'] }, 'discovery_failed', /signs ID tokens with none of/],
  ];
  for (const [name, over, reason, message] of bad) {
    test(`${name}: refused (${reason})`, () => {
      assert.throws(() => checkMetadata({ ...DOC, ...over }, ISSUER), (err: unknown) => err instanceof DiscoveryError && err.reason === reason && message.test(err.message));
    });
  }

  test('a loopback issuer may use http on loopback endpoints only', () => {
    const local = 'http://127.0.0.1:9000';
    const doc = { ...DOC, issuer: local, authorization_endpoint: `${local}/auth`, token_endpoint: `${local}/token`, jwks_uri: `${local}/jwks` };
    assert.equal(checkMetadata(doc, local).tokenEndpoint, `${local}/token`);
    assert.throws(() => checkMetadata({ ...doc, token_endpoint: 'http://10.0.0.1/token' }, local), /token_endpoint is not an https URL/);
  });

  test('cached for an hour; a failure is retried only after a doubling backoff, the last good document serving meanwhile', async () => {
    let nowMs = 0;
    const calls: string[] = [];
    let answer: { status: number; json: unknown } = { status: 200, json: DOC };
    const fetch: ProviderFetch = async (url) => (calls.push(url), answer);
    const discovery = createDiscovery({ issuer: ISSUER, fetch, clock: () => nowMs, timeoutMs: 1000 });
    assert.equal((await discovery.metadata()).tokenEndpoint, `${ISSUER}/token`);
    await discovery.metadata();
    assert.equal(calls.length, 1);
    nowMs = 3_600_000;
    answer = { status: 500, json: undefined };
    assert.equal((await discovery.metadata()).tokenEndpoint, `${ISSUER}/token`, 'stale but good');
    assert.equal(calls.length, 2);
    await discovery.metadata();
    assert.equal(calls.length, 2, 'within the 1 s backoff');
    nowMs += 1_000;
    await discovery.metadata();
    assert.equal(calls.length, 3);
    nowMs += 1_999;
    await discovery.metadata();
    assert.equal(calls.length, 3, 'the backoff doubled to 2 s');
  });

  test('with nothing cached, a failure rejects and the backoff holds later calls', async () => {
    let nowMs = 0;
    let calls = 0;
    const discovery = createDiscovery({ issuer: ISSUER, fetch: async () => (calls++, { status: 200, json: { ...DOC, issuer: 'x' } }), clock: () => nowMs, timeoutMs: 1000 });
    await assert.rejects(discovery.metadata(), (err: unknown) => err instanceof DiscoveryError && err.reason === 'wrong_issuer');
    await assert.rejects(discovery.metadata(), (err: unknown) => err instanceof DiscoveryError && err.reason === 'wrong_issuer');
    assert.equal(calls, 1);
    nowMs = 1_000;
    await assert.rejects(discovery.metadata());
    assert.equal(calls, 2);
  });
});
