import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertWellFormedPasswordHash,
  checkPasswordStrength,
  DEFAULT_SCRYPT_PARAMS,
  hashPassword,
  PasswordHashFormatError,
  verifyPassword,
  type ScryptParams,
} from '../../src/admin/password-hash.ts';

const FAST: ScryptParams = { cost: 1024, blockSize: 8, parallelization: 1 };

function b64url(bytes: Buffer | string): string {
  return Buffer.from(bytes).toString('base64url');
}

// RFC 7914 section 12, fourth vector: scrypt("pleaseletmein", "SodiumChloride", N=16384, r=8, p=1, dkLen=64).
const RFC_HASH = Buffer.from(
  '7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2' +
    'd5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887',
  'hex',
);
const RFC_STORED = `scrypt$16384$8$1$${b64url('SodiumChloride')}$${b64url(RFC_HASH)}`;

test('verifies the RFC 7914 test vector written in the stored format', async () => {
  assert.equal(await verifyPassword('pleaseletmein', RFC_STORED), true);
  assert.equal(await verifyPassword('pleaseletmeiN', RFC_STORED), false);
  assert.equal(await verifyPassword('', RFC_STORED), false);
});

test('the default parameters are N=2^15, r=8, p=1', () => {
  assert.deepEqual(DEFAULT_SCRYPT_PARAMS, { cost: 32768, blockSize: 8, parallelization: 1 });
});

