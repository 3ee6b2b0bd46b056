// Who admin.oidc admits (src/oidc/allowed-users.ts): identities compared
// exactly, the one fold A-Z in an e-mail's domain. Each look-alike that
// toLowerCase, toUpperCase or a normalisation would turn into a listed
// identity is refused.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { asciiLowerCase, emailMatches, refusalHint, userAllowed } from '../../src/oidc/allowed-users.ts';
import type { VerifiedIdToken } from '../../src/oidc/id-token.ts';

const ISSUER = 'https://login.example.com';
const RULES = {
  allowedUsers: ['kate@example.com', 'iris@example.com', 'sam@sample.example', 'ops@kelvin.example', 'jos\u00e9@example.com', 'sub-1'],
  allowedGroups: ['gateway-admins'],
  groupsClaim: 'groups',
};

function verified(email: string): VerifiedIdToken {
  return { sub: 'someone-else', iss: ISSUER, claims: { email, email_verified: true } };
}

describe('allowedUsers e-mail entries', () => {
  const table: Array<[what: string, email: string, admitted: boolean]> = [
    ['the listed address', 'kate@example.com', true],
    ['KELVIN SIGN U+212A for k (toLowerCase makes it k)', '\u212Aate@example.com', false],
    ['KELVIN SIGN in the domain', 'ops@\u212Aelvin.example', false],
    ['dotless i U+0131 (toUpperCase makes it I)', '\u0131ris@example.com', false],
    ['capital I with dot U+0130 (toLowerCase makes it i and a combining dot)', '\u0130ris@example.com', false],
    ['long s U+017F (toUpperCase makes it S)', '\u017Fam@sample.example', false],
    ['long s in the domain', 'sam@\u017Fample.example', false],
    ['full-width letters', '\uFF4B\uFF41\uFF54\uFF45@example.com', false],
    ['full-width capitals (toLowerCase gives full-width small letters)', '\uFF2B\uFF21\uFF34\uFF25@example.com', false],
    ['a full-width commercial at', 'kate\uFF20example.com', false],
    ['e and COMBINING ACUTE U+0301 against a listed U+00E9 (NFC would join them)', 'jose\u0301@example.com', false],
    ['the listed U+00E9, code point for code point', 'jos\u00e9@example.com', true],
    ['a ZERO WIDTH SPACE in the local part', 'kate\u200B@example.com', false],
    ['a ZERO WIDTH SPACE after the domain', 'kate@example.com\u200B', false],
    ['mixed-case ASCII domain', 'kate@Example.COM', true],
    ['upper-case ASCII domain', 'ops@KELVIN.EXAMPLE', true],
    ['mixed-case local part (compared exactly)', 'Kate@example.com', false],
    ['upper-case local part', 'KATE@example.com', false],
    ['another local part', 'kate2@example.com', false],
    ['a subdomain', 'kate@mail.example.com', false],
    ['a trailing dot on the domain', 'kate@example.com.', false],
    ['no "@"', 'kate', false],
  ];
  for (const [what, email, admitted] of table) {
    test(`${what}: ${admitted ? 'admitted' : 'refused'}`, () => {
      assert.equal(userAllowed(RULES, verified(email)), admitted);
    });
  }

  test('only an email the provider marks verified (a boolean true) counts', () => {
    assert.equal(userAllowed(RULES, { sub: 's', iss: ISSUER, claims: { email: 'kate@example.com', email_verified: 'true' } }), false);
    assert.equal(userAllowed(RULES, { sub: 's', iss: ISSUER, claims: { email: 'kate@example.com' } }), false);
  });
});

describe('sub values and groups', () => {
  test('a sub is compared exactly', () => {
    assert.equal(userAllowed(RULES, { sub: 'sub-1', iss: ISSUER, claims: {} }), true);
    assert.equal(userAllowed(RULES, { sub: 'SUB-1', iss: ISSUER, claims: {} }), false);
    assert.equal(userAllowed(RULES, { sub: 'sub-1\u200B', iss: ISSUER, claims: {} }), false);
  });

  test('a group is compared exactly, in the configured claim, as a string or in a list', () => {
    const token = (groups: unknown): VerifiedIdToken => ({ sub: 's', iss: ISSUER, claims: { groups } });
    assert.equal(userAllowed(RULES, token('gateway-admins')), true);
    assert.equal(userAllowed(RULES, token(['x', 'gateway-admins'])), true);
    assert.equal(userAllowed(RULES, token(['Gateway-Admins'])), false);
    assert.equal(userAllowed(RULES, token(['gateway-admin\u017F'])), false);
    assert.equal(userAllowed({ ...RULES, groupsClaim: 'roles' }, token(['gateway-admins'])), false, 'the configured claim, not "groups"');
  });
});

describe('the pieces', () => {
  test('asciiLowerCase folds A-Z and nothing else', () => {
    assert.equal(asciiLowerCase('Kate@EXAMPLE.com'), 'kate@example.com');
    assert.equal(asciiLowerCase('\u212A\u0130\u00C9\uFF2BZ'), '\u212A\u0130\u00C9\uFF2Bz');
    assert.equal(asciiLowerCase('already lower'), 'already lower');
    assert.equal(asciiLowerCase(''), '');
  });

  test('emailMatches splits at the last "@": a quoted local part with "@" in it is one local part', () => {
    assert.equal(emailMatches('"a@b"@example.com', '"a@b"@EXAMPLE.com'), true);
    assert.equal(emailMatches('"a@b"@example.com', '"a@B"@example.com'), false);
    assert.equal(emailMatches('@example.com', '@example.com'), false, 'no local part: no address');
    assert.equal(emailMatches('kate@', 'kate@'), false, 'no domain: no address');
  });

  test('the refusal hint names a local part in another letter case, and nothing else', () => {
    const hint = 'the verified email differs from an allowedUsers entry only in the letter case of its local part, which is compared exactly: write the entry as the provider sends the address';
    assert.equal(refusalHint(RULES, verified('Kate@Example.com')), hint);
    assert.equal(refusalHint(RULES, verified('\u212Aate@example.com')), undefined);
    assert.equal(refusalHint(RULES, verified('someone@example.com')), undefined);
    assert.equal(refusalHint(RULES, { sub: 's', iss: ISSUER, claims: { email: 'Kate@example.com', email_verified: false } }), undefined);
  });
});
