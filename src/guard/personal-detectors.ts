// Detectors of personal data, each validated beyond its shape: card numbers
// (issuer prefix, length, Luhn), IBANs (country length, mod-97), e-mail
// addresses, phone numbers (E.164, or a national form with a context word
// before it) and US social security numbers (assigned ranges, with separators).
// Each reads a bounded number of characters around its trigger.
import { holdsWord, ibanValid, isAlnum, isDigit, isUpper, isWord, luhnValid, reads, runEnd } from './text-checks.ts';

function isSeparator(code: number): boolean {
  return code === 0x20 || code === 0x2d;
}

/** Digits from `at` with single spaces or dashes between groups (one kind of separator), at most `maxDigits`; null when none. */
function digitGroups(text: string, at: number, maxDigits: number): { digits: string; end: number; groups: number[] } | null {
  let digits = '';
  const groups: number[] = [];
  let separator = -1;
  let i = at;
  let group = 0;
  while (i < text.length && digits.length <= maxDigits) {
    const code = text.charCodeAt(i);
    if (isDigit(code)) {
      digits += text[i];
      group++;
      i++;
      continue;
    }
    if (isSeparator(code) && group > 0 && i + 1 < text.length && isDigit(text.charCodeAt(i + 1)) && (separator === -1 || separator === code)) {
      separator = code;
      groups.push(group);
      group = 0;
      i++;
      continue;
    }
    break;
  }
  if (group > 0) groups.push(group);
  reads.count += i - at + 1;
  return digits.length === 0 ? null : { digits, end: i, groups };
}

/** Card lengths by issuer prefix (the IIN ranges of Visa, Mastercard, American Express, Discover, JCB, Diners Club, UnionPay). */
function cardLengthsOf(digits: string): readonly number[] {
  const two = Number(digits.slice(0, 2));
  const three = Number(digits.slice(0, 3));
  const four = Number(digits.slice(0, 4));
  if (digits[0] === '4') return [13, 16, 19];
  if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return [16];
  if (two === 34 || two === 37) return [15];
  if (four === 6011 || (three >= 644 && three <= 649) || two === 65) return [16, 17, 18, 19];
  if (four >= 3528 && four <= 3589) return [16, 17, 18, 19];
  if ((three >= 300 && three <= 305) || two === 36 || two === 38 || two === 39) return [14, 15, 16, 17, 18, 19];
  if (two === 62) return [16, 17, 18, 19];
  return [];
}

/** A payment card number at a word start: 13 to 19 digits (bare, or grouped by single spaces or dashes), a known issuer prefix and length, Luhn. */
export function cardNumber(text: string, at: number): number {
  const run = digitGroups(text, at, 24);
  if (run === null) return -1;
  const first = run.groups[0] as number;
  // A bare run of digits is the whole number: what follows a space is another number.
  if (first >= 13) {
    if (first > 19 || (first === run.digits.length && run.end < text.length && isWord(text.charCodeAt(run.end)))) return -1;
    const digits = run.digits.slice(0, first);
    return cardLengthsOf(digits).includes(first) && luhnValid(digits) ? at + first : -1;
  }
  if (first !== 4) return -1;
  // Grouped (4 4 4 4, 4 6 5, 4 4 4 4 3): the longest run of whole groups of 3 to 6 digits that is a valid card.
  let best = -1;
  let count = 0;
  let offset = at;
  for (const size of run.groups) {
    if (size < 3 || size > 6) break;
    offset += size + (count === 0 ? 0 : 1);
    count += size;
    if (count > 19) break;
    const digits = run.digits.slice(0, count);
    if (count >= 13 && cardLengthsOf(digits).includes(count) && luhnValid(digits)) best = offset;
  }
  if (best === -1 || (best < text.length && isWord(text.charCodeAt(best)))) return -1;
  return best;
}

/** IBAN lengths by country (ISO 13616 registry, SWIFT). */
const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BR: 29, CH: 21, CR: 22, CY: 28, CZ: 24,
  DE: 22, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23, GL: 18, GR: 27,
  GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LI: 21, LT: 20, LU: 20,
  LV: 21, MC: 27, MD: 24, ME: 22, MK: 19, MR: 27, MT: 31, MU: 30, NL: 18, NO: 15, PK: 24, PL: 28, PS: 29, PT: 25,
  QA: 29, RO: 24, RS: 22, SA: 24, SE: 24, SI: 19, SK: 24, SM: 27, TN: 24, TR: 26, UA: 29, VG: 24, XK: 20,
};

