// The "security" section: whether the gateway must run on a FIPS 140-3
// provider, and which password hash new admin passwords get (docs/config.md,
// "Security"; docs/crypto.md lists every cryptographic use and what
// requireFips does with each). The start checks that need the process or the
// data directory are in ../library/fips-start.ts; this file is the schema.
import type { Checker } from './config-checker.ts';
import { ConfigIssueCode, type ConfigIssue } from './config-issues.ts';

export const PASSWORD_HASH_SETTINGS = ['scrypt', 'pbkdf2-sha256'] as const;
export type PasswordHashSetting = (typeof PASSWORD_HASH_SETTINGS)[number];

export interface SecurityConfig {
  /** Start only when OpenSSL runs a FIPS provider (crypto.getFips() === 1), and refuse what FIPS 140-3 does not approve. */
  requireFips: boolean;
  /** The scheme of hashes new admin passwords get; verification reads both. */
  passwordHash: PasswordHashSetting;
}

export const DEFAULT_SECURITY: SecurityConfig = { requireFips: false, passwordHash: 'scrypt' };

export function parseSecurity(c: Checker, value: unknown): SecurityConfig {
  if (value === undefined) return { ...DEFAULT_SECURITY };
  const o = c.object(value, 'security', ['requireFips', 'passwordHash']);
  if (o === undefined) return { ...DEFAULT_SECURITY };
  const requireFips = c.optional(o, 'requireFips', 'security', false, (v, at) => c.boolean(v, at));
  // Under requireFips the approved scheme is the default, and scrypt is a mistake to name.
  const fallback: PasswordHashSetting = requireFips ? 'pbkdf2-sha256' : 'scrypt';
  const passwordHash = c.optional(o, 'passwordHash', 'security', fallback, (v, at) => c.oneOf(v, at, PASSWORD_HASH_SETTINGS));
  if (requireFips && passwordHash === 'scrypt') {
    c.report('security.passwordHash', {
      code: 'conflict',
      message: 'scrypt is not a FIPS 140-3 approved algorithm: set "pbkdf2-sha256" (or leave it out) while security.requireFips is true',
    });
  }
  return { requireFips, passwordHash };
}

/**
 * The issue of a config that requires FIPS on a process without it, [] otherwise.
 * `getFips` is crypto.getFips in production: 1 when OpenSSL runs a FIPS provider.
 */
export function fipsIssues(security: SecurityConfig, getFips: () => number): ConfigIssue[] {
  if (!security.requireFips || getFips() === 1) return [];
  return [
    {
      code: ConfigIssueCode.FipsUnavailable,
      path: 'security.requireFips',
      message:
        'is true, but OpenSSL runs without a FIPS provider (crypto.getFips() is 0): start node with --enable-fips and an OpenSSL ' +
        'configuration that loads a validated FIPS provider (docs/crypto.md), or set security.requireFips to false',
    },
  ];
}
