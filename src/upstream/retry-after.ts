// An upstream's `Retry-After` (and the `retry-after-ms` variant), read in one
// place: the dispatcher asks how long to wait before the next attempt, and a
// 429 passed on to the client repeats what the upstream said when it was valid.
//
// https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3
//   Retry-After = HTTP-date / delay-seconds
//   delay-seconds = 1*DIGIT
// Only those two forms: no fraction ("1.5"), no sign, no exponent. A value
// that is neither is ignored, as if the upstream had sent none.

/** Longest header value worth parsing; anything longer is garbage. */
const MAX_HEADER_CHARS = 64;
/** Longest delay-seconds repeated to a client (about 31 years); more is no
 * usable answer, and some clients put the value into a 32-bit timer. */
const MAX_CLIENT_SECONDS_DIGITS = 9;
/** Longest retry-after-ms repeated to a client. */
const MAX_CLIENT_MS_DIGITS = 12;
/** What a client is told when the upstream said nothing usable: LangChain
 * throws a 429 at once unless Retry-After is present. */
const CLIENT_FALLBACK = '1';

const CHAR_0 = 0x30;
const CHAR_9 = 0x39;
const CHAR_DOT = 0x2e;

const RetryAfterForm = {
  DelaySeconds: 'delay-seconds',
  HttpDate: 'http-date',
} as const;
type RetryAfterForm = (typeof RetryAfterForm)[keyof typeof RetryAfterForm];

type RetryAfter =
  | { form: typeof RetryAfterForm.DelaySeconds; seconds: number; digits: string }
  | { form: typeof RetryAfterForm.HttpDate; epochMs: number };

/**
 * The one `Retry-After` parser: delay-seconds or an HTTP-date, after trimming
 * the optional whitespace around a field value; undefined for anything else.
 * `now` (epoch ms) only settles the century of an RFC 850 date.
 */
export function readRetryAfter(value: string | null | undefined, now: number): RetryAfter | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_HEADER_CHARS) return undefined;
  if (isDigits(trimmed)) return { form: RetryAfterForm.DelaySeconds, seconds: Number(trimmed), digits: trimmed };
  const epochMs = parseHttpDate(trimmed, now);
  return epochMs === undefined ? undefined : { form: RetryAfterForm.HttpDate, epochMs };
}

/** `Retry-After` in milliseconds from `now` (epoch ms), or undefined when the
 * value is neither delay-seconds nor an HTTP-date. A date in the past is 0. */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  const parsed = readRetryAfter(value, now);
  if (parsed === undefined) return undefined;
  return parsed.form === RetryAfterForm.DelaySeconds ? parsed.seconds * 1000 : Math.max(0, parsed.epochMs - now);
}

/**
 * The `retry-after` a client gets on a 429 passed on from the upstream:
 * delay-seconds as the upstream sent them, a date as IMF-fixdate (RFC 9110
 * section 5.6.7: "a sender MUST generate [HTTP-date] in the IMF-fixdate
 * format", so an obsolete RFC 850 or asctime date is rewritten, same instant),
 * and '1' when the upstream said nothing usable.
 */
export function retryAfterForClient(value: string | null, now: number = Date.now()): string {
  const parsed = readRetryAfter(value, now);
  if (parsed === undefined) return CLIENT_FALLBACK;
  if (parsed.form === RetryAfterForm.HttpDate) return new Date(parsed.epochMs).toUTCString();
  return parsed.digits.length > MAX_CLIENT_SECONDS_DIGITS ? CLIENT_FALLBACK : parsed.digits;
}

/** `retry-after-ms` (OpenAI's and Azure's precise variant, no RFC): milliseconds,
 * fractions accepted as the openai SDK does. */
export function parseRetryAfterMs(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_HEADER_CHARS) return undefined;
  const ms = decimalNumber(trimmed);
  return ms === undefined ? undefined : Math.ceil(ms);
}

/** The `retry-after-ms` a client gets: whole milliseconds as sent, or none. */
export function retryAfterMsForClient(value: string | null): string | null {
  if (value === null) return null;
  const trimmed = value.trim();
  return trimmed.length > 0 && trimmed.length <= MAX_CLIENT_MS_DIGITS && isDigits(trimmed) ? trimmed : null;
}