/** An IBAN at a word start: country, check digits, the country's length of [A-Z0-9] (optionally in groups of 4 split by single spaces), mod-97. */
export function iban(text: string, at: number): number {
  if (at + 4 > text.length || !isUpper(text.charCodeAt(at)) || !isUpper(text.charCodeAt(at + 1))) return -1;
  if (!isDigit(text.charCodeAt(at + 2)) || !isDigit(text.charCodeAt(at + 3))) return -1;
  const length = IBAN_LENGTHS[text.slice(at, at + 2)];
  if (length === undefined) return -1;
  let compact = '';
  let i = at;
  let sinceSpace = 0;
  while (i < text.length && compact.length < length) {
    const code = text.charCodeAt(i);
    if (isDigit(code) || isUpper(code)) {
      compact += text[i];
      sinceSpace++;
      i++;
    } else if (code === 0x20 && sinceSpace === 4 && compact.length % 4 === 0) {
      sinceSpace = 0;
      i++;
    } else break;
  }
  reads.count += i - at + 1;
  if (compact.length !== length || (i < text.length && isAlnum(text.charCodeAt(i)))) return -1;
  return ibanValid(compact) ? i : -1;
}

function isLocalCode(code: number): boolean {
  return isAlnum(code) || code === 0x2e || code === 0x5f || code === 0x25 || code === 0x2b || code === 0x2d;
}

function isLabelCode(code: number): boolean {
  return isAlnum(code) || code === 0x2d;
}

/** Top-level "domains" that are file extensions (`icon@2x.png`) or code (`obj@v.js`). */
const NOT_TLDS = new Set(['png', 'jpg', 'jpeg', 'gif', 'svg', 'webp', 'ico', 'js', 'ts', 'mjs', 'cjs', 'css', 'json', 'map', 'txt', 'md', 'html', 'py', 'rb', 'go', 'rs', 'java', 'lock', 'yaml', 'yml']);

/**
 * An e-mail address around the `@` at `at`: a local part of up to 64
 * characters not starting or ending with a dot, a domain of two or more labels
 * whose last is 2 to 24 letters and not a file extension. An scp-style remote
 * (`git@host:path`) is not an address.
 */
export function email(text: string, at: number): { start: number; end: number } | null {
  let start = at;
  while (start > 0 && at - start < 64 && isLocalCode(text.charCodeAt(start - 1))) start--;
  reads.count += at - start + 1;
  if (start > 0 && isLocalCode(text.charCodeAt(start - 1))) return null;
  while (start < at && !isAlnum(text.charCodeAt(start))) start++;
  if (start === at || text.charCodeAt(at - 1) === 0x2e) return null;
  let i = at + 1;
  let labels = 0;
  let lastLabel = -1;
  let end = -1;
  while (i < text.length && i - at < 256) {
    const labelEnd = runEnd(text, i, 63, isLabelCode);
    if (labelEnd === i || text.charCodeAt(i) === 0x2d || text.charCodeAt(labelEnd - 1) === 0x2d) break;
    labels++;
    lastLabel = i;
    end = labelEnd;
    if (text.charCodeAt(labelEnd) !== 0x2e || !isLabelCode(text.charCodeAt(labelEnd + 1))) break;
    i = labelEnd + 1;
  }
  if (labels < 2 || end === -1) return null;
  const tld = text.slice(lastLabel, end);
  if (tld.length < 2 || tld.length > 24 || !/^[A-Za-z]+$/.test(tld) || NOT_TLDS.has(tld.toLowerCase())) return null;
  if (text.charCodeAt(end) === 0x3a && end + 1 < text.length && text.charCodeAt(end + 1) !== 0x20) return null;
  return { start, end };
}

