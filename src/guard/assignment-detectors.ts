// Detectors of secrets by where they stand rather than by their shape: a value
// assigned to a secret's name (`password = ...`, `"api_key": "..."`), the
// credentials of an `Authorization: Basic` header, and a password in a URL's
// userinfo. All report as secret_assignment; each needs an entropy floor or a
// decoding check, since the place alone also holds placeholders and paths.
import { Buffer } from 'node:buffer';
import { entropyBits, isAlnum, isBase64, isBase64Url, isLower, isUpper, isUserinfoCode, isWord, reads, runEnd, startsAt, userinfoStart } from './text-checks.ts';

/** Names whose value is a secret: an identifier ending with one of these (case-insensitive) before `=` or `:`. */
const SECRET_NAMES = ['password', 'passwd', 'pwd', 'secret', 'token', 'api_key', 'apikey', 'api-key', 'access_key', 'private_key', 'auth_key', 'credentials'];
/** The HTTP header whose Basic value is a user and password in base64 (Proxy-Authorization ends with it too). */
const AUTHORIZATION = 'authorization';
/** Every name above ends with one of these letters (either case): most names are passed by before they are read. */
const NAME_LAST = (() => {
  const table = new Uint8Array(128);
  for (const name of [...SECRET_NAMES, AUTHORIZATION]) {
    const last = name.charCodeAt(name.length - 1);
    table[last] = 1;
    table[last & ~0x20] = 1;
  }
  return table;
})();
const NAME_MAX = 64;
const VALUE_MIN = 8;
const VALUE_MAX = 256;
/** Bits per character under which a value is taken for a placeholder or a word, not a secret. */
export const ENTROPY_FLOOR = 3;

const VALUE_CODES = (() => {
  const table = new Uint8Array(128);
  for (let code = 0; code < 128; code++) if (isAlnum(code) || '!#$%&*+-./?@^_~'.includes(String.fromCharCode(code))) table[code] = 1;
  return table;
})();

/**
 * A character of an assigned value: ASCII letters, digits and symbols that are
 * not quotes, brackets or separators; past ASCII, anything but spaces, quotes
 * and punctuation (U+2000..U+206F, the CJK marks, full-width quotes), so
 * `pässwörd-Ωmega-42` is one value.
 */
function isValueCode(code: number): boolean {
  if (code < 128) return VALUE_CODES[code] === 1;
  if (code === 0x85 || code === 0xa0 || code === 0xab || code === 0xbb || code === 0x1680 || code === 0xfeff) return false;
  if ((code >= 0x2000 && code <= 0x206f) || (code >= 0x3000 && code <= 0x3003) || (code >= 0x3008 && code <= 0x3011)) return false;
  return code !== 0xff02 && code !== 0xff07 && code !== 0xff0c;
}

/** Whether `text[nameStart, nameEnd)` ends with `suffix` (lower case), compared with ASCII letters folded. */
function endsWithFolded(text: string, nameStart: number, nameEnd: number, suffix: string): boolean {
  if (nameEnd - nameStart < suffix.length) return false;
  const from = nameEnd - suffix.length;
  for (let k = 0; k < suffix.length; k++) {
    let code = text.charCodeAt(from + k);
    if (isUpper(code)) code |= 0x20;
    if (code !== suffix.charCodeAt(k)) return false;
  }
  return true;
}

/**
 * A file path (`/run/keys/server.key`, `~/.aws/token`, `./secrets/db`): in
 * systemd's `LoadCredential=token:/path` and the like it names where a secret
 * is kept, not the secret. Characters of a path only, at least two slashes.
 */
function isPath(text: string, start: number, end: number): boolean {
  const first = text.charCodeAt(start);
  if (first !== 0x2f && !startsAt(text, start, '~/') && !startsAt(text, start, './') && !startsAt(text, start, '../')) return false;
  let slashes = 0;
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x2f) slashes++;
    else if (!isAlnum(code) && code !== 0x2e && code !== 0x5f && code !== 0x2d && code !== 0x7e) return false;
  }
  return slashes >= 2;
}

/**
 * `password = value`, `"api_key": "value"`, `SECRET: value` at the `=` or `:`
 * at `at`: the value's span when its name ends with a secret's name and the
 * value is 8 to 256 characters with a letter, a digit or symbol, and an
 * entropy of at least ENTROPY_FLOOR bits per character. Calls, references
 * (`$VAR`, `${...}`, `<...>`), identifiers and file paths are not values.
 * `Authorization: Basic <base64>` is one too (see basicCredentials).
 */
