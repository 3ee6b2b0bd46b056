// API key format: pure functions, no I/O besides the random source.
//
//   pcl_ 7cJq0V3...(43 chars)... 0aZ9Kx
//   ^^^^ ^^^^^^^^^^^^^^^^^^^^^^^ ^^^^^^
//   |    random part             checksum
//   marker
//
// - Marker `pcl_` makes a key recognisable in logs, config files and leak scanners.
// - Random part: 32 bytes (256 bits) from crypto.randomBytes, read as one big-endian
//   integer and written in base62 (0-9, A-Z, a-z) as exactly 43 digits, left-padded
//   with '0'. 62^43 > 2^256, so the mapping is one-to-one and keeps all 256 bits.
// - Checksum: CRC-32 (IEEE) of the 43 ASCII characters of the random part, written in
//   base62 as exactly 6 digits (62^6 > 2^32). CRC-32 detects every error confined to
//   32 consecutive bits, so any single mistyped character is caught; a scanner can tell
//   a real key from a look-alike without asking the server (the same idea as GitHub's
//   token format).
// - Whole key: 4 + 43 + 6 = 53 characters, matched by /\bpcl_[0-9A-Za-z]{49}\b/.
//   The marker, alphabet and length are API_KEY_KIND (src/log/secret-kinds.ts),
//   from which every redaction's pattern is derived.
// Documented for operators in docs/keys.md.

import { createHash, randomBytes } from 'node:crypto';
import { API_KEY_KIND, BASE62_ALPHABET } from '../log/secret-kinds.ts';

export const API_KEY_MARKER = API_KEY_KIND.marker;
const API_KEY_RANDOM_LENGTH = 43;
const API_KEY_CHECKSUM_LENGTH = API_KEY_KIND.length - API_KEY_RANDOM_LENGTH;
export const API_KEY_LENGTH = API_KEY_MARKER.length + API_KEY_KIND.length;
/** Characters of the random part shown by keyDisplayPrefix: enough to tell keys apart, about 48 of 256 bits. */
export const API_KEY_DISPLAY_CHARS = 8;

const RANDOM_BYTES = 32;

const Char = {
  digit0: 0x30,
  digit9: 0x39,
  upperA: 0x41,
  upperZ: 0x5a,
  lowerA: 0x61,
  lowerZ: 0x7a,
} as const;

function isBase62Code(code: number): boolean {
  return (
    (code >= Char.digit0 && code <= Char.digit9) ||
    (code >= Char.upperA && code <= Char.upperZ) ||
    (code >= Char.lowerA && code <= Char.lowerZ)
  );
}

const CRC32_TABLE = buildCrc32Table();

function buildCrc32Table(): Uint32Array {
  // Reflected polynomial of CRC-32/ISO-HDLC, the CRC of zip, PNG and zlib.crc32
  // (which only exists from Node 20.15, later than our minimum).
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let bit = 0; bit < 8; bit++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}

/** CRC-32 of the characters of an ASCII string (each char code is one byte). */
export function crc32OfAscii(text: string, start = 0, end = text.length): number {
  let crc = 0xffffffff;
  for (let i = start; i < end; i++) {
    crc = (CRC32_TABLE[(crc ^ text.charCodeAt(i)) & 0xff] ?? 0) ^ (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** `value` (a non-negative integer below 62^width) as exactly `width` base62 digits. */
function base62OfNumber(value: number, width: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = BASE62_ALPHABET.charAt(rest % 62) + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

function base62OfBytes(bytes: Buffer, width: number): string {
  let rest = BigInt('0x' + bytes.toString('hex'));
  const digits: string[] = new Array<string>(width);
  for (let i = width - 1; i >= 0; i--) {
    digits[i] = BASE62_ALPHABET.charAt(Number(rest % 62n));
    rest /= 62n;
  }
  return digits.join('');
}

function checksumOf(randomPart: string): string {
  return base62OfNumber(crc32OfAscii(randomPart), API_KEY_CHECKSUM_LENGTH);
}

/** A fresh key: marker, 256 random bits in base62, CRC-32 checksum. `random` exists for tests; crypto.randomBytes by default. */
export function generateApiKey(random: (size: number) => Buffer = randomBytes): string {
  const bytes = random(RANDOM_BYTES);
  if (bytes.length !== RANDOM_BYTES) throw new RangeError(`random source returned ${bytes.length} bytes, expected ${RANDOM_BYTES}`);
  const randomPart = base62OfBytes(bytes, API_KEY_RANDOM_LENGTH);
  return API_KEY_MARKER + randomPart + checksumOf(randomPart);
}

/**
 * True when `s` has the marker, the exact length, only base62 characters and a
 * matching checksum. Cheap and free of I/O, so the server can refuse garbage
 * before hashing it or looking anything up.
 */
export function isWellFormedApiKey(s: string): boolean {
  if (typeof s !== 'string' || s.length !== API_KEY_LENGTH || !s.startsWith(API_KEY_MARKER)) return false;
  for (let i = API_KEY_MARKER.length; i < API_KEY_LENGTH; i++) {
    if (!isBase62Code(s.charCodeAt(i))) return false;
  }
  const checksumStart = API_KEY_LENGTH - API_KEY_CHECKSUM_LENGTH;
  const expected = base62OfNumber(crc32OfAscii(s, API_KEY_MARKER.length, checksumStart), API_KEY_CHECKSUM_LENGTH);
  return s.endsWith(expected);
}

/**
 * SHA-256 of the whole key, lowercase hex: what keys.json stores.
 *
 * Why not scrypt/argon2: slow hashes protect low-entropy secrets (passwords) against
 * guessing. A key carries 256 random bits, so no amount of hashing speed makes
 * guessing feasible, while a slow hash would cost tens of milliseconds of CPU on
 * every request and let anyone with well-formed garbage keys burn that CPU.
 * A plain hash still keeps a leaked keys.json from being usable as keys.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/**
 * The marker plus the first characters of the random part, e.g. `pcl_AbC1x9Qz`:
 * safe to show in listings and logs (it reveals about 48 of 256 bits) and enough for an
 * operator to match a listed key with the one in their environment.
 */
export function keyDisplayPrefix(key: string): string {
  return key.slice(0, API_KEY_MARKER.length + API_KEY_DISPLAY_CHARS);
}
