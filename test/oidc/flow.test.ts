// The code flow's rules (src/oidc/flow.ts) with a scripted provider behind
// the ProviderFetch port, for what a real provider will not do on demand: an
// iss that is not the issuer, a token endpoint that refuses, an ID token with
// another nonce. (The real provider runs in test/browser/sso.system.test.ts.)
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, test } from 'node:test';
import type { OidcConfig } from '../../src/config/oidc-config.ts';
import { userAllowed } from '../../src/oidc/allowed-users.ts';
import { createSsoFlow, LOGIN_TTL_MS, MAX_TRANSACTIONS_PER_CLIENT, oidcUser, SsoStartError, type SsoFlow } from '../../src/oidc/flow.ts';
import { codeChallengeS256 } from '../../src/oidc/pkce.ts';
import type { ProviderAnswer, ProviderFetch, ProviderRequest } from '../../src/oidc/provider-fetch.ts';

const ISSUER = 'https://login.example.com';
const CONFIG: OidcConfig = {
  issuer: ISSUER,
  clientId: 'portcullis',
  clientSecretFile: '/run/secret',
  clientSecretEnv: null,
  redirectUrl: 'https://gw.example.com/sso/callback',
  scopes: ['openid', 'email'],
  audiences: ['portcullis'],
  allowedUsers: ['user-1'],
  allowedGroups: [],
  groupsClaim: 'groups',
  label: 'x',
  passwordLogin: true,
  timeoutMs: 1000,
};
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ed = generateKeyPairSync('ed25519');

interface Script {
  discovery: Record<string, unknown>;
  token: (form: URLSearchParams, request: ProviderRequest) => ProviderAnswer;
}

