// Detectors of personal data, each validated beyond its shape: card numbers
// (issuer prefix, length, Luhn), IBANs (country length, mod-97), e-mail
// addresses, phone numbers (E.164, or a national form with a context word
// before it) and US social security numbers (assigned ranges, with separators).
// Each reads a bounded number of characters around its trigger.
import { digitValue, gluesToNumber, holdsWord, isAlnum, isDigit, isLower, isUpper, isWord, reads, runEnd, userinfoStart, wordList } from './text-checks.ts';

/** Separators between a card number's groups: space, dash, dot, no-break space (U+00A0), narrow no-break space (U+202F). One kind per number. */
function isCardSeparator(code: number): boolean {
  return code === 0x20 || code === 0x2d || code === 0x2e || code === 0xa0 || code === 0x202f;
}

/**
 * The digit groups read by digitGroups, in tables reused by every call (no
 * string or array is made per number): each digit's value, each group's size,
 * the offset past each group, and where the run ended.
 */
const DIGITS = new Uint8Array(32);
const GROUP_SIZES = new Int32Array(32);
const GROUP_ENDS = new Int32Array(32);
const run = { digits: 0, groups: 0, end: 0 };

/** Digits (ASCII or full-width) from `at` with single separators between groups (one kind), until more than `maxDigits` (at most 31) were read. */
function digitGroups(text: string, at: number, maxDigits: number): void {
  let digits = 0;
  let groups = 0;
  let separator = -1;
  let group = 0;
  let i = at;
  while (i < text.length && digits <= maxDigits) {
    const code = text.charCodeAt(i);
    const value = digitValue(code);
    if (value !== -1) {
      DIGITS[digits++] = value;
      group++;
      i++;
      continue;
    }
    if (group > 0 && isCardSeparator(code) && digitValue(text.charCodeAt(i + 1)) !== -1 && (separator === -1 || separator === code)) {
      separator = code;
      GROUP_SIZES[groups] = group;
      GROUP_ENDS[groups++] = i;
      group = 0;
      i++;
      continue;
    }
    break;
  }
  if (group > 0) {
    GROUP_SIZES[groups] = group;
    GROUP_ENDS[groups++] = i;
  }
  reads.count += i - at + 1;
  run.digits = digits;
  run.groups = groups;
  run.end = i;
}

