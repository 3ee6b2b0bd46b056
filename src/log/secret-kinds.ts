// Every secret the gateway makes, described once: its marker, the alphabet of
// the characters after it and how many there are. The generators
// (src/keys/api-key.ts, src/keys/admin-token.ts, src/admin/bootstrap-token.ts,
// src/admin/sessions.ts, src/oidc/pkce.ts) build their secrets from these
// descriptions, and the one redaction pattern every sink uses (the logger, the
// audit trail) is derived from them, so a secret cannot have a character the
// pattern does not expect. It lives here, in the lowest folder the generators
// and the sinks can all import.
//
// Marked secrets are recognised anywhere in a text, inside a longer word too:
// the marker followed by at least REDACTION_MIN_CHARS characters of the kind's
// alphabet. The display prefixes shown in listings (`pcl_` and 8 characters,
// `pca_` and 4) are shorter and pass.
//
// Unmarked secrets (session ids, CSRF tokens, single sign-on state, nonce,
// PKCE verifier and binding) are 43 base64url characters, the same shape as a
// SHA-256 digest in base64url or an identity provider's subject id, so no
// pattern can tell them apart from values that must stay readable. They are
// kept out of the sinks by where they travel instead: cookies, headers and the
// query string, none of which is logged (the access log's path stops before
// `?`). Upstream provider keys come from the configuration in any shape and
// are only ever written into the upstream request's headers.

export const BASE62_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** RFC 4648 section 5, the alphabet of Buffer's 'base64url'. */
export const BASE64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

export interface SecretKind {
  /** What the secret is, for messages and tests. */
  readonly name: string;
  /** The characters every secret of the kind starts with; null for an unmarked kind. */
  readonly marker: string | null;
  /** Every character that may follow the marker. */
  readonly alphabet: string;
  /** How many characters follow the marker. */
  readonly length: number;
}

/** `pcl_` + 43 base62 digits of 256 random bits + a 6-digit base62 CRC-32 (api-key.ts). */
export const API_KEY_KIND = { name: 'API key', marker: 'pcl_', alphabet: BASE62_ALPHABET, length: 49 } as const satisfies SecretKind;
/** `pca_` + 32 random bytes in base64url without padding (admin-token.ts). */
export const ADMIN_TOKEN_KIND = { name: 'admin API token', marker: 'pca_', alphabet: BASE64URL_ALPHABET, length: 43 } as const satisfies SecretKind;
/** `pcb_` + 32 unbiased base62 characters, about 190 bits (bootstrap-token.ts). */
export const BOOTSTRAP_TOKEN_KIND = { name: 'bootstrap token', marker: 'pcb_', alphabet: BASE62_ALPHABET, length: 32 } as const satisfies SecretKind;
/** 32 random bytes in base64url: a session id, a CSRF token, single sign-on state, nonce, PKCE verifier and binding. */
export const BROWSER_SECRET_KIND = { name: 'session or single sign-on secret', marker: null, alphabet: BASE64URL_ALPHABET, length: 43 } as const satisfies SecretKind;
/** Random bytes behind a BROWSER_SECRET_KIND secret: ceil(32 * 8 / 6) = 43 characters. */
export const BROWSER_SECRET_BYTES = 32;

export const SECRET_KINDS: readonly SecretKind[] = [API_KEY_KIND, ADMIN_TOKEN_KIND, BOOTSTRAP_TOKEN_KIND, BROWSER_SECRET_KIND];

/**
 * Characters of a marked secret after its marker from which a text is taken to
 * hold it: more than a display prefix shows, far fewer than a secret has, so a
 * secret cut short when pasted is still caught.
 */
export const REDACTION_MIN_CHARS = 16;

/** What a redacted secret becomes. */
export const REDACTED = '[redacted]';

/** A regular expression character class matching exactly the characters of `alphabet`. */
function characterClass(alphabet: string): string {
  let out = '';
  for (const char of new Set(alphabet)) out += /[\\\]^-]/.test(char) ? `\\${char}` : char;
  return `[${out}]`;
}

function escapeLiteral(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The source of the pattern of one marked kind: its marker and at least REDACTION_MIN_CHARS of its alphabet, as many as follow. */
export function redactionSource(kind: SecretKind): string {
  if (kind.marker === null) throw new RangeError(`${kind.name} has no marker: it cannot be recognised by a pattern`);
  return `${escapeLiteral(kind.marker)}${characterClass(kind.alphabet)}{${REDACTION_MIN_CHARS},}`;
}

const PATTERN_SOURCE = SECRET_KINDS.filter((kind) => kind.marker !== null).map(redactionSource).join('|');
/** No `g` flag: test() keeps no state between calls. */
const SECRET_PATTERN = new RegExp(PATTERN_SOURCE);
const SECRET_PATTERN_ALL = new RegExp(PATTERN_SOURCE, 'g');

/** True when `text` holds a marked secret (or enough of one), anywhere. */
export function holdsSecret(text: string): boolean {
  return SECRET_PATTERN.test(text);
}

/** `text` with every marked secret in it replaced by REDACTED. */
export function redactSecretText(text: string): string {
  return SECRET_PATTERN.test(text) ? text.replace(SECRET_PATTERN_ALL, REDACTED) : text;
}
