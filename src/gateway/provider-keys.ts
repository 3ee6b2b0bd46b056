// Each provider's upstream key, from the config (apiKeyEnv, apiKeyFile) or, when
// the host gives a ProviderKeySource, from the host on every exchange with the
// config's key behind it. The host's answer is checked each time: a throw or a
// value that cannot be a key, or no key for a provider that needs one, fails that
// exchange with a generic 500 and an error log naming the provider and the
// problem, never the value: no request goes upstream without its credential.
import type { ProviderKeySource } from '../api/ports.ts';
import { resolveProviderKeys } from '../config/config-loader.ts';
import { ConfigError, type GatewayConfig, type ProviderConfig } from '../config/config.ts';
import { providerCredentials } from '../config/provider-types.ts';
import { ApiError } from '../errors/api-error.ts';
import type { Logger } from '../log/logger.ts';
import type { UpstreamKey } from '../upstream/exchange-settings.ts';

/** Visible ASCII: what an API key is made of, and what a header value may hold without quoting. */
const KEY_TEXT = /^[\x21-\x7e]+$/;

/**
 * Throws ConfigError when a provider's configured credential is missing and the
 * host's source (asked once, now) gives none for it either.
 */
export function upstreamKeys(config: GatewayConfig, env: NodeJS.ProcessEnv, source: ProviderKeySource | undefined, logger: Logger): Map<string, UpstreamKey | undefined> {
  if (source === undefined) return resolveProviderKeys(config, env);
  const keys = new Map<string, UpstreamKey | undefined>();
  for (const [name, provider] of Object.entries(config.providers)) {
    let configured: string | undefined;
    try {
      configured = resolveProviderKeys({ ...config, providers: { [name]: provider } }, env).get(name);
    } catch (error) {
      // A provider the host has a key for needs none in the config.
      if (!(error instanceof ConfigError) || !hostHasKey(source, name)) throw error;
      configured = undefined;
    }
    keys.set(name, hostKey(source, name, configured, logger, needsKey(provider)));
  }
  return keys;
}

/**
 * The key an exchange with provider `name` sends: the host's, else `configured`.
 * `required`: the provider's type needs a key (the config's credentials rule); with
 * neither the host's nor a configured one the exchange fails with a generic 500 and
 * an error log naming the provider, so no request leaves without its credential.
 */
export function hostKey(source: ProviderKeySource, name: string, configured: string | undefined, logger: Logger, required = false): () => string | undefined {
  return () => {
    let given: unknown;
    try {
      given = source(name);
    } catch (error) {
      // Only the error's name: a vault client's message may quote the key it could not use.
      logger.error('the provider key source threw; the request failed with a 500', { provider: name, error: error instanceof Error ? error.name : typeof error });
      throw new ApiError('internal_error');
    }
    if (given === undefined) {
      if (configured !== undefined || !required) return configured;
      logger.error('the provider key source gave no key and the config has none; the request failed with a 500', { provider: name });
      throw new ApiError('internal_error');
    }
    const problem = keyProblem(given);
    if (problem === null) return given as string;
    logger.error('the provider key source gave an unusable key; the request failed with a 500', { provider: name, problem });
    throw new ApiError('internal_error');
  };
}

/** What is wrong with a key the host gave, in words that never quote it; null when it is usable. */
function keyProblem(given: unknown): string | null {
  if (typeof given !== 'string') return `it returned ${given === null ? 'null' : `a ${typeof given}`}; return a string, or undefined for the config's key`;
  if (given === '') return 'it returned an empty string; return undefined for the config\'s key';
  if (!KEY_TEXT.test(given)) return 'the key holds whitespace or characters outside visible ASCII, which a header cannot carry';
  return null;
}

/** Whether the config says where this provider's key comes from (apiKeyEnv or apiKeyFile): then it needs one. */
function needsKey(provider: ProviderConfig): boolean {
  const where = providerCredentials(provider);
  return where !== null && (where.apiKeyEnv !== null || where.apiKeyFile !== null);
}

/** True when the host's source, asked once now, gives a usable key for provider `name`. */
export function hostHasKey(source: ProviderKeySource, name: string): boolean {
  try {
    return keyProblem(source(name)) === null;
  } catch {
    return false;
  }
}