/** Whether the first `count` digits read pass Luhn (ISO/IEC 7812-1). */
function luhnOfRun(count: number): boolean {
  let sum = 0;
  let double = false;
  for (let i = count - 1; i >= 0; i--) {
    let d = DIGITS[i] as number;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** Bit n set: a card number of n digits with this issuer prefix exists. */
const bits = (...lengths: number[]): number => lengths.reduce((mask, n) => mask | (1 << n), 0);
const VISA = bits(13, 16, 19);
const MASTERCARD = bits(16);
const AMEX = bits(15);
const LONG = bits(16, 17, 18, 19);
const DINERS = bits(14, 15, 16, 17, 18, 19);

/** Card lengths, as a bit set, by the first four digits (the IIN ranges of Visa, Mastercard, American Express, Discover, JCB, Diners Club, UnionPay). */
function cardLengths(d0: number, d1: number, d2: number, d3: number): number {
  const two = d0 * 10 + d1;
  const three = two * 10 + d2;
  const four = three * 10 + d3;
  if (d0 === 4) return VISA;
  if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return MASTERCARD;
  if (two === 34 || two === 37) return AMEX;
  if (four === 6011 || (three >= 644 && three <= 649) || two === 65) return LONG;
  if (four >= 3528 && four <= 3589) return LONG;
  if ((three >= 300 && three <= 305) || two === 36 || two === 38 || two === 39) return DINERS;
  if (two === 62) return LONG;
  return 0;
}

/** The longest card number there is. */
const CARD_MAX = 19;

/**
 * A payment card number at a word start: 13 to 19 digits (ASCII or full-width;
 * bare, or grouped by single spaces, dashes, dots or no-break spaces), a known
 * issuer prefix and length, Luhn.
 */
export function cardNumber(text: string, at: number): number {
  // Bare or grouped, a card number starts with four digits: their issuer prefix is checked before anything more is read.
  const d0 = digitValue(text.charCodeAt(at));
  const d1 = digitValue(text.charCodeAt(at + 1));
  const d2 = digitValue(text.charCodeAt(at + 2));
  const d3 = digitValue(text.charCodeAt(at + 3));
  reads.count += 4;
  if (d0 < 0 || d1 < 0 || d2 < 0 || d3 < 0) return -1;
  const lengths = cardLengths(d0, d1, d2, d3);
  if (lengths === 0) return -1;
  // No more digits are read than the issuer's longest number has (and one more, to see the run go on).
  digitGroups(text, at, 31 - Math.clz32(lengths));
  const first = GROUP_SIZES[0] as number;
  // A bare run of digits is the whole number: what follows a space is another number.
  if (first >= 13) {
    const ends = GROUP_ENDS[0] as number;
    if (first > CARD_MAX || (run.groups === 1 && ends < text.length && gluesToNumber(text.charCodeAt(ends)))) return -1;
    return (lengths & (1 << first)) !== 0 && luhnOfRun(first) ? ends : -1;
  }
  if (first !== 4) return -1;
  // Grouped (4 4 4 4, 4 6 5, 4 4 4 4 3): the longest run of whole groups of 3 to 6 digits that is a valid card.
  let best = -1;
  let count = 0;
  for (let g = 0; g < run.groups; g++) {
    const size = GROUP_SIZES[g] as number;
    if (size < 3 || size > 6) break;
    count += size;
    if (count > CARD_MAX) break;
    if ((lengths & (1 << count)) !== 0 && luhnOfRun(count)) best = GROUP_ENDS[g] as number;
  }
  if (best === -1 || (best < text.length && gluesToNumber(text.charCodeAt(best)))) return -1;
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

/** IBAN lengths indexed by the country's two letters (26 × first + second), 0 where there is none. */
const IBAN_LENGTH_TABLE = (() => {
  const table = new Uint8Array(26 * 26);
  for (const [country, length] of Object.entries(IBAN_LENGTHS)) table[(country.charCodeAt(0) - 0x41) * 26 + country.charCodeAt(1) - 0x41] = length;
  return table;
})();

/** One character of an IBAN into the running mod-97: a digit as itself, a letter (either case) as 10..35. */
function mod97Step(rest: number, code: number): number {
  if (isDigit(code)) return (rest * 10 + (code - 0x30)) % 97;
  return (rest * 100 + ((code | 0x20) - 0x61 + 10)) % 97;
}

function isHexLower(code: number): boolean {
  return isDigit(code) || (code >= 0x61 && code <= 0x66);
}

/** `text` holds four lower-case hex digits, alone, and a space right before `at`. */
function hexGroupBefore(text: string, at: number): boolean {
  if (at < 5 || text.charCodeAt(at - 1) !== 0x20) return false;
  for (let k = at - 5; k < at - 1; k++) if (!isHexLower(text.charCodeAt(k))) return false;
  return at === 5 || !isAlnum(text.charCodeAt(at - 6));
}

/**
 * Whether `text[at, end)` stands among the groups of a hex dump (xxd): a
 * group of four hex digits follows it, or two precede it, or the dump's
 * offset (`00000010: `) does. One number before it ("in 2024 de89 ...") is prose.
 */
function inHexDump(text: string, at: number, end: number): boolean {
  if (hexGroupAfter(text, end)) return true;
  if (hexGroupBefore(text, at) && hexGroupBefore(text, at - 5)) return true;
  if (at < 10 || text.charCodeAt(at - 1) !== 0x20 || text.charCodeAt(at - 2) !== 0x3a) return false;
  for (let k = at - 10; k < at - 2; k++) if (!isHexLower(text.charCodeAt(k))) return false;
  return true;
}

/** A space and four lower-case hex digits, alone, from `at`: the next group of a hex dump. */
function hexGroupAfter(text: string, at: number): boolean {
  if (text.charCodeAt(at) !== 0x20 || at + 5 > text.length) return false;
  for (let k = at + 1; k < at + 5; k++) if (!isHexLower(text.charCodeAt(k))) return false;
  return at + 5 === text.length || !isAlnum(text.charCodeAt(at + 5));
}

/**
 * An IBAN at a word start: country, check digits, the country's length of
 * letters and digits (optionally in groups of 4 split by single spaces),
 * mod-97. Upper case, or lower case throughout when written in groups (a
 * bare lower-case run is too often a hex id) and not among the groups of a hex dump.
 */
export function iban(text: string, at: number): number {
  if (at + 4 > text.length) return -1;
  const c0 = text.charCodeAt(at);
  const c1 = text.charCodeAt(at + 1);
  const lower = isLower(c0);
  const isLetter = lower ? isLower : isUpper;
  if (!isLetter(c0) || !isLetter(c1) || !isDigit(text.charCodeAt(at + 2)) || !isDigit(text.charCodeAt(at + 3))) return -1;
  const length = IBAN_LENGTH_TABLE[((c0 | 0x20) - 0x61) * 26 + (c1 | 0x20) - 0x61] as number;
  if (length === 0) return -1;
  let count = 0;
  let i = at;
  let sinceSpace = 0;
  let spaces = 0;
  // The check moves the first four characters to the end: the rest is read first.
  let rest = 0;
  while (i < text.length && count < length) {
    const code = text.charCodeAt(i);
    if (isDigit(code) || isLetter(code)) {
      if (count >= 4) rest = mod97Step(rest, code);
      count++;
      sinceSpace++;
      i++;
    } else if (code === 0x20 && sinceSpace === 4 && count % 4 === 0) {
      sinceSpace = 0;
      spaces++;
      i++;
    } else break;
  }
  reads.count += i - at + 1;
  if (count !== length || (i < text.length && isAlnum(text.charCodeAt(i)))) return -1;
  if (lower && (spaces === 0 || inHexDump(text, at, i))) return -1;
  for (let k = at; k < at + 4; k++) rest = mod97Step(rest, text.charCodeAt(k));
  return rest === 1 ? i : -1;
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
  // `scheme://user:password@host`: the password before a host, not an address (secret-detectors.ts reports it).
  if (start > 0 && text.charCodeAt(start - 1) === 0x3a && userinfoStart(text, start - 1) !== -1) return null;
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

/** Phone digits (ASCII or full-width) with single separators (space, dash, dot) and parentheses around one group; at most 15 digits read. */
function phoneRun(text: string, at: number): { digits: number; end: number; separated: boolean } {
  let digits = 0;
  let separated = false;
  let i = at;
  let lastDigit = at;
  while (i < text.length && digits <= 15) {
    const code = text.charCodeAt(i);
    if (digitValue(code) !== -1) {
      digits++;
      i++;
      lastDigit = i;
      continue;
    }
    const nextCode = text.charCodeAt(i + 1);
    if ((code === 0x20 || code === 0x2d || code === 0x2e) && (digitValue(nextCode) !== -1 || nextCode === 0x28)) {
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

/** E.164 at the `+` (or full-width `＋`) at `at`: a country code not starting with 0, 8 to 15 digits in all, not glued to a word or a number before. */
export function phoneInternational(text: string, at: number): number {
  if (at > 0) {
    const before = text.charCodeAt(at - 1);
    if (gluesToNumber(before) || before === 0x2b || before === 0xff0b || before === 0x29 || before === 0x2e) return -1;
  }
  const first = digitValue(text.charCodeAt(at + 1));
  if (first <= 0) return -1;
  const phone = phoneRun(text, at + 1);
  if (phone.digits < 8 || phone.digits > 15) return -1;
  if (phone.end < text.length && gluesToNumber(text.charCodeAt(phone.end))) return -1;
  return phone.end;
}

/** Digits from `at`: their count, up to `max` (one more is read). */
function digitsAt(text: string, at: number, max: number): number {
  let n = 0;
  while (n <= max && isDigit(text.charCodeAt(at + n))) n++;
  return n;
}

/** Dates and addresses are digit groups too: `2024-01-15...` (or with dots) and `10.2.3.4` exactly. */
function isDateOrAddress(text: string, at: number, end: number): boolean {
  if (digitsAt(text, at, 4) === 4) {
    const first = text.charCodeAt(at + 4);
    if (first === 0x2d || first === 0x2e) {
      const month = digitsAt(text, at + 5, 2);
      const second = text.charCodeAt(at + 5 + month);
      if (month >= 1 && month <= 2 && (second === 0x2d || second === 0x2e)) {
        const day = digitsAt(text, at + 6 + month, 2);
        if (day >= 1) return true;
      }
    }
  }
  let i = at;
  for (let part = 0; part < 4; part++) {
    const n = digitsAt(text, i, 3);
    if (n < 1 || n > 3) return false;
    i += n;
    if (part < 3) {
      if (text.charCodeAt(i) !== 0x2e) return false;
      i++;
    }
  }
  return i === end;
}

/** Words that say a number is a phone number; within PHONE_CONTEXT characters before it. */
const PHONE_WORD_LIST = ['phone', 'tel', 'mobile', 'cell', 'fax', 'call me', 'call us', 'whatsapp', 'sms', 'telefon', 'téléphone', 'contact', '電話', '携帯'];
export const PHONE_WORDS = wordList(PHONE_WORD_LIST);
export const PHONE_CONTEXT = 40;

/**
 * A national phone number at a word start or `(`: 7 to 12 digits written with
 * separators (a bare run of digits is an id or a timestamp), and a context word before it.
 */
export function phoneNational(text: string, at: number): number {
  // The tail of a longer number (an address, a date, a version) is not a number of its own.
  if (at > 1) {
    const before = text.charCodeAt(at - 1);
    const partOfNumber = before === 0x2e || before === 0x2d || before === 0x2f || before === 0x3a || before === 0x2c;
    if (partOfNumber && digitValue(text.charCodeAt(at - 2)) !== -1) return -1;
  }
  const phone = phoneRun(text, at);
  if (phone.digits < 7 || phone.digits > 12 || !phone.separated) return -1;
  if (phone.end < text.length && (gluesToNumber(text.charCodeAt(phone.end)) || text.charCodeAt(phone.end) === 0x2d)) return -1;
  if (isDateOrAddress(text, at, phone.end)) return -1;
  return holdsWord(text, at - PHONE_CONTEXT, at, PHONE_WORDS) ? phone.end : -1;
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
