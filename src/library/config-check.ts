// The one pass that decides whether a host's config value can run: the config
// file's checks, each TLS listener's certificate files (read with the loader
// the listeners are served from), each provider's upstream key, and the FIPS
// mode security.requireFips asks for (and the admin password it refuses).
// checkConfig returns its problems; createGateway starts from what it read, so the two
// never disagree and a host learns every problem at once. Internal: its types
// name the config model, which stays out of the public API.
import { getFips } from 'node:crypto';
import path from 'node:path';
import type { ConfigIssue } from '../api/config.ts';
import type { ProviderAdapter } from '../api/providers.ts';
import type { ProviderKeySource } from '../api/ports.ts';
import { resolveProviderKeys } from '../config/config-loader.ts';
import { ConfigError, type GatewayConfig } from '../config/config.ts';
import { parseConfig } from '../config/config-parser.ts';
import { fipsIssues } from '../config/security-config.ts';
import { hostHasKey } from '../gateway/provider-keys.ts';
import { adminPasswordFipsIssues } from './fips-start.ts';
import { loadListenerCertificates, type ListenerCertificates } from './listener-certificates.ts';
import { plainIssues } from './plain-issues.ts';

/**
 * A host's config has no file: the file paths it names (apiKeyFile, certificates)
 * resolve against baseDir as if it were a file there. The name shows in log lines
 * as the config's source, never in an issue.
 */
export function sourceInBaseDir(baseDir: string): string {
  return path.join(baseDir, 'gateway-options.config');
}

export interface ConfigCheckInput {
  /** Where the value is said to come from; relative file paths resolve against its folder. */
  readonly source: string;
  readonly baseDir: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Already checked (./provider-registry.ts). */
  readonly providerTypes: readonly ProviderAdapter[];
  readonly providerKey?: ProviderKeySource | undefined;
  /** crypto.getFips unless a test says otherwise: 1 when OpenSSL runs a FIPS provider. */
  readonly getFips?: (() => number) | undefined;
}

export type ConfigCheck =
  | { readonly ok: true; readonly config: GatewayConfig; readonly certificates: ListenerCertificates }
  | { readonly ok: false; readonly issues: ConfigIssue[] };

/**
 * The checked config and its TLS listeners' certificates (admin.tls when the
 * admin listener is enabled), or every problem: the file checks' when the value
 * does not parse, else the certificates', the upstream keys' and the FIPS
 * mode's (security.requireFips without a FIPS provider, or with a stored admin
 * password it refuses while the admin listener is enabled) together.
 */
export function checkGatewayConfig(value: unknown, input: ConfigCheckInput): ConfigCheck {
  let config: GatewayConfig;
  try {
    config = parseConfig(value, input.source, input.baseDir, { providerTypes: input.providerTypes });
  } catch (err) {
    if (err instanceof ConfigError) return { ok: false, issues: plainIssues(err.issues) };
    throw err;
  }
  const issues: ConfigIssue[] = [];
  let certificates: ListenerCertificates | undefined;
  try {
    certificates = loadListenerCertificates(config, input.env, config.admin.enabled);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    issues.push(...plainIssues(err.issues));
  }
  issues.push(...credentialIssues(config, input.env, input.providerKey));
  issues.push(...plainIssues(fipsIssues(config.security, input.getFips ?? getFips)));
  issues.push(...plainIssues(adminPasswordFipsIssues(config)));
  if (certificates === undefined || issues.length > 0) return { ok: false, issues };
  return { ok: true, config, certificates };
}

/** One issue per provider whose key cannot be found (the loader stops at the first; a host fixes them all at once). */
function credentialIssues(config: GatewayConfig, env: Readonly<Record<string, string | undefined>>, providerKey: ProviderKeySource | undefined): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const [name, provider] of Object.entries(config.providers)) {
    // The gateway asks the host's source the same way at start (src/gateway/provider-keys.ts).
    if (providerKey !== undefined && hostHasKey(providerKey, name)) continue;
    try {
      resolveProviderKeys({ ...config, providers: { [name]: provider } }, env);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      issues.push(...plainIssues(err.issues));
    }
  }
  return issues;
}