test('hashPassword writes scrypt$N$r$p$salt$hash with a 16-byte salt and a 32-byte hash, fresh salt each time', async () => {
  const stored = await hashPassword('correct horse battery', FAST);
  const fields = stored.split('$');
  assert.equal(fields.length, 6);
  assert.deepEqual(fields.slice(0, 4), ['scrypt', '1024', '8', '1']);
  assert.equal(Buffer.from(fields[4] as string, 'base64url').length, 16);
  assert.equal(Buffer.from(fields[5] as string, 'base64url').length, 32);
  assert.match(stored, /^scrypt\$1024\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  assert.equal(await verifyPassword('correct horse battery', stored), true);
  assert.equal(await verifyPassword('correct horse batterY', stored), false);
  const again = await hashPassword('correct horse battery', FAST);
  assert.notEqual(again, stored);
});

test('hashPassword with the default parameters verifies (one real-cost hash)', async () => {
  const stored = await hashPassword('a long enough password');
  assert.match(stored, /^scrypt\$32768\$8\$1\$/);
  assert.equal(await verifyPassword('a long enough password', stored), true);
});

test('the password is NFC-normalised: composed and decomposed accents match', async () => {
  const composed = 'caf\u00e9 caf\u00e9 caf\u00e9';
  const decomposed = 'cafe\u0301 cafe\u0301 cafe\u0301';
  const stored = await hashPassword(composed, FAST);
  assert.equal(await verifyPassword(decomposed, stored), true);
});

test('hashPassword refuses out-of-bounds parameters with RangeError', async () => {
  await assert.rejects(hashPassword('x', { cost: 512, blockSize: 8, parallelization: 1 }), {
    name: 'RangeError',
    message: 'Invalid scrypt parameters: N must be a power of two from 2^10 to 2^20',
  });
  await assert.rejects(hashPassword('x', { cost: 3000, blockSize: 8, parallelization: 1 }), RangeError);
  await assert.rejects(hashPassword('x', { cost: 1024, blockSize: 0, parallelization: 1 }), {
    message: 'Invalid scrypt parameters: r must be an integer from 1 to 32',
  });
});

test('malformed stored strings throw PasswordHashFormatError naming the problem, before any scrypt work', async () => {
  const salt = b64url(Buffer.alloc(16, 1));
  const hash = b64url(Buffer.alloc(32, 2));
  const cases: Array<[unknown, string]> = [
    [42, 'it is not a string'],
    ['', 'expected scrypt$<N>$<r>$<p>$<salt>$<hash>'],
    [`bcrypt$1024$8$1$${salt}$${hash}`, 'expected scrypt$<N>$<r>$<p>$<salt>$<hash>'],
    [`scrypt$1024$8$1$${salt}`, 'expected scrypt$<N>$<r>$<p>$<salt>$<hash>'],
    [`scrypt$1024$8$1$${salt}$${hash}$`, 'expected scrypt$<N>$<r>$<p>$<salt>$<hash>'],
    [`scrypt$01024$8$1$${salt}$${hash}`, 'N is not a positive decimal integer'],
    [`scrypt$1e3$8$1$${salt}$${hash}`, 'N is not a positive decimal integer'],
    [`scrypt$1024$-8$1$${salt}$${hash}`, 'r is not a positive decimal integer'],
    [`scrypt$1024$8$$${salt}$${hash}`, 'p is not a positive decimal integer'],
    [`scrypt$1000$8$1$${salt}$${hash}`, 'N must be a power of two from 2^10 to 2^20'],
    [`scrypt$${2 ** 30}$8$1$${salt}$${hash}`, 'N must be a power of two from 2^10 to 2^20'],
    [`scrypt$1024$33$1$${salt}$${hash}`, 'r must be an integer from 1 to 32'],
    [`scrypt$1024$8$17$${salt}$${hash}`, 'p must be an integer from 1 to 16'],
    [`scrypt$1048576$32$1$${salt}$${hash}`, 'N * r needs more than 256 MiB'],
    [`scrypt$1024$8$1$${salt}=$${hash}`, 'the salt is not base64url'],
    [`scrypt$1024$8$1$${salt}$${hash.slice(0, -1)}B`, 'the hash is not canonical base64url'],
    [`scrypt$1024$8$1$${b64url(Buffer.alloc(7))}$${hash}`, 'the salt has 7 bytes, expected 8 to 64'],
    [`scrypt$1024$8$1$${salt}$${b64url(Buffer.alloc(15))}`, 'the hash has 15 bytes, expected 16 to 64'],
    [`scrypt$1024$8$1$${salt}$${b64url(Buffer.alloc(65))}`, 'the hash has 65 bytes, expected 16 to 64'],
    ['scrypt$' + 'x'.repeat(600), 'it is longer than 512 characters'],
  ];
  for (const [stored, problem] of cases) {
    await assert.rejects(verifyPassword('whatever', stored as string), (error: unknown) => {
      assert.ok(error instanceof PasswordHashFormatError, `for ${String(stored)}`);
      assert.equal(error.code, 'password_hash_malformed');
      assert.equal(error.problem, problem, `for ${String(stored)}`);
      assert.equal(error.message, `Malformed password hash: ${problem}.`);
      return true;
    });
    assert.throws(() => assertWellFormedPasswordHash(stored), PasswordHashFormatError);
  }
  assert.doesNotThrow(() => assertWellFormedPasswordHash(RFC_STORED));
});

test('an over-long presented password is refused without hashing', async () => {
  const stored = await hashPassword('correct horse battery', FAST);
  assert.equal(await verifyPassword('a'.repeat(2049), stored), false);
});

test('checkPasswordStrength: null for a good password, a sentence for each problem', () => {
  assert.equal(checkPasswordStrength('correct horse battery'), null);
  assert.equal(checkPasswordStrength('abcd'.repeat(3)), null);
  assert.equal(checkPasswordStrength('abcd'.repeat(256)), null);
  assert.equal(checkPasswordStrength(''), 'The password must be at least 12 characters long; it has 0.');
  assert.equal(checkPasswordStrength('short pw 11'), 'The password must be at least 12 characters long; it has 11.');
  // Code points, not UTF-16 units: six emoji are 12 units but 6 characters.
  assert.equal(checkPasswordStrength('\u{1F600}\u{1F601}\u{1F602}\u{1F603}\u{1F604}\u{1F605}'), 'The password must be at least 12 characters long; it has 6.');
  assert.equal(checkPasswordStrength('abcd'.repeat(256) + 'e'), 'The password must be at most 1024 characters long; it has 1025.');
  assert.equal(checkPasswordStrength('aaaaaaaaaaaa'), 'The password must not be one character repeated.');
  assert.equal(checkPasswordStrength('abcabcabcabc'), 'The password must use at least 4 different characters; it uses 3.');
  assert.equal(
    checkPasswordStrength('correct\thorse battery'),
    'The password must not contain control characters (tabs, escapes, line breaks).',
  );
  assert.equal(
    checkPasswordStrength('correct horse\nbattery'),
    'The password must not contain control characters (tabs, escapes, line breaks).',
  );
});
