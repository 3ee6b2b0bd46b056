// ID tokens signed here with keys from crypto.generateKeyPairSync, one per
// algorithm family, verified by src/oidc/id-token.ts: every algorithm
// accepted with its own key type, `none`, HS256 and a key of the wrong type
// refused, and each claim rule failing with its own reason.
import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, sign, constants, type KeyObject } from 'node:crypto';
import { describe, test } from 'node:test';
import { CLOCK_SKEW_MS, verifyIdToken, type IdTokenExpectations } from '../../src/oidc/id-token.ts';
import { FIPS_ID_TOKEN_ALGS, IdTokenError, MAX_JWS_LENGTH, parseJws, type IdTokenAlg } from '../../src/oidc/jws.ts';

const ISSUER = 'https://login.example.com/realms/main';
const CLIENT = 'portcullis';
const NONCE = 'n-0S6_WzA2Mj';
const NOW_MS = Date.UTC(2026, 10, 26, 12, 0, 0);
const NOW = NOW_MS / 1000;

type KeyPair = { publicKey: KeyObject; privateKey: KeyObject };
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const keys: Record<string, KeyPair> = {
  RS: rsa,
  PS: rsa,
  ES256: generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  ES384: generateKeyPairSync('ec', { namedCurve: 'P-384' }),
  ES512: generateKeyPairSync('ec', { namedCurve: 'P-521' }),
  Ed25519: generateKeyPairSync('ed25519'),
  Ed448: generateKeyPairSync('ed448'),
};

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function claims(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { iss: ISSUER, sub: 'user-1', aud: CLIENT, exp: NOW + 300, iat: NOW - 10, nonce: NONCE, ...over };
}

function signToken(alg: string, privateKey: KeyObject, payload: Record<string, unknown>, header: Record<string, unknown> = {}): string {
  const input = `${b64({ alg, typ: 'JWT', kid: 'k1', ...header })}.${b64(payload)}`;
  const data = Buffer.from(input);
  const hash = { '256': 'sha256', '384': 'sha384', '512': 'sha512' }[alg.slice(2)] ?? null;
  let signature: Buffer;
  if (alg.startsWith('RS')) signature = sign(hash, data, privateKey);
  else if (alg.startsWith('PS')) signature = sign(hash, data, { key: privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST });
  else if (alg.startsWith('ES')) signature = sign(hash, data, { key: privateKey, dsaEncoding: 'ieee-p1363' });
  else signature = sign(null, data, privateKey);
  return `${input}.${signature.toString('base64url')}`;
}

function expect(publicKey: KeyObject | null, over: Partial<IdTokenExpectations> = {}): IdTokenExpectations {
  return { issuer: ISSUER, clientId: CLIENT, audiences: [CLIENT], nonce: NONCE, nowMs: NOW_MS, key: async () => publicKey, ...over };
}

async function refusal(token: string, expectations: IdTokenExpectations): Promise<string> {
  try {
    await verifyIdToken(token, expectations);
  } catch (err) {
    assert.ok(err instanceof IdTokenError, String(err));
    return err.reason;
  }
  assert.fail('the token was accepted');
}

const CASES: Array<[IdTokenAlg, KeyPair]> = [
  ['RS256', keys.RS!],
  ['RS384', keys.RS!],
  ['RS512', keys.RS!],
  ['PS256', keys.PS!],
  ['PS384', keys.PS!],
  ['PS512', keys.PS!],
  ['ES256', keys.ES256!],
  ['ES384', keys.ES384!],
  ['ES512', keys.ES512!],
  ['EdDSA', keys.Ed25519!],
  ['EdDSA', keys.Ed448!],
];