/** What the upstream asked for, `retry-after-ms` first (it is the more
 * precise of the two when both are sent), or undefined when it said nothing usable. */
export function upstreamRetryDelay(retryAfter: string | null | undefined, retryAfterMs: string | null | undefined, now: number): number | undefined {
  return parseRetryAfterMs(retryAfterMs) ?? parseRetryAfter(retryAfter, now);
}

function isDigits(text: string): boolean {
  if (text.length === 0) return false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < CHAR_0 || code > CHAR_9) return false;
  }
  return true;
}

/** Digits with at most one dot between digits, as a finite number. */
function decimalNumber(text: string): number | undefined {
  let dots = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === CHAR_DOT) {
      if (dots > 0 || i === 0 || i === text.length - 1) return undefined;
      dots++;
    } else if (code < CHAR_0 || code > CHAR_9) return undefined;
  }
  const number = Number(text);
  return Number.isFinite(number) ? number : undefined;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH = MONTHS.join('|');
const DAY_NAME = 'Mon|Tue|Wed|Thu|Fri|Sat|Sun';
const DAY_NAME_L = 'Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday';
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
// https://www.rfc-editor.org/rfc/rfc9110#section-5.6.7 (HTTP-date is case-sensitive)
//   IMF-fixdate  = day-name "," SP day SP month SP year SP time-of-day SP GMT
const IMF_FIXDATE = new RegExp(`^(?:${DAY_NAME}), (\\d{2}) (${MONTH}) (\\d{4}) ${TIME} GMT$`);
//   rfc850-date  = day-name-l "," SP day "-" month "-" 2DIGIT SP time-of-day SP GMT
const RFC850_DATE = new RegExp(`^(?:${DAY_NAME_L}), (\\d{2})-(${MONTH})-(\\d{2}) ${TIME} GMT$`);
//   asctime-date = day-name SP month SP ( 2DIGIT / ( SP DIGIT ) ) SP time-of-day SP year
const ASCTIME_DATE = new RegExp(`^(?:${DAY_NAME}) (${MONTH}) (\\d{2}| \\d) ${TIME} (\\d{4})$`);

/** "A recipient that parses a timestamp value in an HTTP field MUST accept all
 * three HTTP-date formats." Epoch ms, or undefined for anything else or a
 * date that does not exist (31 Feb, 25:00:00). */
function parseHttpDate(text: string, now: number): number | undefined {
  let m = IMF_FIXDATE.exec(text);
  if (m !== null) return utc(Number(m[3]), m[2], Number(m[1]), m[4], m[5], m[6]);
  m = RFC850_DATE.exec(text);
  if (m !== null) return utc(rfc850Year(Number(m[3]), now), m[2], Number(m[1]), m[4], m[5], m[6]);
  m = ASCTIME_DATE.exec(text);
  if (m !== null) return utc(Number(m[6]), m[1], Number((m[2] ?? '').trim()), m[3], m[4], m[5]);
  return undefined;
}

/** "Recipients of a timestamp value in rfc850-date format, which uses a
 * two-digit year, MUST interpret a timestamp that appears to be more than 50
 * years in the future as representing the most recent year in the past that
 * had the same last two digits." */
function rfc850Year(twoDigits: number, now: number): number {
  const current = new Date(now).getUTCFullYear();
  let year = current - (current % 100) + twoDigits;
  if (year > current + 50) year -= 100;
  else if (year + 100 <= current + 50) year += 100;
  return year;
}

function utc(year: number, monthName: string | undefined, day: number, h: string | undefined, m: string | undefined, s: string | undefined): number | undefined {
  const month = MONTHS.indexOf(monthName ?? '');
  const hour = Number(h);
  const minute = Number(m);
  // time-of-day allows second 60, a leap second.
  const second = Number(s);
  if (month < 0 || day < 1 || hour > 23 || minute > 59 || second > 60) return undefined;
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: the latter maps years 0-99 to 1900-1999.
  date.setUTCFullYear(year, month, day);
  if (date.getUTCDate() !== day) return undefined;
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}