export function secretAssignment(text: string, at: number): { start: number; end: number } | null {
  let nameEnd = at;
  while (nameEnd > 0 && (text.charCodeAt(nameEnd - 1) === 0x20 || text.charCodeAt(nameEnd - 1) === 0x22 || text.charCodeAt(nameEnd - 1) === 0x27)) {
    nameEnd--;
    if (at - nameEnd > 3) return null;
  }
  if (nameEnd === 0) return null;
  const last = text.charCodeAt(nameEnd - 1);
  if (last >= 128 || NAME_LAST[last] !== 1) return null;
  let nameStart = nameEnd;
  while (nameStart > 0 && nameEnd - nameStart < NAME_MAX && (isWord(text.charCodeAt(nameStart - 1)) || text.charCodeAt(nameStart - 1) === 0x2d)) nameStart--;
  reads.count += at - nameStart + 1;
  if (nameStart === nameEnd) return null;
  let named = false;
  for (const candidate of SECRET_NAMES) {
    if (endsWithFolded(text, nameStart, nameEnd, candidate)) {
      named = true;
      break;
    }
  }
  let start = at + 1;
  if (text.charCodeAt(at) === 0x3a && text.charCodeAt(start) === 0x3d) start++;
  while (start < text.length && start - at <= 3 && text.charCodeAt(start) === 0x20) start++;
  const quote = text.charCodeAt(start);
  if (quote === 0x22 || quote === 0x27) start++;
  if (!named) return endsWithFolded(text, nameStart, nameEnd, AUTHORIZATION) ? basicCredentials(text, start) : null;
  const first = text.charCodeAt(start);
  if (first === 0x24 || first === 0x25) return null;
  let end = runEnd(text, start, VALUE_MAX + 1, isValueCode);
  // Base64 padding ends a value; an `=` inside it starts another assignment.
  if (text.charCodeAt(end) === 0x3d) end += text.charCodeAt(end + 1) === 0x3d ? 2 : 1;
  if (end < text.length && isValueCode(text.charCodeAt(end))) return null;
  const length = end - start;
  if (length < VALUE_MIN || length > VALUE_MAX) return null;
  const after = text.charCodeAt(end);
  if (after === 0x28 || after === 0x5b || after === 0x7b || after === 0x3c) return null;
  if (!hasLetterAndOther(text, start, end) || isPath(text, start, end)) return null;
  return entropyBits(text, start, end) >= ENTROPY_FLOOR ? { start, end } : null;
}

/** A letter (ASCII or past ASCII) and a character that is neither a letter nor `.` or `_`: a word or a dotted name is not a secret. */
function hasLetterAndOther(text: string, start: number, end: number): boolean {
  let letter = false;
  let other = false;
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    if (isUpper(code) || isLower(code) || code >= 128) letter = true;
    else if (code !== 0x2e && code !== 0x5f) other = true;
  }
  return letter && other;
}

const BASIC_MAX = 1024;

/**
 * The value of an Authorization header from `at`: `Basic ` and base64 (padded
 * to a multiple of 4) that decodes to printable UTF-8 holding a `:` with a
 * password after it. The span is the base64, which carries the password as
 * plainly as the text would.
 */
function basicCredentials(text: string, at: number): { start: number; end: number } | null {
  if (!startsAt(text, at, 'Basic ') && !startsAt(text, at, 'basic ') && !startsAt(text, at, 'BASIC ')) return null;
  let start = at + 6;
  while (text.charCodeAt(start) === 0x20 && start - at < 10) start++;
  let end = runEnd(text, start, BASIC_MAX + 1, isBase64);
  while (text.charCodeAt(end) === 0x3d && end - start < BASIC_MAX) end++;
  reads.count += end - start;
  const length = end - start;
  if (length < 8 || length > BASIC_MAX || length % 4 !== 0 || (end < text.length && isBase64Url(text.charCodeAt(end)))) return null;
  const decoded = Buffer.from(text.slice(start, end), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1 || colon === decoded.length - 1) return null;
  for (let i = 0; i < decoded.length; i++) {
    const code = decoded.charCodeAt(i);
    if (code < 0x20 || code === 0x7f || code === 0xfffd) return null;
  }
  return { start, end };
}

const URL_PASSWORD_MIN = 6;
/**
 * The entropy floor of a password in a URL: lower than ENTROPY_FLOOR, since
 * `scheme://user:password@host` says what the value is where an assignment's
 * name only suggests it; a word (`password`) still fails the letter-and-other test.
 */
export const URL_PASSWORD_ENTROPY_FLOOR = 2.5;

/**
 * A password in a URL (`https://user:pa55w0rd@host`, `redis://:s3cret-42@db`)
 * at the `:` at `at` after the user: its span up to the `@`, with at least 6
 * characters, a letter and a digit or symbol, and URL_PASSWORD_ENTROPY_FLOOR.
 * Reported as secret_assignment: it is a value assigned to a user, and no new
 * detector name is needed for operators to configure it.
 */
export function urlPassword(text: string, at: number): { start: number; end: number } | null {
  if (!isUserinfoCode(text.charCodeAt(at + 1)) || text.charCodeAt(at + 1) === 0x24) return null;
  if (userinfoStart(text, at) === -1) return null;
  const start = at + 1;
  const limit = Math.min(text.length, start + VALUE_MAX + 1);
  let end = start;
  while (end < limit && (isUserinfoCode(text.charCodeAt(end)) || text.charCodeAt(end) === 0x3a)) end++;
  reads.count += end - start + 1;
  if (text.charCodeAt(end) !== 0x40 || !isAlnum(text.charCodeAt(end + 1))) return null;
  if (end - start < URL_PASSWORD_MIN || end - start > VALUE_MAX || !hasLetterAndOther(text, start, end)) return null;
  return entropyBits(text, start, end) >= URL_PASSWORD_ENTROPY_FLOOR ? { start, end } : null;
}