describe('signatures', () => {
  for (const [alg, pair] of CASES) {
    test(`${alg} (${pair.publicKey.asymmetricKeyType}) verifies; one flipped signature bit does not`, async () => {
      const token = signToken(alg, pair.privateKey, claims());
      const verified = await verifyIdToken(token, expect(pair.publicKey));
      assert.equal(verified.sub, 'user-1');
      assert.equal(verified.iss, ISSUER);
      const [h, p, s] = token.split('.') as [string, string, string];
      const sig = Buffer.from(s, 'base64url');
      sig[sig.length - 1] = (sig[sig.length - 1] as number) ^ 1;
      assert.equal(await refusal(`${h}.${p}.${sig.toString('base64url')}`, expect(pair.publicKey)), 'bad_signature');
    });
  }

  test('with the FIPS algs (security.requireFips) EdDSA is unsupported_alg before any key is asked for; RSA, RSA-PSS and ECDSA verify', async () => {
    assert.deepEqual(FIPS_ID_TOKEN_ALGS, ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512']);
    let asked = 0;
    const fips = (publicKey: KeyObject) => expect(publicKey, { algs: FIPS_ID_TOKEN_ALGS, key: async () => (asked++, publicKey) });
    for (const pair of [keys.Ed25519!, keys.Ed448!]) {
      assert.equal(await refusal(signToken('EdDSA', pair.privateKey, claims()), fips(pair.publicKey)), 'unsupported_alg');
    }
    assert.equal(asked, 0);
    assert.throws(() => parseJws(signToken('EdDSA', keys.Ed25519!.privateKey, claims()), FIPS_ID_TOKEN_ALGS), {
      message: 'the ID token is signed with "EdDSA"; accepted: RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512',
    });
    for (const [alg, pair] of CASES.filter(([a]) => a !== 'EdDSA')) {
      assert.equal((await verifyIdToken(signToken(alg, pair.privateKey, claims()), fips(pair.publicKey))).sub, 'user-1', alg);
    }
  });

  test('a payload changed after signing is bad_signature', async () => {
    const token = signToken('RS256', rsa.privateKey, claims());
    const [h, , s] = token.split('.');
    assert.equal(await refusal(`${h}.${b64(claims({ sub: 'admin' }))}.${s}`, expect(rsa.publicKey)), 'bad_signature');
  });

  test('a key of another type than the alg names is bad_signature (ES256 header, RSA key; RS256 header, EC key; ES384 token, P-256 key)', async () => {
    assert.equal(await refusal(signToken('ES256', keys.ES256!.privateKey, claims()), expect(rsa.publicKey)), 'bad_signature');
    assert.equal(await refusal(signToken('RS256', rsa.privateKey, claims()), expect(keys.ES256!.publicKey)), 'bad_signature');
    assert.equal(await refusal(signToken('ES384', keys.ES384!.privateKey, claims()), expect(keys.ES256!.publicKey)), 'bad_signature');
  });

  test('an RSA key under 2048 bits is refused', async () => {
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 });
    assert.equal(await refusal(signToken('RS256', small.privateKey, claims()), expect(small.publicKey)), 'bad_signature');
  });

  test('a DER-encoded ECDSA signature (not raw r||s) is refused', async () => {
    const input = `${b64({ alg: 'ES256', kid: 'k1' })}.${b64(claims())}`;
    const der = sign('sha256', Buffer.from(input), keys.ES256!.privateKey);
    assert.equal(await refusal(`${input}.${der.toString('base64url')}`, expect(keys.ES256!.publicKey)), 'bad_signature');
  });

  test('alg none, HS256 (an HMAC with the public key as secret) and an unknown alg are unsupported_alg', async () => {
    const none = `${b64({ alg: 'none' })}.${b64(claims())}.x`;
    assert.equal(await refusal(none, expect(rsa.publicKey)), 'unsupported_alg');
    const input = `${b64({ alg: 'HS256', kid: 'k1' })}.${b64(claims())}`;
    const pem = rsa.publicKey.export({ type: 'spki', format: 'pem' });
    const hmac = createHmac('sha256', pem).update(input).digest('base64url');
    assert.equal(await refusal(`${input}.${hmac}`, expect(rsa.publicKey)), 'unsupported_alg');
    assert.equal(await refusal(`${b64({ alg: 'RS1' })}.${b64(claims())}.x`, expect(rsa.publicKey)), 'unsupported_alg');
  });

  test('no key for the kid is unknown_key; the kid and alg reach the lookup', async () => {
    const seen: unknown[] = [];
    const token = signToken('ES256', keys.ES256!.privateKey, claims(), { kid: 'rotated' });
    assert.equal(await refusal(token, expect(null, { key: async (kid, alg) => (seen.push([kid, alg]), null) })), 'unknown_key');
    assert.deepEqual(seen, [['rotated', 'ES256']]);
  });
});

