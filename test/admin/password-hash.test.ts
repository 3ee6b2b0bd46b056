import assert from 'node:assert/strict';
import { pbkdf2Sync } from 'node:crypto';
import { test } from 'node:test';
import {
  assertWellFormedPasswordHash,
  checkPasswordStrength,
  DEFAULT_SCRYPT_PARAMS,
  hashPassword,
  PasswordHashFormatError,
  verifyPassword,
  DEFAULT_PBKDF2_PARAMS,
  derivePbkdf2,
  fipsApprovalProblem,
  passwordHashScheme,
  type Pbkdf2Params,
  type ScryptParams,
} from '../../src/admin/password-hash.ts';

const FAST: ScryptParams = { cost: 1024, blockSize: 8, parallelization: 1 };
const FAST_PBKDF2: Pbkdf2Params = { iterations: 1000 };
const UNKNOWN = 'expected scrypt$<N>$<r>$<p>$<salt>$<hash> or pbkdf2-sha256$<iterations>$<salt>$<hash>';

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
    ['', UNKNOWN],
    [`bcrypt$1024$8$1$${salt}$${hash}`, UNKNOWN],
    [`PBKDF2-SHA256$1000$${salt}$${hash}`, UNKNOWN],
    [`pbkdf2-sha256$1000$${salt}`, 'expected pbkdf2-sha256$<iterations>$<salt>$<hash>'],
    [`pbkdf2-sha256$1000$1$${salt}$${hash}`, 'expected pbkdf2-sha256$<iterations>$<salt>$<hash>'],
    [`pbkdf2-sha256$01000$${salt}$${hash}`, 'the iteration count is not a positive decimal integer'],
    [`pbkdf2-sha256$999$${salt}$${hash}`, 'the iteration count must be an integer from 1000 to 10000000'],
    [`pbkdf2-sha256$10000001$${salt}$${hash}`, 'the iteration count must be an integer from 1000 to 10000000'],
    [`pbkdf2-sha256$1000$${b64url('NaCl')}$${hash}`, 'the salt has 4 bytes, expected 8 to 64'],
    [`pbkdf2-sha256$1000$${b64url(Buffer.alloc(7))}$${hash}`, 'the salt has 7 bytes, expected 8 to 64'],
    // PBKDF2 runs its iterations once per 32-byte block of the key: the ceiling bounds both together.
    [`pbkdf2-sha256$10000000$${salt}$${b64url(Buffer.alloc(64, 2))}`, 'a 64-byte hash at 10000000 iterations is 20000000 iterations of work (one run per 32 bytes), more than 10000000'],
    [`pbkdf2-sha256$5000001$${salt}$${b64url(Buffer.alloc(33, 2))}`, 'a 33-byte hash at 5000001 iterations is 10000002 iterations of work (one run per 32 bytes), more than 10000000'],
    [`pbkdf2-sha256$1000$${salt}$${b64url(Buffer.alloc(15))}`, 'the hash has 15 bytes, expected 16 to 64'],
    [`pbkdf2-sha256$1000$${salt}=$${hash}`, 'the salt is not base64url'],
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

// RFC 7914 section 11, second vector: PBKDF2-HMAC-SHA256(P="Password", S="NaCl", c=80000, dkLen=64).
const PBKDF2_RFC_HASH = Buffer.from(
  '4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56' +
    'a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d',
  'hex',
);

test('the PBKDF2 derivation gives the RFC 7914 PBKDF2-HMAC-SHA256 test vector (its 4-byte salt is below what a stored hash may have)', async () => {
  assert.deepEqual(await derivePbkdf2('Password', Buffer.from('NaCl'), 64, { iterations: 80_000 }), PBKDF2_RFC_HASH);
  assert.notDeepEqual(await derivePbkdf2('Password', Buffer.from('NaCl'), 64, { iterations: 79_999 }), PBKDF2_RFC_HASH);
});