/** Phone digits with single separators (space, dash, dot) and parentheses around one group; at most 15 digits read. */
function phoneRun(text: string, at: number): { digits: number; end: number; separated: boolean } {
  let digits = 0;
  let separated = false;
  let i = at;
  let lastDigit = at;
  while (i < text.length && digits <= 15) {
    const code = text.charCodeAt(i);
    if (isDigit(code)) {
      digits++;
      i++;
      lastDigit = i;
      continue;
    }
    const nextCode = text.charCodeAt(i + 1);
    if ((code === 0x20 || code === 0x2d || code === 0x2e) && (isDigit(nextCode) || nextCode === 0x28)) {
      separated = true;
      i++;
      continue;
    }
    if (code === 0x28 || code === 0x29) {
      separated = true;
      i++;
      continue;
    }
    break;
  }
  reads.count += i - at + 1;
  return { digits, end: lastDigit, separated };
}

/** E.164 at the `+` at `at`: a country code not starting with 0, 8 to 15 digits in all, not glued to a word or a number before. */
export function phoneInternational(text: string, at: number): number {
  if (at > 0) {
    const before = text.charCodeAt(at - 1);
    if (isWord(before) || before === 0x2b || before === 0x29 || before === 0x2e) return -1;
  }
  const first = text.charCodeAt(at + 1);
  if (!isDigit(first) || first === 0x30) return -1;
  const run = phoneRun(text, at + 1);
  if (run.digits < 8 || run.digits > 15) return -1;
  if (run.end < text.length && isWord(text.charCodeAt(run.end))) return -1;
  return run.end;
}

/** Words that say a number is a phone number; within PHONE_CONTEXT characters before it. */
export const PHONE_WORDS = ['phone', 'tel', 'mobile', 'cell', 'fax', 'call me', 'call us', 'whatsapp', 'sms', 'telefon', 'téléphone', 'contact'];
export const PHONE_CONTEXT = 40;

/**
 * A national phone number at a word start or `(`: 7 to 12 digits written with
 * separators (a bare run of digits is an id or a timestamp), and a context word before it.
 */
export function phoneNational(text: string, at: number): number {
  // The tail of a longer number (an address, a date, a version) is not a number of its own.
  if (at > 1 && '.-/:,'.includes(text[at - 1] as string) && isDigit(text.charCodeAt(at - 2))) return -1;
  const run = phoneRun(text, at);
  if (run.digits < 7 || run.digits > 12 || !run.separated) return -1;
  if (run.end < text.length && (isWord(text.charCodeAt(run.end)) || text.charCodeAt(run.end) === 0x2d)) return -1;
  // Dates and versions are digit groups too: 2024-01-15, 10.2.3.4.
  const shape = text.slice(at, run.end);
  if (/^\d{4}[-.]\d{1,2}[-.]\d{1,2}/.test(shape) || /^\d{1,3}(\.\d{1,3}){3}$/.test(shape)) return -1;
  return holdsWord(text, at - PHONE_CONTEXT, at, PHONE_WORDS) ? run.end : -1;
}

/** A US social security number at a word start: AAA-GG-SSSS or with spaces; area 001-899 but 666, group 01-99, serial 0001-9999; two advertised numbers excluded. */
export function usSsn(text: string, at: number): number {
  if (at + 11 > text.length) return -1;
  reads.count += 12;
  const separator = text.charCodeAt(at + 3);
  if (separator !== 0x2d && separator !== 0x20) return -1;
  if (text.charCodeAt(at + 6) !== separator) return -1;
  for (const i of [0, 1, 2, 4, 5, 7, 8, 9, 10]) if (!isDigit(text.charCodeAt(at + i))) return -1;
  const end = at + 11;
  if (end < text.length && (isWord(text.charCodeAt(end)) || (text.charCodeAt(end) === separator && isDigit(text.charCodeAt(end + 1))))) return -1;
  if (at > 0 && (text.charCodeAt(at - 1) === separator || text.charCodeAt(at - 1) === 0x2e) && at > 1 && isDigit(text.charCodeAt(at - 2))) return -1;
  const area = Number(text.slice(at, at + 3));
  const group = Number(text.slice(at + 4, at + 6));
  const serial = Number(text.slice(at + 7, at + 11));
  if (area === 0 || area === 666 || area >= 900 || group === 0 || serial === 0) return -1;
  const compact = text.slice(at, at + 3) + text.slice(at + 4, at + 6) + text.slice(at + 7, at + 11);
  if (compact === '078051120' || compact === '219099999' || compact === '123456789') return -1;
  return end;
}
