// admin.oidc: single sign-on to the dashboard with OpenID Connect
// (docs/sso.md). Parsed like every section: each mistake is an issue naming
// its path, all collected, so check-config reports them in one pass.
import { join, type Checker, type Obj } from './config-checker.ts';

export interface OidcConfig {
  /** The provider's Issuer Identifier, exactly as its discovery document states it. */
  issuer: string;
  clientId: string;
  /** Where the client secret is (a confidential client, client_secret_basic); both null: a public client with PKCE only. */
  clientSecretFile: string | null;
  clientSecretEnv: string | null;
  /** The external URL of this listener's /sso/callback, registered with the provider. */
  redirectUrl: string;
  scopes: string[];
  /** The ID token's aud must hold one of these; default [clientId]. */
  audiences: string[];
  /**
   * sub values, or emails the provider marks email_verified (an entry with "@"), kept
   * exactly as written: src/oidc/allowed-users.ts compares them without Unicode case folding.
   */
  allowedUsers: string[];
  /** Group names looked up in the `groupsClaim` claim (compared exactly). */
  allowedGroups: string[];
  groupsClaim: string;
  /** The sign-in button's text. */
  label: string;
  /** false: POST /api/login is refused (403 password_login_disabled); SSO is the only way in. */
  passwordLogin: boolean;
  /** Bound on each request to the provider (discovery, keys, token endpoint). */
  timeoutMs: number;
}

const SETTINGS = [
  'issuer',
  'clientId',
  'clientSecretFile',
  'clientSecretEnv',
  'redirectUrl',
  'scopes',
  'audiences',
  'allowedUsers',
  'allowedGroups',
  'groupsClaim',
  'label',
  'passwordLogin',
  'timeoutMs',
];
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** RFC 6749 section 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]{1,64}$/;
const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '[::1]'];
const MAX_LIST = 256;
const MAX_ITEM_LENGTH = 256;
const MAX_LABEL_LENGTH = 64;
export const DEFAULT_OIDC_SCOPES = ['openid', 'profile', 'email'];
export const SSO_CALLBACK_PATH = '/sso/callback';

/**
 * `hosts`: the names the admin listener answers for (loopback names, admin.host,
 * admin.allowedHosts): the redirect URL must name one, or the callback would be refused.
 */
