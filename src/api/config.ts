// The public shape of a config problem and of checkConfig's options. Public
// type declarations only: this file imports nothing from src/ but src/api/, so
// the API report shows the whole contract and nothing internal leaks into it.
import type { ProviderKeySource } from './ports.ts';
import type { ProviderAdapter } from './providers.ts';

/** The config value a host passes: the same JSON shape as the config file (docs/config.md). */
export type GatewayConfigInput = unknown;

/**
 * What kind of problem a setting has; stable across releases (a new code is an
 * API change). `unreadable`: the config itself (missing, unreadable, too large,
 * not JSON); `unknown_reference`: names a provider or alias the config does not
 * define; `conflict`: two settings that exclude each other, one that must
 * differ from another, or a setting and a file it refuses (security.requireFips
 * and an admin.json password stored with scrypt); `missing_credential`: an upstream key (apiKeyEnv,
 * apiKeyFile) or Redis password that cannot be found; `invalid_tls_file`: a
 * certificate, key or CA file that is missing, unreadable, not valid PEM,
 * mismatched or out of date; `fips_unavailable`: security.requireFips is true
 * and the process runs without a FIPS provider (crypto.getFips() is 0).
 */
export type ConfigIssueCode =
  | 'unreadable'
  | 'not_object'
  | 'unknown_setting'
  | 'required'
  | 'not_string'
  | 'not_integer'
  | 'not_boolean'
  | 'not_one_of'
  | 'not_array'
  | 'too_many'
  | 'unknown_reference'
  | 'conflict'
  | 'invalid_name'
  | 'reserved'
  | 'invalid_value'
  | 'missing_credential'
  | 'invalid_tls_file'
  | 'fips_unavailable';

/** One problem in a config: every problem is reported, so a config is fixed in one pass. */
export interface ConfigIssue {
  readonly code: ConfigIssueCode;
  /** The setting, as in `aliases.service-chat.targets[1].provider`; empty for the config as a whole. */
  readonly path: string;
  /** What is wrong and what to change; never quotes a secret. */
  readonly message: string;
}

/** Where checkConfig looks for what the config names. */
export interface CheckConfigOptions {
  /** Resolves relative paths in the config (dataDir, apiKeyFile, certificates). Default: process.cwd(). */
  readonly baseDir?: string;
  /** The environment apiKeyEnv and the other *Env settings read. Default: process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Provider types the config's providers may name besides the built-in ones (as GatewayOptions.providerTypes). */
  readonly providerTypes?: readonly ProviderAdapter[];
  /**
   * The host's upstream keys (as GatewayOptions.providerKey), asked once per
   * provider: one it answers with a usable key needs no apiKeyEnv or apiKeyFile;
   * undefined leaves the config's rules.
   */
  readonly providerKey?: ProviderKeySource;
}
