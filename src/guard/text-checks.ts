// Validators the detectors share: checksums (Luhn, ISO 13616 mod-97, CRC-32),
// character classes as char-code tests, and an entropy estimate. Pure, no regex.

export function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/** The value of an ASCII or full-width (U+FF10..U+FF19) digit, or -1. */
export function digitValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0xff10 && code <= 0xff19) return code - 0xff10;
  return -1;
}

/** A word character or a full-width digit: what glues to a number and makes it part of a longer one. */
export function gluesToNumber(code: number): boolean {
  return isWord(code) || (code >= 0xff10 && code <= 0xff19);
}

export function isUpper(code: number): boolean {
  return code >= 0x41 && code <= 0x5a;
}

export function isLower(code: number): boolean {
  return code >= 0x61 && code <= 0x7a;
}

export function isAlnum(code: number): boolean {
  return isDigit(code) || isUpper(code) || isLower(code);
}

/** `[A-Za-z0-9_]`, the `\w` of regular expressions. */
export function isWord(code: number): boolean {
  return isAlnum(code) || code === 0x5f;
}

/** `[A-Za-z0-9_-]`, the base64url alphabet. */
export function isBase64Url(code: number): boolean {
  return isWord(code) || code === 0x2d;
}

/** `[A-Za-z0-9+/]`, the standard base64 alphabet without padding. */
export function isBase64(code: number): boolean {
  return isAlnum(code) || code === 0x2b || code === 0x2f;
}

/**
 * Characters the detectors read past the scanner's own pass, for the scan's
 * step count: the scanner resets it, detectors add what they read.
 */
export const reads = { count: 0 };

/** Offset of the first character from `at` on that `accepts` refuses, reading at most `max` characters. */
export function runEnd(text: string, at: number, max: number, accepts: (code: number) => boolean): number {
  const limit = Math.min(text.length, at + max);
  let i = at;
  while (i < limit && accepts(text.charCodeAt(i))) i++;
  reads.count += i - at + 1;
  return i;
}

/** Whether `text` holds `literal` at `at`. */
export function startsAt(text: string, at: number, literal: string): boolean {
  return text.startsWith(literal, at);
}

/** ISO 13616 check: the country and check digits moved to the end, letters as 10..35, the number mod 97 is 1. */
export function ibanValid(compact: string): boolean {
  const moved = compact.slice(4) + compact.slice(0, 4);
  let rest = 0;
  for (let i = 0; i < moved.length; i++) {
    const code = moved.charCodeAt(i);
    if (isDigit(code)) rest = (rest * 10 + (code - 0x30)) % 97;
    else if (isUpper(code)) rest = (rest * 100 + (code - 0x41 + 10)) % 97;
    else return false;
  }
  return rest === 1;
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (IEEE 802.3) of an ASCII string. */
export function crc32(text: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) crc = (CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `value` in base62, left-padded with '0' to `width` digits. */
export function base62(value: number, width: number): string {
  let out = '';
  let rest = value;
  while (rest > 0) {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out.padStart(width, '0');
}

/** Counts per UTF-16 code unit for entropyBits, zero between calls: no table is made per value. */
const ENTROPY_COUNTS = new Uint16Array(65536);

/** Shannon entropy in bits per character of `text[start, end)` (at most 65535 characters). */
export function entropyBits(text: string, start: number, end: number): number {
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    ENTROPY_COUNTS[code] = (ENTROPY_COUNTS[code] as number) + 1;
  }
  const length = end - start;
  let bits = 0;
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    const count = ENTROPY_COUNTS[code] as number;
    if (count === 0) continue;
    const p = count / length;
    bits -= p * Math.log2(p);
    ENTROPY_COUNTS[code] = 0;
  }
  return bits;
}

/** Whether one of `words` occurs in `text[from, to)`, compared case-insensitively. */
export function holdsWord(text: string, from: number, to: number, words: WordList): boolean {
  const start = Math.max(0, from);
  const { list, firsts } = words;
  for (let i = start; i < to; i++) {
    if (firsts[text.charCodeAt(i)] !== 1) continue;
    const first = lowerCode(text.charCodeAt(i));
    for (let w = 0; w < list.length; w++) {
      const word = list[w] as string;
      if (word.charCodeAt(0) !== first || i + word.length > to) continue;
      let k = 1;
      while (k < word.length && lowerCode(text.charCodeAt(i + k)) === word.charCodeAt(k)) k++;
      reads.count += k;
      if (k === word.length) return true;
    }
  }
  reads.count += to - start;
  return false;
}

/** Lower-case words for holdsWord, with the code units (either case) they start with: most positions are passed by with one lookup. */
export interface WordList {
  readonly list: readonly string[];
  readonly firsts: Uint8Array;
}

export function wordList(words: readonly string[]): WordList {
  const firsts = new Uint8Array(65536);
  for (const word of words) {
    firsts[word.charCodeAt(0)] = 1;
    firsts[word.toUpperCase().charCodeAt(0)] = 1;
  }
  return { list: words, firsts };
}

/** A code unit lower-cased: ASCII by arithmetic, the rest as toLowerCase does where that keeps one unit. */
function lowerCode(code: number): number {
  if (code < 128) return isUpper(code) ? code | 0x20 : code;
  const lower = String.fromCharCode(code).toLowerCase();
  return lower.length === 1 ? lower.charCodeAt(0) : code;
}

const USERINFO_CODES = (() => {
  const table = new Uint8Array(128);
  for (let code = 0; code < 128; code++) if (isAlnum(code) || "-._~%!$&'()*+,;=".includes(String.fromCharCode(code))) table[code] = 1;
  return table;
})();

/** Characters of a URL's userinfo (RFC 3986: unreserved, percent-encoded, sub-delims) but `:` and `@`. */
export function isUserinfoCode(code: number): boolean {
  return code < 128 && USERINFO_CODES[code] === 1;
}

const USER_MAX = 64;

/** Where the user of a URL's userinfo starts when the `:` at `colon` follows `scheme://user` (the user may be empty); -1 otherwise. */
export function userinfoStart(text: string, colon: number): number {
  let user = colon;
  while (user > 0 && colon - user < USER_MAX && isUserinfoCode(text.charCodeAt(user - 1))) user--;
  reads.count += colon - user + 1;
  if (user < 4 || text.charCodeAt(user - 1) !== 0x2f || text.charCodeAt(user - 2) !== 0x2f || text.charCodeAt(user - 3) !== 0x3a) return -1;
  return isAlnum(text.charCodeAt(user - 4)) ? user : -1;
}
