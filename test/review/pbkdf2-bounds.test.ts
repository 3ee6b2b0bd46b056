// Review of issue 34 (focus B): the PBKDF2 iteration ceiling is meant to keep a
// tampered admin.json from holding a login (password-hash.ts). PBKDF2's work is
// iterations x ceil(dkLen / 32) HMAC chains for SHA-256, and the stored hash may
// be 64 bytes: the accepted ceiling is 20,000,000 chained HMACs, 11 s on the
// review machine for one login, and the login queue holds 32.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertWellFormedPasswordHash, PasswordHashFormatError } from '../../src/admin/password-hash.ts';

const salt = Buffer.alloc(16, 1).toString('base64url');

test('a stored PBKDF2 hash cannot demand more than 10,000,000 iterations of work: a 64-byte key at the ceiling is refused', () => {
  const stored = `pbkdf2-sha256$10000000$${salt}$${Buffer.alloc(64, 2).toString('base64url')}`;
  assert.throws(() => assertWellFormedPasswordHash(stored), PasswordHashFormatError);
});