export function parseOidc(c: Checker, value: unknown, hosts: readonly string[]): OidcConfig | null {
  const at = 'admin.oidc';
  const o = c.object(withoutInlineSecret(c, value, at), at, SETTINGS);
  if (o === undefined) return null;
  const issuer = parseIssuer(c, o['issuer'], join(at, 'issuer'));
  const clientId = c.string(o['clientId'], join(at, 'clientId')) ?? '';
  if (clientId.length > MAX_ITEM_LENGTH) c.report(join(at, 'clientId'), { code: 'invalid_value', message: `must be at most ${MAX_ITEM_LENGTH} characters` });
  const clientSecretFile = c.optional(o, 'clientSecretFile', at, null, (v, vat) => c.string(v, vat));
  const clientSecretEnv = c.optional(o, 'clientSecretEnv', at, null, (v, vat) => {
    const name = c.string(v, vat);
    if (name === undefined || ENV_NAME.test(name)) return name;
    return c.report(vat, { code: 'invalid_value', message: 'must be the NAME of an environment variable that holds the client secret' });
  });
  if (clientSecretFile !== null && clientSecretEnv !== null) c.report(join(at, 'clientSecretFile'), { code: 'conflict', message: 'set clientSecretFile or clientSecretEnv, not both' });
  const redirectUrl = parseRedirectUrl(c, o['redirectUrl'], join(at, 'redirectUrl'), hosts);
  const scopes = o['scopes'] === undefined ? [...DEFAULT_OIDC_SCOPES] : stringList(c, o['scopes'], join(at, 'scopes'), SCOPE_TOKEN, 'a scope token (no spaces or quotes)');
  if (o['scopes'] !== undefined && !scopes.includes('openid')) c.report(join(at, 'scopes'), { code: 'invalid_value', message: 'must include "openid" (without it the provider sends no ID token)' });
  const audiences = o['audiences'] === undefined ? [clientId] : stringList(c, o['audiences'], join(at, 'audiences'));
  if (o['audiences'] !== undefined && audiences.length === 0) c.report(join(at, 'audiences'), { code: 'invalid_value', message: 'must name at least one audience (or leave it out: the client id)' });
  // Kept exactly as written: no case folding, no normalisation (src/oidc/allowed-users.ts compares them exactly).
  const allowedUsers = o['allowedUsers'] === undefined ? [] : stringList(c, o['allowedUsers'], join(at, 'allowedUsers'), undefined, undefined, allowedUserProblem);
  const allowedGroups = o['allowedGroups'] === undefined ? [] : stringList(c, o['allowedGroups'], join(at, 'allowedGroups'), undefined, undefined, invisibleCharacter);
  if (allowedUsers.length === 0 && allowedGroups.length === 0) {
    c.report(join(at, 'allowedUsers'), {
      code: 'required',
      message: 'list who may sign in: allowedUsers (sub values, or email addresses the provider marks verified), allowedGroups (groups in the groupsClaim claim), or both; with neither, no one could sign in (admitting every account of the provider is not offered)',
    });
  }
  const groupsClaim = c.optional(o, 'groupsClaim', at, 'groups', (v, vat) => {
    const name = c.string(v, vat);
    if (name === undefined || name.length <= 64) return name;
    return c.report(vat, { code: 'invalid_value', message: 'must be a claim name of at most 64 characters' });
  });
  const label = c.optional(o, 'label', at, 'Sign in with single sign-on', (v, vat) => {
    const text = c.string(v, vat);
    if (text === undefined || (text.length <= MAX_LABEL_LENGTH && !/[\u0000-\u001f\u007f]/.test(text))) return text;
    return c.report(vat, { code: 'invalid_value', message: `must be at most ${MAX_LABEL_LENGTH} characters without control characters` });
  });
  return {
    issuer,
    clientId,
    clientSecretFile,
    clientSecretEnv,
    redirectUrl,
    scopes,
    audiences,
    allowedUsers,
    allowedGroups,
    groupsClaim,
    label,
    passwordLogin: c.optional(o, 'passwordLogin', at, true, (v, vat) => c.boolean(v, vat)),
    timeoutMs: c.int(o, 'timeoutMs', at, 10_000, 500, 60_000),
  };
}

/**
 * `clientSecret` is not a setting: the secret never goes in the config. Named
 * with what to do instead (not as an unknown setting), and never quoted.
 */
function withoutInlineSecret(c: Checker, value: unknown, at: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, 'clientSecret')) return value;
  c.report(join(at, 'clientSecret'), {
    code: 'invalid_value',
    message: 'the client secret itself is not accepted in the config: put it in a file and name the file in clientSecretFile, or in an environment variable and name the variable in clientSecretEnv',
  });
  const { clientSecret: _secret, ...rest } = value as Obj;
  return rest;
}

/** http is allowed only for a provider (or a redirect) on this machine: a test or a local provider; anything else is https. */
export function isLoopbackUrl(url: URL): boolean {
  return LOOPBACK_HOSTS.includes(url.hostname);
}

function parseIssuer(c: Checker, value: unknown, at: string): string {
  const issuer = c.string(value, at);
  if (issuer === undefined) return '';
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return c.report(at, { code: 'invalid_value', message: 'must be the provider\'s issuer URL, like "https://login.example.com/realms/main"' }) ?? issuer;
  }
  // Discovery section 2: an https URL with no query or fragment (http only for a provider on this machine).
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackUrl(url))) {
    c.report(at, { code: 'invalid_value', message: 'must be an https:// URL (http:// only for a provider on 127.0.0.1, localhost or [::1])' });
  } else if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '' || issuer.includes('?') || issuer.includes('#')) {
    c.report(at, { code: 'invalid_value', message: 'must have no query, fragment or credentials' });
  } else if (issuer.length > 2048) {
    c.report(at, { code: 'invalid_value', message: 'must be at most 2048 characters' });
  }
  return issuer;
}

