// The secret kinds: each generator makes exactly what its kind describes
// (marker, alphabet, length), and the one redaction pattern derived from the
// kinds catches each marked secret whole, cut short, inside a longer word and
// at either edge of a text, while display prefixes stay readable.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createBootstrapToken } from '../../src/admin/bootstrap-token.ts';
import { createSessionStore } from '../../src/admin/sessions.ts';
import { generateAdminToken, adminTokenPrefix } from '../../src/keys/admin-token.ts';
import { generateApiKey, keyDisplayPrefix } from '../../src/keys/api-key.ts';
import {
  ADMIN_TOKEN_KIND,
  API_KEY_KIND,
  BASE62_ALPHABET,
  BASE64URL_ALPHABET,
  BOOTSTRAP_TOKEN_KIND,
  BROWSER_SECRET_KIND,
  holdsSecret,
  REDACTED,
  REDACTION_MIN_CHARS,
  redactionSource,
  redactSecretText,
  SECRET_KINDS,
  type SecretKind,
} from '../../src/log/secret-kinds.ts';
import { newLoginSecrets } from '../../src/oidc/pkce.ts';
import { seededRandom } from './seeded-random.ts';

const DRAWS = 2000;

/** Does `secret` have exactly the kind's marker, length and alphabet? */
function assertOfKind(secret: string, kind: SecretKind): void {
  const marker = kind.marker ?? '';
  assert.ok(secret.startsWith(marker), `${secret} starts with ${marker}`);
  const rest = secret.slice(marker.length);
  assert.equal(rest.length, kind.length, `${secret}: ${kind.length} characters after the marker`);
  for (const char of rest) assert.ok(kind.alphabet.includes(char), `${secret}: ${char} is in the ${kind.name} alphabet`);
}

describe('each generator makes what its kind describes', () => {
  test('API keys, admin tokens and bootstrap tokens, 2000 of each from a seeded source', () => {
    const random = seededRandom('kinds');
    for (let i = 0; i < DRAWS; i++) {
      assertOfKind(generateApiKey(random), API_KEY_KIND);
      assertOfKind(generateAdminToken(random), ADMIN_TOKEN_KIND);
      assertOfKind(createBootstrapToken(random).token, BOOTSTRAP_TOKEN_KIND);
    }
  });

  test('session ids, CSRF tokens and the single sign-on secrets are browser secrets', () => {
    const random = seededRandom('browser');
    const store = createSessionStore({ random, maxSessions: DRAWS });
    for (let i = 0; i < DRAWS / 4; i++) {
      const session = store.create({ kind: 'password', id: 'admin' });
      assertOfKind(session.id, BROWSER_SECRET_KIND);
      assertOfKind(session.csrfToken, BROWSER_SECRET_KIND);
      const login = newLoginSecrets(random);
      for (const secret of [login.state, login.nonce, login.codeVerifier, login.binding]) assertOfKind(secret, BROWSER_SECRET_KIND);
    }
  });

  test('the random part of an admin token uses all of base64url, "-" and "_" included', () => {
    const random = seededRandom('alphabet');
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) for (const char of generateAdminToken(random).slice(4)) seen.add(char);
    assert.deepEqual([...seen].sort(), [...BASE64URL_ALPHABET].sort());
  });

  test('the kinds, as documented', () => {
    assert.deepEqual(
      SECRET_KINDS.map((k) => [k.name, k.marker, k.alphabet === BASE62_ALPHABET ? 'base62' : 'base64url', k.length]),
      [
        ['API key', 'pcl_', 'base62', 49],
        ['admin API token', 'pca_', 'base64url', 43],
        ['bootstrap token', 'pcb_', 'base62', 32],
        ['session or single sign-on secret', null, 'base64url', 43],
      ],
    );
  });
});

describe('the redaction pattern derived from the kinds', () => {
  const random = seededRandom('redaction');
  const samples: Array<[string, string]> = [
    ['API key', generateApiKey(random)],
    ['admin token', generateAdminToken(random)],
    ['bootstrap token', createBootstrapToken(random).token],
    // Tokens whose first random characters are the two base64url characters beyond base62.
    ['admin token starting with -', 'pca_-' + generateAdminToken(random).slice(5)],
    ['admin token starting with _', 'pca__' + generateAdminToken(random).slice(5)],
    ['admin token with - and _ throughout', 'pca_' + '-_Ab'.repeat(10) + 'xyz'],
  ];

  for (const [what, secret] of samples) {
    test(`${what}: whole, cut short, inside a word and at either edge of a text`, () => {
      const cases: Array<[string, string]> = [
        [secret, REDACTED],
        [secret.slice(0, 4 + REDACTION_MIN_CHARS), REDACTED],
        [`prod${secret}`, `prod${REDACTED}`],
        [`${secret}.bak`, `${REDACTED}.bak`],
        [`key=${secret}&x=1`, `key=${REDACTED}&x=1`],
        [`"${secret}" then ${secret}`, `"${REDACTED}" then ${REDACTED}`],
        [`line one\n${secret}`, `line one\n${REDACTED}`],
      ];
      for (const [text, expected] of cases) {
        assert.equal(holdsSecret(text), true, text);
        assert.equal(redactSecretText(text), expected, text);
      }
    });
  }

  test('display prefixes and fewer than 16 characters after a marker stay readable', () => {
    const key = generateApiKey(random);
    const token = generateAdminToken(random);
    const readable = [keyDisplayPrefix(key), adminTokenPrefix(token), 'pcl_' + 'A'.repeat(REDACTION_MIN_CHARS - 1), 'pca_-_-_', 'pcx_' + 'A'.repeat(40), 'PCL_' + 'A'.repeat(40), 'pcl ' + 'A'.repeat(40), 'key_3fJ9aQ0pLx7cVb2Z', ''];
    for (const text of readable) {
      assert.equal(holdsSecret(text), false, text);
      assert.equal(redactSecretText(text), text);
    }
  });

  test('each marked kind matches exactly the characters of its alphabet after its marker', () => {
    for (const kind of SECRET_KINDS) {
      if (kind.marker === null) {
        assert.throws(() => redactionSource(kind), { name: 'RangeError', message: 'session or single sign-on secret has no marker: it cannot be recognised by a pattern' });
        continue;
      }
      for (let code = 0; code < 128; code++) {
        const char = String.fromCharCode(code);
        const text: string = kind.marker + char.repeat(REDACTION_MIN_CHARS);
        assert.equal(holdsSecret(text), kind.alphabet.includes(char), `${kind.name}: ${JSON.stringify(char)}`);
      }
    }
  });

  test('a run that reaches into characters outside the alphabet is redacted up to them', () => {
    const token = generateAdminToken(random);
    assert.equal(redactSecretText(`${token}/=+.x`), `${REDACTED}/=+.x`);
    assert.equal(redactSecretText(`${token}${token}`), REDACTED);
  });
});