// The vector's parameters with an 8-byte salt, the key computed by node:crypto directly.
const SALT8 = Buffer.from('NaClNaCl');
const PBKDF2_STORED = `pbkdf2-sha256$80000$${b64url(SALT8)}$${b64url(pbkdf2Sync('Password', SALT8, 80_000, 64, 'sha256'))}`;

test('verifies a PBKDF2-HMAC-SHA256 hash (64-byte key, 80,000 iterations, 8-byte salt) written in the stored format', async () => {
  assert.equal(await verifyPassword('Password', PBKDF2_STORED), true);
  assert.equal(await verifyPassword('password', PBKDF2_STORED), false);
  assert.equal(passwordHashScheme(PBKDF2_STORED), 'pbkdf2-sha256');
  assert.equal(passwordHashScheme(RFC_STORED), 'scrypt');
  // One iteration fewer gives another key: the count in the string is the one used.
  assert.equal(await verifyPassword('Password', PBKDF2_STORED.replace('$80000$', '$79999$')), false);
});

test('a 64-byte PBKDF2 hash at half the ceiling (5,000,000 iterations) is well formed: the bound is on iterations x blocks', () => {
  const stored = `pbkdf2-sha256$5000000$${b64url(SALT8)}$${b64url(Buffer.alloc(64, 2))}`;
  assert.doesNotThrow(() => assertWellFormedPasswordHash(stored));
  assert.equal(passwordHashScheme(`pbkdf2-sha256$10000000$${b64url(SALT8)}$${b64url(Buffer.alloc(32, 2))}`), 'pbkdf2-sha256');
});

test('hashPassword with Pbkdf2Params writes pbkdf2-sha256$c$salt$hash with a 16-byte salt and a 32-byte hash, fresh salt each time', async () => {
  const stored = await hashPassword('correct horse battery', FAST_PBKDF2);
  const fields = stored.split('$');
  assert.equal(fields.length, 4);
  assert.deepEqual(fields.slice(0, 2), ['pbkdf2-sha256', '1000']);
  assert.equal(Buffer.from(fields[2] as string, 'base64url').length, 16);
  assert.equal(Buffer.from(fields[3] as string, 'base64url').length, 32);
  assert.equal(await verifyPassword('correct horse battery', stored), true);
  assert.equal(await verifyPassword('correct horse batterY', stored), false);
  assert.notEqual(await hashPassword('correct horse battery', FAST_PBKDF2), stored);
});

test('PBKDF2: the default is 600,000 iterations, and a default-cost hash verifies', async () => {
  assert.deepEqual(DEFAULT_PBKDF2_PARAMS, { iterations: 600_000 });
  const stored = await hashPassword('a long enough password', DEFAULT_PBKDF2_PARAMS);
  assert.match(stored, /^pbkdf2-sha256\$600000\$/);
  assert.equal(await verifyPassword('a long enough password', stored), true);
});

test('PBKDF2: the password is NFC-normalised, and out-of-bounds iterations are a RangeError', async () => {
  const stored = await hashPassword('caf\u00e9 au lait, please', FAST_PBKDF2);
  assert.equal(await verifyPassword('cafe\u0301 au lait, please', stored), true);
  for (const iterations of [999, 10_000_001, 1000.5]) {
    await assert.rejects(hashPassword('x', { iterations }), {
      name: 'RangeError',
      message: 'Invalid PBKDF2 parameters: the iteration count must be an integer from 1000 to 10000000',
    });
  }
});

test('fipsApprovalProblem: scrypt is refused, PBKDF2 with a 16-byte salt approved, a shorter salt refused', async () => {
  assert.equal(fipsApprovalProblem(RFC_STORED), 'it is a scrypt hash, and scrypt is not a FIPS 140-3 approved algorithm');
  assert.equal(fipsApprovalProblem(await hashPassword('correct horse battery', FAST_PBKDF2)), null);
  assert.equal(fipsApprovalProblem(PBKDF2_STORED), 'its salt has 8 bytes, and NIST SP 800-132 asks for at least 16');
  assert.throws(() => fipsApprovalProblem('md5$x'), PasswordHashFormatError);
});