function parseRedirectUrl(c: Checker, value: unknown, at: string, hosts: readonly string[]): string {
  const text = c.string(value, at);
  if (text === undefined) return '';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return c.report(at, { code: 'invalid_value', message: `must be the external URL of this admin listener's ${SSO_CALLBACK_PATH}, like "https://gateway.example.com${SSO_CALLBACK_PATH}"` }) ?? text;
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackUrl(url))) {
    c.report(at, { code: 'invalid_value', message: 'must be an https:// URL (http:// only on 127.0.0.1, localhost or [::1])' });
  } else if (url.pathname !== SSO_CALLBACK_PATH || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    c.report(at, { code: 'invalid_value', message: `must end in ${SSO_CALLBACK_PATH}, with no query, fragment or credentials` });
  } else if (!hosts.includes(url.hostname.toLowerCase())) {
    c.report(at, {
      code: 'invalid_value',
      message: `names host ${url.hostname}, which the admin listener does not answer for; add it to admin.allowedHosts (answered now: ${hosts.join(', ')})`,
    });
  }
  return text;
}

/** `problem`: what else is wrong with an item of the right length and shape, in words, or null. */
function stringList(
  c: Checker,
  value: unknown,
  at: string,
  shape?: RegExp,
  what = `a non-empty string of at most ${MAX_ITEM_LENGTH} characters`,
  problem: (item: string) => string | null = () => null,
): string[] {
  if (!Array.isArray(value) || value.length > MAX_LIST) {
    return c.report(at, { code: 'not_array', message: `must be an array of at most ${MAX_LIST} strings` }) ?? [];
  }
  const list: string[] = [];
  value.forEach((item: unknown, i: number) => {
    const ok = typeof item === 'string' && item.length > 0 && item.length <= MAX_ITEM_LENGTH && (shape === undefined || shape.test(item));
    const issue = ok ? problem(item) : null;
    if (ok && issue === null) list.push(item);
    else c.report(`${at}[${i}]`, { code: 'invalid_value', message: issue ?? `must be ${what}` });
  });
  return list;
}

/**
 * Characters no identity should hold: control, format (zero-width, bidi),
 * surrogate, private-use, line and paragraph separators, and every space but
 * U+0020 (group names such as "Gateway Admins" have those, though not at either end).
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Zl}\p{Zp}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/u;
/** What an e-mail entry may hold: printable ASCII, no space. */
const EMAIL_CHARACTER = /^[\x21-\x7e]$/;

/** `U+200B at character 5`: a code point of an entry, named so it can be found (characters counted as code points). */
function characterAt(points: readonly string[], index: number): string {
  const point = points[index]?.codePointAt(0) ?? 0;
  return `U+${point.toString(16).toUpperCase().padStart(4, '0')} at character ${index + 1}`;
}

function invisibleCharacter(item: string): string | null {
  const points = [...item];
  const index = points.findIndex((ch) => INVISIBLE.test(ch));
  if (index !== -1) return `holds an invisible, space or control character (${characterAt(points, index)}); write the value without it`;
  if (item.startsWith(' ') || item.endsWith(' ')) return 'begins or ends with a space; write the value without it';
  return null;
}

/**
 * An allowedUsers entry: a sub value (any printable text, compared exactly) or,
 * with "@", an e-mail address in ASCII. A non-ASCII address is refused here
 * rather than compared: matching exactly (no case folding, no normalisation)
 * it would only ever admit the one spelling written, and a look-alike in the
 * list is a mistake to catch, not to honour.
 */
function allowedUserProblem(item: string): string | null {
  const invisible = invisibleCharacter(item);
  if (invisible !== null || !item.includes('@')) return invisible;
  const points = [...item];
  const index = points.findIndex((ch) => !EMAIL_CHARACTER.test(ch));
  if (index !== -1) {
    return (
      `is an email address with a character outside printable ASCII (${characterAt(points, index)}): email entries must be ASCII, ` +
      'the domain in its xn-- form (letter case is ignored in the domain for A-Z only; the local part is compared exactly); ' +
      'for an account whose address is not ASCII, list its sub value instead'
    );
  }
  const at = item.lastIndexOf('@');
  if (at === 0 || at === item.length - 1) return 'is not an email address: it needs a local part before the "@" and a domain after it (or write a sub value, without "@")';
  return null;
}