function idToken(payload: Record<string, unknown>, alg: 'ES256' | 'EdDSA' = 'ES256'): string {
  const input = `${Buffer.from(JSON.stringify({ alg, kid: alg === 'ES256' ? 'e' : 'd' })).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  const signature = alg === 'ES256' ? sign('sha256', Buffer.from(input), { key: ec.privateKey, dsaEncoding: 'ieee-p1363' }) : sign(null, Buffer.from(input), ed.privateKey);
  return `${input}.${signature.toString('base64url')}`;
}

function setup(over: Partial<Script> = {}, maxTransactions?: number) {
  let nowMs = Date.UTC(2026, 10, 26);
  const calls: Array<{ url: string; request: ProviderRequest }> = [];
  let nonce = '';
  const script: Script = {
    discovery: { issuer: ISSUER, authorization_endpoint: `${ISSUER}/authorize`, token_endpoint: `${ISSUER}/token`, jwks_uri: `${ISSUER}/jwks` },
    token: () => ({ status: 200, json: { id_token: idToken({ iss: ISSUER, sub: 'user-1', aud: 'portcullis', exp: nowMs / 1000 + 60, iat: nowMs / 1000, nonce }), token_type: 'Bearer' } }),
    ...over,
  };
  const fetch: ProviderFetch = async (url, request) => {
    calls.push({ url, request });
    if (url.endsWith('/.well-known/openid-configuration')) return { status: 200, json: script.discovery };
    if (url.endsWith('/jwks')) return { status: 200, json: { keys: [{ ...ec.publicKey.export({ format: 'jwk' }), kid: 'e' }, { ...ed.publicKey.export({ format: 'jwk' }), kid: 'd' }] } };
    return script.token(new URLSearchParams(request.body), request);
  };
  const flow: SsoFlow = createSsoFlow({ clock: () => nowMs, fetch, ...(maxTransactions === undefined ? {} : { maxTransactions }) });
  const start = async (config = CONFIG, client?: string) => {
    const begun = await flow.start(config, client);
    const url = new URL(begun.location);
    nonce = url.searchParams.get('nonce') ?? '';
    return { ...begun, url, state: url.searchParams.get('state') ?? '' };
  };
  return { flow, calls, start, advance: (ms: number) => (nowMs += ms), setNonce: (n: string) => (nonce = n), nonce: () => nonce, nowMs: () => nowMs };
}

const SECRET = () => 'the secret';

describe('sso flow', () => {
  test('start: the authorization request of OIDC Core 3.1.2.1 with PKCE S256; each login its own secrets', async () => {
    const { start } = setup();
    const a = await start();
    const b = await start();
    const params = Object.fromEntries(a.url.searchParams);
    assert.equal(`${a.url.origin}${a.url.pathname}`, `${ISSUER}/authorize`);
    assert.deepEqual(Object.keys(params).sort(), ['client_id', 'code_challenge', 'code_challenge_method', 'nonce', 'redirect_uri', 'response_type', 'scope', 'state']);
    assert.equal(params['response_type'], 'code');
    assert.equal(params['client_id'], 'portcullis');
    assert.equal(params['redirect_uri'], CONFIG.redirectUrl);
    assert.equal(params['scope'], 'openid email');
    assert.equal(params['code_challenge_method'], 'S256');
    for (const value of [params['state'], params['nonce'], params['code_challenge'], a.binding]) assert.match(value ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(a.state, b.state);
    assert.notEqual(a.binding, b.binding);
  });

  test('success: the code exchanged with client_secret_basic, the verifier matching the challenge; the actor is the sso subject', async () => {
    const { flow, start, calls } = setup();
    const a = await start();
    const outcome = await flow.finish(CONFIG, { state: a.state, code: 'the-code' }, a.binding, SECRET);
    assert.deepEqual(outcome, { ok: true, user: { subject: 'user-1', issuer: ISSUER } });
    const token = calls.find((c) => c.url === `${ISSUER}/token`);
    assert.ok(token !== undefined);
    assert.equal(token.request.method, 'POST');
    assert.equal(token.request.headers?.['authorization'], `Basic ${Buffer.from('portcullis:the+secret').toString('base64')}`);
    const form = new URLSearchParams(token.request.body);
    assert.deepEqual([...form.keys()].sort(), ['code', 'code_verifier', 'grant_type', 'redirect_uri']);
    assert.equal(form.get('code'), 'the-code');
    assert.equal(codeChallengeS256(form.get('code_verifier') ?? ''), a.url.searchParams.get('code_challenge'));
  });

  test('a public client sends its client_id and no Authorization', async () => {
    const { flow, start, calls } = setup();
    const a = await start();
    assert.equal((await flow.finish(CONFIG, { state: a.state, code: 'c' }, a.binding, () => null)).ok, true);
    const token = calls.find((c) => c.url === `${ISSUER}/token`);
    assert.equal(token?.request.headers?.['authorization'], undefined);
    assert.equal(new URLSearchParams(token?.request.body).get('client_id'), 'portcullis');
  });

  test('state: missing, unknown, expired, used; binding missing or another browser\'s; config changed since start', async () => {
    const { flow, start, advance } = setup();
    const reason = async (p: Promise<unknown>) => {
      const o = (await p) as { ok: boolean; error?: string; reason?: string };
      return `${o.error} ${o.reason}`;
    };
    assert.equal(await reason(flow.finish(CONFIG, { code: 'c' }, 'b', SECRET)), 'sso_state_invalid state_missing');
    assert.equal(await reason(flow.finish(CONFIG, { state: 'nope', code: 'c' }, 'b', SECRET)), 'sso_state_invalid state_unknown');
    const a = await start();
    advance(LOGIN_TTL_MS);
    assert.equal(await reason(flow.finish(CONFIG, { state: a.state, code: 'c' }, a.binding, SECRET)), 'sso_state_invalid state_expired');
    const b = await start();
    const other = await start();
    assert.equal(await reason(flow.finish(CONFIG, { state: b.state, code: 'c' }, undefined, SECRET)), 'sso_state_invalid binding_missing');
    assert.equal(await reason(flow.finish(CONFIG, { state: b.state, code: 'c' }, b.binding, SECRET)), 'sso_state_invalid state_reused', 'a refused callback used its state up');
    assert.equal(await reason(flow.finish(CONFIG, { state: other.state, code: 'c' }, b.binding, SECRET)), 'sso_state_invalid binding_mismatch');
    const c = await start();
    assert.equal(await reason(flow.finish({ ...CONFIG, clientId: 'other' }, { state: c.state, code: 'c' }, c.binding, SECRET)), 'sso_state_invalid config_changed');
  });

  test('the provider\'s answer: another iss (RFC 9207), iss missing when promised, an error, no code', async () => {
    const cases: Array<[Partial<Script>, Record<string, string>, string, Record<string, unknown>?]> = [
      [{}, { iss: 'https://evil.example.com', code: 'c' }, 'wrong_issuer'],
      [{ discovery: { issuer: ISSUER, authorization_endpoint: `${ISSUER}/a`, token_endpoint: `${ISSUER}/t`, jwks_uri: `${ISSUER}/jwks`, authorization_response_iss_parameter_supported: true } }, { code: 'c' }, 'wrong_issuer'],
      [{}, { error: 'access_denied' }, 'provider_refused', { error: 'access_denied' }],
      [{}, { error: 'bad"quote' }, 'provider_refused', { error: 'bad_quote' }],
      [{}, {}, 'code_missing'],
    ];
    for (const [script, params, reason, detail] of cases) {
      const { flow, start } = setup(script);
      const a = await start();
      assert.deepEqual(await flow.finish(CONFIG, { state: a.state, ...params }, a.binding, SECRET), {
        ok: false,
        error: 'sso_provider_error',
        reason,
        user: null,
        ...(detail === undefined ? {} : { detail }),
      });
    }
  });

  test('the token endpoint: refusing, unreachable, no id_token; the client secret unreadable', async () => {
    // An error of ours under the reason is its `problem` (for the log only): what the operator has to fix.
    const cases: Array<[Script['token'], string, Record<string, unknown>?, string?]> = [
      [() => ({ status: 400, json: { error: 'invalid_grant' } }), 'token_exchange_failed', { status: 400, error: 'invalid_grant' }],
      [() => { throw new Error('https://login.example.com/token could not be reached: fetch failed: connect ECONNREFUSED'); }, 'token_endpoint_unreachable', undefined, 'https://login.example.com/token could not be reached: fetch failed: connect ECONNREFUSED'],
      [() => ({ status: 200, json: { access_token: 'x' } }), 'no_id_token'],
    ];
    for (const [token, reason, detail, problem] of cases) {
      const { flow, start } = setup({ token });
      const a = await start();
      assert.deepEqual(await flow.finish(CONFIG, { state: a.state, code: 'c' }, a.binding, SECRET), {
        ok: false,
        error: 'sso_provider_error',
        reason,
        user: null,
        ...(detail === undefined ? {} : { detail }),
        ...(problem === undefined ? {} : { problem }),
      });
    }
    const { flow, start } = setup();
    const a = await start();
    const unreadable = () => {
      throw new Error('environment variable OIDC_SECRET (admin.oidc.clientSecretEnv) is not set');
    };
    assert.deepEqual(await flow.finish(CONFIG, { state: a.state, code: 'c' }, a.binding, unreadable), {
      ok: false,
      error: 'sso_provider_error',
      reason: 'client_secret_unavailable',
      user: null,
      problem: 'environment variable OIDC_SECRET (admin.oidc.clientSecretEnv) is not set',
    });
  });

  test('an ID token with another nonce (another login\'s) is sso_id_token_invalid', async () => {
    const { flow, start, setNonce } = setup();
    const a = await start();
    setNonce('another login');
    assert.deepEqual(await flow.finish(CONFIG, { state: a.state, code: 'c' }, a.binding, SECRET), { ok: false, error: 'sso_id_token_invalid', reason: 'nonce_mismatch', user: null });
  });

  test('security.requireFips: an EdDSA ID token is sso_id_token_invalid unsupported_alg; the same token passes without it, and ES256 passes with it', async () => {
    let alg: 'ES256' | 'EdDSA' = 'EdDSA';
    const { flow, start, nonce, nowMs } = setup({
      token: () => ({ status: 200, json: { id_token: idToken({ iss: ISSUER, sub: 'user-1', aud: 'portcullis', exp: nowMs() / 1000 + 60, iat: nowMs() / 1000, nonce: nonce() }, alg), token_type: 'Bearer' } }),
    });
    const finish = async (requireFips: boolean) => {
      const a = await start();
      return flow.finish(CONFIG, { state: a.state, code: 'c' }, a.binding, SECRET, requireFips);
    };
    assert.deepEqual(await finish(true), { ok: false, error: 'sso_id_token_invalid', reason: 'unsupported_alg', user: null });
    assert.deepEqual(await finish(false), { ok: true, user: { subject: 'user-1', issuer: ISSUER } });
    alg = 'ES256';
    assert.deepEqual(await finish(true), { ok: true, user: { subject: 'user-1', issuer: ISSUER } });
  });

  test('a user in no allow-list is refused with the sso actor; groups admit', async () => {
    const { flow, start } = setup();
    const a = await start();
    const config = { ...CONFIG, allowedUsers: ['someone'], allowedGroups: ['admins'] };
    assert.deepEqual(await flow.finish(config, { state: a.state, code: 'c' }, a.binding, SECRET), {
      ok: false,
      error: 'sso_user_not_allowed',
      reason: 'user_not_allowed',
      user: { subject: 'user-1', issuer: ISSUER },
    });
    const token = (claims: Record<string, unknown>) => ({ sub: 's', iss: ISSUER, claims });
    const rules = { allowedUsers: ['a@example.com', 'sub-1'], allowedGroups: ['admins'], groupsClaim: 'roles' };
    assert.equal(userAllowed(rules, { sub: 'sub-1', iss: ISSUER, claims: {} }), true);
    assert.equal(userAllowed(rules, token({ email: 'a@Example.COM', email_verified: true })), true);
    assert.equal(userAllowed(rules, token({ email: 'A@example.com', email_verified: true })), false, 'the local part is compared exactly');
    assert.equal(userAllowed(rules, token({ email: 'a@example.com', email_verified: 'true' })), false, 'only a boolean true counts');
    assert.equal(userAllowed(rules, token({ roles: ['x', 'admins'] })), true);
    assert.equal(userAllowed(rules, token({ roles: 'admins' })), true);
    assert.equal(userAllowed(rules, token({ groups: ['admins'] })), false, 'the configured claim, not "groups"');
  });

  test('a verified email with a look-alike letter is not the allow-listed address (KELVIN SIGN for k); a local part in another letter case is refused with a hint in the log', async () => {
    const signIn = async (email: string) => {
      let nonce = '';
      const { flow, start } = setup({
        token: (form) => {
          void form;
          const nowS = Date.UTC(2026, 10, 26) / 1000;
          return { status: 200, json: { id_token: idToken({ iss: ISSUER, sub: 'user-9', aud: 'portcullis', exp: nowS + 60, iat: nowS, nonce, email, email_verified: true }), token_type: 'Bearer' } };
        },
      });
      const config = { ...CONFIG, allowedUsers: ['kate@example.com'] };
      const a = await start(config);
      nonce = a.url.searchParams.get('nonce') ?? '';
      return flow.finish(config, { state: a.state, code: 'c' }, a.binding, SECRET);
    };
    assert.deepEqual(await signIn('\u212Aate@example.com'), {
      ok: false,
      error: 'sso_user_not_allowed',
      reason: 'user_not_allowed',
      user: { subject: 'user-9', issuer: ISSUER, name: '\u212Aate@example.com' },
    });
    assert.deepEqual(await signIn('Kate@example.com'), {
      ok: false,
      error: 'sso_user_not_allowed',
      reason: 'user_not_allowed',
      user: { subject: 'user-9', issuer: ISSUER, name: 'Kate@example.com' },
      problem: 'the verified email differs from an allowedUsers entry only in the letter case of its local part, which is compared exactly: write the entry as the provider sends the address',
    });
    assert.deepEqual(await signIn('kate@EXAMPLE.com'), { ok: true, user: { subject: 'user-9', issuer: ISSUER, name: 'kate@EXAMPLE.com' } });
  });

  test('discovery failing at start is an SsoStartError with its reason; transactions are bounded (the oldest dropped)', async () => {
    const bad = setup({ discovery: { issuer: 'https://other.example.com' } });
    await assert.rejects(bad.start(), (err: unknown) => err instanceof SsoStartError && err.reason === 'wrong_issuer');
    const { flow, start } = setup({}, 2);
    const first = await start();
    await start();
    await start();
    const outcome = await flow.finish(CONFIG, { state: first.state, code: 'c' }, first.binding, SECRET);
    assert.equal(outcome.ok === false && outcome.reason, 'state_unknown');
  });

  test('the user\'s name is preferred_username, else email, never one with control, bidi or zero-width characters', () => {
    const actor = (claims: Record<string, unknown>) => oidcUser({ sub: 's', iss: ISSUER, claims });
    assert.deepEqual(actor({ preferred_username: 'alice', email: 'a@example.com' }), { subject: 's', issuer: ISSUER, name: 'alice' });
    assert.equal(actor({ preferred_username: 'nim\u202eda', email: 'a@example.com' }).name, 'a@example.com');
    assert.equal(actor({ preferred_username: 'ad\u200bmin' }).name, undefined);
    assert.equal(actor({ preferred_username: 'a\nb', email: 'x\u2028y' }).name, undefined);
    assert.equal(actor({ preferred_username: 'Jürgen Groß' }).name, 'Jürgen Groß');
  });

  test('a flood of starts from one address drops only its own pending logins, not another user\'s', async () => {
    const { flow, start, setNonce } = setup({}, 40);
    const victim = await start(CONFIG, '192.0.2.7');
    // Far more than the table holds, from one address.
    for (let i = 0; i < 100; i++) await start(CONFIG, '198.51.100.1');
    setNonce(victim.url.searchParams.get('nonce') ?? '');
    const outcome = await flow.finish(CONFIG, { state: victim.state, code: 'c' }, victim.binding, SECRET);
    assert.equal(outcome.ok, true, JSON.stringify(outcome));
    // The flooder keeps only its newest MAX_TRANSACTIONS_PER_CLIENT (16): its first is gone.
    const { flow: flow2, start: start2, setNonce: setNonce2 } = setup();
    const first = await start2(CONFIG, '198.51.100.1');
    const kept: Array<{ state: string; binding: string; url: URL }> = [];
    for (let i = 0; i < MAX_TRANSACTIONS_PER_CLIENT; i++) kept.push(await start2(CONFIG, '198.51.100.1'));
    const dropped = await flow2.finish(CONFIG, { state: first.state, code: 'c' }, first.binding, SECRET);
    assert.equal(dropped.ok === false && dropped.reason, 'state_unknown');
    const oldestKept = kept[0] as { state: string; binding: string; url: URL };
    setNonce2(oldestKept.url.searchParams.get('nonce') ?? '');
    assert.equal((await flow2.finish(CONFIG, { state: oldestKept.state, code: 'c' }, oldestKept.binding, SECRET)).ok, true);
  });

  test('a full table (many addresses) loses the oldest login of the address holding the most', async () => {
    const { flow, start, setNonce } = setup({}, 6);
    const victims = [await start(CONFIG, '192.0.2.1'), await start(CONFIG, '192.0.2.2')];
    for (let i = 0; i < 10; i++) await start(CONFIG, `198.51.100.${i % 2}`);
    for (const victim of victims) {
      setNonce(victim.url.searchParams.get('nonce') ?? '');
      const outcome = await flow.finish(CONFIG, { state: victim.state, code: 'c' }, victim.binding, SECRET);
      assert.equal(outcome.ok, true, JSON.stringify(outcome));
    }
  });
});