describe('malformed tokens', () => {
  const good = signToken('RS256', rsa.privateKey, claims());
  const [h, p, s] = good.split('.') as [string, string, string];
  const cases: Array<[string, string]> = [
    ['empty', ''],
    ['two parts', `${h}.${p}`],
    ['four parts', `${good}.x`],
    ['empty signature', `${h}.${p}.`],
    ['a character outside base64url', `${h}.${p}+.${s}`],
    ['a header that is not JSON', `${Buffer.from('{alg').toString('base64url')}.${p}.${s}`],
    ['a payload that is an array', `${h}.${b64([1])}.${s}`],
    ['a crit header', `${b64({ alg: 'RS256', crit: ['exp'] })}.${p}.${s}`],
    ['a kid that is a number', `${b64({ alg: 'RS256', kid: 7 })}.${p}.${s}`],
    ['longer than the bound', `${h}.${'A'.repeat(MAX_JWS_LENGTH)}.${s}`],
  ];
  for (const [name, token] of cases) {
    test(`${name}: malformed`, async () => {
      assert.equal(await refusal(token, expect(rsa.publicKey)), 'malformed');
    });
  }

  test('parseJws yields the header, payload and the signed bytes', () => {
    const jws = parseJws(good);
    assert.equal(jws.header.alg, 'RS256');
    assert.equal(jws.header.kid, 'k1');
    assert.equal(jws.payload['sub'], 'user-1');
    assert.equal(jws.signingInput.toString(), `${h}.${p}`);
  });
});

describe('claims', () => {
  const cases: Array<[string, Record<string, unknown>, string, Partial<IdTokenExpectations>?]> = [
    ['another issuer', { iss: 'https://evil.example.com' }, 'wrong_issuer'],
    ['the issuer with a trailing slash', { iss: `${ISSUER}/` }, 'wrong_issuer'],
    ['no iss', { iss: undefined }, 'wrong_issuer'],
    ['another audience', { aud: 'someone-else' }, 'wrong_audience'],
    ['several audiences without azp', { aud: [CLIENT, 'other'] }, 'wrong_audience'],
    ['several audiences, azp another client', { aud: [CLIENT, 'other'], azp: 'other' }, 'wrong_audience'],
    ['an aud that is a number', { aud: 5 }, 'malformed'],
    ['no sub', { sub: undefined }, 'malformed'],
    ['a sub of 256 characters', { sub: 'x'.repeat(256) }, 'malformed'],
    ['exp past by more than the skew', { exp: NOW - CLOCK_SKEW_MS / 1000 - 1 }, 'expired'],
    ['exp exactly at the end of the skew', { exp: NOW - CLOCK_SKEW_MS / 1000 }, 'expired'],
    ['no exp', { exp: undefined }, 'malformed'],
    ['exp as a string', { exp: String(NOW + 300) }, 'malformed'],
    ['iat beyond the skew in the future', { iat: NOW + CLOCK_SKEW_MS / 1000 + 1 }, 'not_yet_valid'],
    ['nbf beyond the skew in the future', { nbf: NOW + CLOCK_SKEW_MS / 1000 + 1 }, 'not_yet_valid'],
    ['another nonce', { nonce: 'other' }, 'nonce_mismatch'],
    ['no nonce', { nonce: undefined }, 'nonce_mismatch'],
    ['aud not among the configured audiences', { aud: CLIENT }, 'wrong_audience', { audiences: ['api://portcullis'] }],
  ];
  for (const [name, over, reason, expectations] of cases) {
    test(`${name}: ${reason}`, async () => {
      const token = signToken('ES256', keys.ES256!.privateKey, claims(over));
      assert.equal(await refusal(token, expect(keys.ES256!.publicKey, expectations)), reason);
    });
  }

  const accepted: Array<[string, Record<string, unknown>, Partial<IdTokenExpectations>?]> = [
    ['exp passed but within the skew', { exp: NOW - 30 }],
    ['iat and nbf ahead but within the skew', { iat: NOW + 30, nbf: NOW + 30 }],
    ['several audiences with azp = client', { aud: ['other', CLIENT], azp: CLIENT }],
    ['a configured audience other than the client id, azp = client', { aud: 'api://portcullis', azp: CLIENT }, { audiences: ['api://portcullis'] }],
  ];
  for (const [name, over, expectations] of accepted) {
    test(`${name}: accepted`, async () => {
      const token = signToken('ES256', keys.ES256!.privateKey, claims(over));
      assert.equal((await verifyIdToken(token, expect(keys.ES256!.publicKey, expectations))).sub, 'user-1');
    });
  }
});
