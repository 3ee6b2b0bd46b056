// The one-time bootstrap token: lets the first operator into the dashboard before an
// admin password exists. The server makes one at start (when admin.json is missing)
// and prints it; the first login that presents it consumes it, and after that it is
// refused. It lives only in the process: a restart prints a new one.
//
// Format: `pcb_` + 32 base62 characters (about 190 random bits), so it is easy to
// copy from a terminal and recognisable in logs and leak scanners.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { BOOTSTRAP_TOKEN_KIND } from '../log/secret-kinds.ts';

// Marker, alphabet and length are BOOTSTRAP_TOKEN_KIND, from which every redaction's pattern is derived.
const BOOTSTRAP_TOKEN_MARKER = BOOTSTRAP_TOKEN_KIND.marker;
const BOOTSTRAP_TOKEN_RANDOM_LENGTH = BOOTSTRAP_TOKEN_KIND.length;
const ALPHABET = BOOTSTRAP_TOKEN_KIND.alphabet;
/** 248 = 4 * 62: bytes at or above it would favour the first characters. */
const UNBIASED_BYTE_LIMIT = 248;
/** No token is longer; longer candidates are refused without hashing them. */
const MAX_CANDIDATE_LENGTH = 256;

export interface BootstrapToken {
  /** The token to print. */
  readonly token: string;
  /** True once, for the first candidate equal to the token; false ever after. */
  consume(candidate: string): boolean;
  readonly consumed: boolean;
}

function randomBase62(length: number, random: (size: number) => Buffer): string {
  let out = '';
  // Rejection sampling drops about 3% of bytes; the cap only guards a broken source.
  for (let round = 0; out.length < length; round++) {
    if (round >= 64) throw new Error('random source kept returning unusable bytes');
    for (const byte of random(length * 2)) {
      if (byte < UNBIASED_BYTE_LIMIT && out.length < length) out += ALPHABET.charAt(byte % 62);
    }
  }
  return out;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** `random` exists for tests; crypto.randomBytes by default. */
export function createBootstrapToken(random: (size: number) => Buffer = randomBytes): BootstrapToken {
  const token = BOOTSTRAP_TOKEN_MARKER + randomBase62(BOOTSTRAP_TOKEN_RANDOM_LENGTH, random);
  // Comparing fixed-length digests keeps the comparison constant-time whatever the
  // candidate's length.
  const expected = digest(token);
  let consumed = false;
  return {
    token,
    consume(candidate) {
      if (consumed || typeof candidate !== 'string' || candidate.length > MAX_CANDIDATE_LENGTH) return false;
      if (!timingSafeEqual(digest(candidate), expected)) return false;
      consumed = true;
      return true;
    },
    get consumed() {
      return consumed;
    },
  };
}
