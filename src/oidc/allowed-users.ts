// Who admin.oidc admits (docs/sso.md, "Who may sign in"): identities are
// compared exactly, code unit for code unit, with no Unicode case folding and
// no normalisation. toLowerCase() would fold look-alikes into the address
// they imitate: KELVIN SIGN U+212A to "k", LATIN CAPITAL I WITH DOT U+0130 to
// "i" and a combining dot. The one fold is A-Z to a-z in an e-mail's domain
// (domain names are ASCII case-insensitive, RFC 4343); an e-mail's local part
// is compared exactly (RFC 5321 section 2.4: it may be case-sensitive, and
// the provider verified the address as it sends it).
//
// The config side (src/config/oidc-config.ts) admits e-mail entries in ASCII
// only, so a non-ASCII address from a provider never matches an e-mail entry
// at all; sub values and group names may be any printable text, compared exactly.
import type { OidcConfig } from '../config/oidc-config.ts';
import type { VerifiedIdToken } from './id-token.ts';

const MAX_GROUPS = 1000;
const UPPER_A = 0x41;
const UPPER_Z = 0x5a;
const AT = '@';

type AllowRules = Pick<OidcConfig, 'allowedUsers' | 'allowedGroups' | 'groupsClaim'>;

/** `text` with A-Z lowered and every other character as it was (never toLowerCase: it folds look-alikes). */
export function asciiLowerCase(text: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= UPPER_A && code <= UPPER_Z) {
      out += text.slice(from, i) + String.fromCharCode(code + 0x20);
      from = i + 1;
    }
  }
  return from === 0 ? text : out + text.slice(from);
}

/** The local part and the domain of an address (split at its last "@"), or null without one. */
function addressParts(address: string): { local: string; domain: string } | null {
  const at = address.lastIndexOf(AT);
  if (at <= 0 || at === address.length - 1) return null;
  return { local: address.slice(0, at), domain: address.slice(at + 1) };
}

/** Whether `email` is the allow-list entry `allowed`: the local part exact, the domain with A-Z folded. */
export function emailMatches(allowed: string, email: string): boolean {
  const entry = addressParts(allowed);
  const presented = addressParts(email);
  return entry !== null && presented !== null && entry.local === presented.local && asciiLowerCase(entry.domain) === asciiLowerCase(presented.domain);
}

/** The token's email when the provider marks it verified (a boolean true, nothing else). */
function verifiedEmail(token: VerifiedIdToken): string | null {
  const email = token.claims['email'];
  return token.claims['email_verified'] === true && typeof email === 'string' ? email : null;
}

/** allowedUsers (sub, or an email the provider verified) and allowedGroups (the groups claim): either admits. */
export function userAllowed(config: AllowRules, token: VerifiedIdToken): boolean {
  if (config.allowedUsers.includes(token.sub)) return true;
  const email = verifiedEmail(token);
  if (email !== null && config.allowedUsers.some((u) => u.includes(AT) && emailMatches(u, email))) return true;
  const groups = token.claims[config.groupsClaim];
  const list = typeof groups === 'string' ? [groups] : Array.isArray(groups) ? groups.slice(0, MAX_GROUPS) : [];
  return list.some((g) => typeof g === 'string' && config.allowedGroups.includes(g));
}

/**
 * For the log of a refused user: why a likely mistake in the config did not
 * admit them, in this gateway's own words (nothing received is quoted), or
 * undefined. The one case: the verified email differs from an entry only in
 * the letter case (A-Z) of its local part.
 */
export function refusalHint(config: AllowRules, token: VerifiedIdToken): string | undefined {
  const email = verifiedEmail(token);
  if (email === null) return undefined;
  const folded = asciiLowerCase(email);
  const near = config.allowedUsers.some((u) => u.includes(AT) && asciiLowerCase(u) === folded);
  return near
    ? 'the verified email differs from an allowedUsers entry only in the letter case of its local part, which is compared exactly: write the entry as the provider sends the address'
    : undefined;
}
