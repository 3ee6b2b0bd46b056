// Cookies for the admin listener: reading the Cookie request header and writing one
// Set-Cookie value. Grammar from RFC 6265 section 4.1.1:
//
//   cookie-pair  = cookie-name "=" cookie-value
//   cookie-name  = token                         (RFC 9110 tchar)
//   cookie-value = *cookie-octet / ( DQUOTE *cookie-octet DQUOTE )
//   cookie-octet = %x21 / %x23-2B / %x2D-3A / %x3C-5B / %x5D-7E
//
// parseCookies is strict about each pair and lenient about the whole: a malformed
// pair is skipped, the rest still count. The first pair with a name wins, because a
// cookie set for a more specific path comes first (RFC 6265 section 5.4) and a
// later duplicate is more likely injected by a sibling subdomain. Values are
// returned as sent, without percent-decoding: the admin cookies are base64url.
// serializeCookie throws on anything it cannot write exactly: those are bugs in the
// caller, never client input.

/** Cookie headers longer than this are treated as carrying no cookies. */
export const MAX_COOKIE_HEADER_LENGTH = 8192;
/** Pairs past this many are ignored. */
export const MAX_COOKIE_PAIRS = 64;

const Char = {
  tab: 0x09,
  space: 0x20,
  quote: 0x22,
  semicolon: 0x3b,
  equals: 0x3d,
  del: 0x7f,
} as const;

// RFC 9110 tchar minus ALPHA/DIGIT, which are tested by range.
const TOKEN_SYMBOLS = "!#$%&'*+-.^_`|~";

function isTokenCode(code: number): boolean {
  return (
    (code >= 0x30 && code <= 0x39) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x61 && code <= 0x7a) ||
    (code < 0x80 && TOKEN_SYMBOLS.includes(String.fromCharCode(code)))
  );
}

function isCookieOctet(code: number): boolean {
  return code === 0x21 || (code >= 0x23 && code <= 0x2b) || (code >= 0x2d && code <= 0x3a) || (code >= 0x3c && code <= 0x5b) || (code >= 0x5d && code <= 0x7e);
}

function isToken(text: string): boolean {
  if (text.length === 0) return false;
  for (let i = 0; i < text.length; i++) if (!isTokenCode(text.charCodeAt(i))) return false;
  return true;
}

/** The value without its optional quotes, or null when it is not a cookie-value. */
function cookieValueOf(text: string): string | null {
  let start = 0;
  let end = text.length;
  if (end >= 2 && text.charCodeAt(0) === Char.quote && text.charCodeAt(end - 1) === Char.quote) {
    start = 1;
    end -= 1;
  }
  for (let i = start; i < end; i++) if (!isCookieOctet(text.charCodeAt(i))) return null;
  return text.slice(start, end);
}

function isOws(code: number): boolean {
  return code === Char.space || code === Char.tab;
}

/** Name to value for every well-formed pair of a Cookie header; first pair of a name wins. */
export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  if (typeof header !== 'string' || header.length > MAX_COOKIE_HEADER_LENGTH) return cookies;
  let pairs = 0;
  let position = 0;
  while (position <= header.length && pairs < MAX_COOKIE_PAIRS) {
    let end = header.indexOf(';', position);
    if (end === -1) end = header.length;
    let start = position;
    let stop = end;
    while (start < stop && isOws(header.charCodeAt(start))) start++;
    while (stop > start && isOws(header.charCodeAt(stop - 1))) stop--;
    if (stop > start) {
      pairs++;
      const equals = header.indexOf('=', start);
      if (equals !== -1 && equals < stop) {
        const name = header.slice(start, equals);
        const value = cookieValueOf(header.slice(equals + 1, stop));
        if (isToken(name) && value !== null && !cookies.has(name)) cookies.set(name, value);
      }
    }
    position = end + 1;
  }
  return cookies;
}

interface CookieOptions {
  httpOnly: boolean;
  /** Send only over HTTPS. Required for names starting with `__Host-` or `__Secure-`. */
  secure: boolean;
  sameSite: 'Strict' | 'Lax';
  /** Absolute path starting with '/'. */
  path: string;
  /** Lifetime in whole seconds; 0 deletes the cookie; omitted, it lasts until the browser closes. */
  maxAgeSeconds?: number;
}

const MAX_PATH_LENGTH = 1024;

function checkPath(path: string): void {
  if (!path.startsWith('/') || path.length > MAX_PATH_LENGTH) throw new RangeError(`Cookie path must start with '/' and be at most ${MAX_PATH_LENGTH} characters`);
  for (let i = 0; i < path.length; i++) {
    const code = path.charCodeAt(i);
    // RFC 6265 path-value: any CHAR except CTLs or ";".
    if (code < Char.space || code >= Char.del || code === Char.semicolon) throw new RangeError('Cookie path contains a control character, a non-ASCII character or ";"');
  }
}

/**
 * One Set-Cookie header value, e.g.
 * `pc_session=abc; Max-Age=28800; Path=/; HttpOnly; Secure; SameSite=Strict`.
 * Enforces the `__Host-` and `__Secure-` prefix rules (RFC 6265bis section 4.1.3),
 * which browsers otherwise enforce by silently dropping the cookie.
 */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  if (!isToken(name)) throw new TypeError(`Cookie name ${JSON.stringify(name)} is not an RFC 9110 token`);
  if (value.length > MAX_COOKIE_HEADER_LENGTH) throw new RangeError(`Cookie value is longer than ${MAX_COOKIE_HEADER_LENGTH} characters`);
  for (let i = 0; i < value.length; i++) {
    if (!isCookieOctet(value.charCodeAt(i))) throw new TypeError(`Cookie value for ${name} contains a character outside cookie-octet`);
  }
  checkPath(options.path);
  if ((name.startsWith('__Host-') || name.startsWith('__Secure-')) && !options.secure) {
    throw new TypeError(`Cookie ${name} needs the Secure attribute`);
  }
  if (name.startsWith('__Host-') && options.path !== '/') throw new TypeError(`Cookie ${name} needs Path=/`);
  let header = `${name}=${value}`;
  if (options.maxAgeSeconds !== undefined) {
    if (!Number.isSafeInteger(options.maxAgeSeconds) || options.maxAgeSeconds < 0) throw new RangeError('Cookie Max-Age must be a non-negative integer');
    header += `; Max-Age=${options.maxAgeSeconds}`;
  }
  header += `; Path=${options.path}`;
  if (options.httpOnly) header += '; HttpOnly';
  if (options.secure) header += '; Secure';
  header += `; SameSite=${options.sameSite}`;
  return header;
}
